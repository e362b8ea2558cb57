#include "jit/compile_options.hpp"

#include "core/error.hpp"
#include "jit/toolkit.hpp"

#include <cctype>
#include <filesystem>
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

/// What is wrong with a define's value, or "".
std::string value_problem(const std::string& value) {
    if (value.find_first_of("\n\r") != std::string::npos)
        return "the value contains a line break";
    if (value.find('\0') != std::string::npos)
        return "the value contains a NUL character";
    return {};
}

} // namespace

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
        if (const std::string problem = value_problem(value); !problem.empty())
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
    if (const std::string problem = value_problem(value); !problem.empty())
        throw ConfigError("bad define '" + name + "': " + problem);
    defines[name] = value;
}

} // namespace kjit
