#include "jit/compile_options.hpp"

#include "core/error.hpp"
#include "jit/source_lines.hpp"
#include "jit/toolkit.hpp"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string_view>

namespace kjit {

std::string CompileOptions::target() const {
    return check_only ? "compute_" + arch.substr(3) : arch;
}

std::vector<std::string> CompileOptions::argv() const {
    std::vector<std::string> out;
    out.push_back("--gpu-architecture=" + target());
    if (check_only)
        out.emplace_back("-G");
    out.push_back("-std=" + std);
    out.push_back(std::string("--fmad=") + (fmad ? "true" : "false"));
    if (fast_math)
        out.emplace_back("--use_fast_math");
    if (lineinfo && !check_only) // -G has the line table already
        out.emplace_back("-lineinfo");
    for (const auto& dir : include_dirs)
        out.push_back("-I" + dir);
    for (const auto& dir : toolkit_include_dirs)
        out.push_back("-I" + dir);
    for (const auto& [name, value] : defines)
        out.push_back("-D" + name + "=" + value);
    out.insert(out.end(), extra.begin(), extra.end());
    return out;
}

std::vector<std::string> CompileOptions::toolkit_dirs() const {
    if (!toolkit_include_dirs.empty() || !toolkit_headers)
        return toolkit_include_dirs;
    return default_toolkit_include_dirs();
}

std::string CompileOptions::defines_text() const {
    std::string s;
    for (const auto& [name, value] : defines)
        s += (s.empty() ? "" : " ") + name + "=" + value;
    return s.empty() ? "(none)" : s;
}

namespace {

bool is_identifier(const std::string& name) {
    bool ok = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
    for (char c : name)
        ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    return ok;
}

} // namespace

std::string define_value_problem(const std::string& name, const std::string& value) {
    if (value.find_first_of("\n\r") != std::string::npos)
        return "the value contains a line break";
    if (value.find('\0') != std::string::npos)
        return "the value contains a NUL character";
    // C reads the integer 010 as octal (8); kjit's expressions (a contract's grid, a
    // precondition) as 10. 00 - 07 mean the same to both, a floating 01.5 is decimal to C too.
    const LogicalSource source(value);
    for (const LogicalLine& line : source.lines())
        for (const Token& t : line.tokens) {
            const std::string n(t.text.substr(0, t.text.find_first_of("uUlL")));
            if (t.kind != Token::Kind::number || n.size() < 2 || n[0] != '0' ||
                n.find_first_not_of("0123456789") != std::string::npos ||
                std::strtoll(n.c_str(), nullptr, 10) < 8)
                continue;
            return "the value '" + value + "' has the integer " + std::string(t.text) +
                   ", octal in C++ (" +
                   (n.find_first_of("89") == std::string::npos
                        ? n + " = " + std::to_string(std::strtoll(n.c_str(), nullptr, 8))
                        : "where it is no number") +
                   ") and decimal in kjit's expressions, so the kernel and its launch would "
                   "disagree; write it without the leading zero";
        }
    if (const std::string op = open_operator(value); op == ",")
        return "the value '" + value +
               "' has a comma outside parentheses and template brackets: a define expands as "
               "text, so `__launch_bounds__(" +
               name + ")` would read two arguments and `x * " + name +
               "` a comma expression; give one value";
    else if (!op.empty())
        return "the value '" + value + "' is an expression with '" + op +
               "' outside parentheses: a define expands as text, so the source's own " + name +
               " / 2 would read '" + value + " / 2'; write " + name + "=(" + value + ")";
    return {};
}

/// The first binary arithmetic operator of `value` outside parentheses (`${...}` an operand),
/// e.g. "+" of "${block} + 256"; "" when there is none. A macro expands as text, so such a
/// value changes meaning inside the source's own expressions (`BLOCK / 32`).
std::string open_operator(std::string_view value) {
    std::string text; // each ${...} an operand
    for (std::size_t i = 0; i < value.size();) {
        if (value.compare(i, 2, "${") == 0) {
            const std::size_t end = value.find('}', i);
            i = end == std::string_view::npos ? value.size() : end + 1;
            text += '0';
        } else {
            text += value[i++];
        }
    }
    const LogicalSource source(text);
    std::vector<Token> tokens;
    for (const LogicalLine& line : source.lines())
        tokens.insert(tokens.end(), line.tokens.begin(), line.tokens.end());
    int depth = 0;
    bool operand = false; // whether the token before is an operand
    // A lone `<` may open a template's arguments (`cond<USE_BF16 == 1, float, int>::type`),
    // inside which a comparison or `?:` is no open operator: after one, only arithmetic counts.
    bool bracket = false;
    int angle = 0; // lone `<` not yet closed by a `>` (outside parentheses)
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        const std::string_view t = tokens[i].text;
        if (tokens[i].kind != Token::Kind::punctuator) {
            operand = true;
            continue;
        }
        if (t == "(" || t == "[" || t == "{") {
            ++depth;
            operand = false;
            continue;
        }
        if (t == ")" || t == "]" || t == "}") {
            --depth;
            operand = true;
            continue;
        }
        // Outside template brackets (`Vec<float, 4>`), a comma separates two values.
        if (t == "," && depth == 0 && angle == 0)
            return ",";
        std::string op(t);
        const bool joined = i + 1 < tokens.size() && tokens[i + 1].text.data() == t.data() + 1;
        if ((t == "<" || t == ">" || t == "&" || t == "|") && joined && tokens[i + 1].text == t)
            op += tokens[++i].text;
        else if ((t == "=" || t == "!" || t == "<" || t == ">") && joined &&
                 tokens[i + 1].text == "=")
            op += tokens[++i].text;
        // A comparison and `?:` too (`N > 4 ? 8 : 4` / 2 reads `N > 4 ? 8 : 2`); a lone `<` or
        // `>` is a template's bracket as often (`Vec<float, 4>`).
        bracket = bracket || (op == "<" && depth == 0);
        if (depth == 0 && op == "<") {
            ++angle;
        } else if (depth == 0 && op == ">") {
            // A `>` with no `<` before it closes no template's arguments: a comparison.
            if (angle == 0 && operand)
                return op;
            angle = std::max(angle - 1, 0);
        } else if (depth == 0 && op == ">>" && angle >= 2) {
            angle -= 2; // two templates' arguments closed (`Vec<Vec<int, 2>>`)
            operand = true;
            continue;
        }
        const bool comparison = op == "==" || op == "!=" || op == "<=" || op == ">=" || op == "?";
        const bool arithmetic = op == "+" || op == "-" || op == "*" || op == "/" || op == "%" ||
                                op == "<<" || op == ">>" || op == "&" || op == "|" || op == "^" ||
                                op == "&&" || op == "||" || (comparison && !bracket);
        // Binary: an operand on each side (`float*` and `-1` are no such thing, nor a
        // qualified pointer `float* __restrict__`; after `)` a sign may follow a cast,
        // `(unsigned)-1`).
        static const std::set<std::string_view> qualifiers = {"const", "volatile", "restrict",
                                                              "__restrict", "__restrict__"};
        // A cast: `(` ... `)` of names and `* & : < > ,` only (no number: `(0) - 1` is no cast).
        bool after_cast = false;
        if (i > 0 && tokens[i - 1].text == ")") {
            std::size_t k = i - 1;
            after_cast = true;
            while (k > 0 && tokens[k - 1].text != "(") {
                const Token& in = tokens[--k];
                const std::string_view x = in.text;
                if (in.kind != Token::Kind::identifier && x != "*" && x != "&" && x != ":" &&
                    x != "<" && x != ">" && x != ",")
                    after_cast = false;
            }
            after_cast = after_cast && k > 0 && k + 1 < i; // a `(` found, something inside
        }
        if (arithmetic && operand && depth == 0 && i + 1 < tokens.size()) {
            const Token& next = tokens[i + 1];
            const bool qualifier = (op == "*" || op == "&") && qualifiers.contains(next.text);
            const bool sign = op == "+" || op == "-";
            if (!qualifier && !(after_cast && sign) &&
                (next.kind != Token::Kind::punctuator || next.text == "(" || next.text == "-" ||
                 next.text == "+" || next.text == "~" || next.text == "!"))
                return op;
        }
        operand = false;
    }
    // A `<` that no `>` closes opens no template's arguments: a comparison (`1<2`).
    return angle > 0 ? "<" : "";
}

bool is_real_arch(const std::string& arch) {
    if (!arch.starts_with("sm_"))
        return false;
    std::size_t digits = 0;
    while (3 + digits < arch.size() && std::isdigit(static_cast<unsigned char>(arch[3 + digits])))
        ++digits;
    const std::string_view rest = std::string_view(arch).substr(3 + digits);
    return digits > 0 && digits <= 4 && (rest.empty() || rest == "a" || rest == "f");
}

std::string arch_problem(const std::string& arch) {
    if (arch.starts_with("compute_"))
        return "architecture '" + arch +
               "' is virtual: it has no machine code, and NVRTC returns an empty CUBIN for it; "
               "name a real one (sm_" +
               arch.substr(8) + ")";
    if (!is_real_arch(arch))
        return "bad architecture '" + arch + "': expected sm_NN (sm_90, sm_90a)";
    return {};
}

void CompileOptions::check() const {
    if (const std::string problem = arch_problem(arch); !problem.empty())
        throw ConfigError(problem);
    for (const auto& [name, value] : defines) {
        if (!is_identifier(name))
            throw ConfigError("bad define '" + name + "=" + value +
                              "': expected NAME=VALUE with NAME a C identifier");
        if (const std::string problem = define_value_problem(name, value); !problem.empty())
            throw ConfigError("bad define '" + name + "': " + problem);
    }
    for (const auto& dir : include_dirs) {
        std::error_code ec;
        if (!std::filesystem::is_directory(dir, ec))
            throw ConfigError("include directory does not exist or is not a directory", dir);
    }
}

std::pair<std::string, std::string> split_define(const std::string& assignment) {
    const auto eq = assignment.find('=');
    return {assignment.substr(0, eq), eq == std::string::npos ? "1" : assignment.substr(eq + 1)};
}

void add_define(std::map<std::string, std::string>& defines, const std::string& assignment) {
    const auto [name, value] = split_define(assignment);
    if (!is_identifier(name))
        throw ConfigError("bad define '" + assignment +
                          "': expected NAME=VALUE with NAME a C identifier");
    if (const std::string problem = define_value_problem(name, value); !problem.empty())
        throw ConfigError("bad define '" + name + "': " + problem);
    defines[name] = value;
}

} // namespace kjit
