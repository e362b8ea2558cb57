#include "lint/macros.hpp"

#include "lint/evaluate.hpp"

#include <algorithm>
#include <deque>
#include <memory>

namespace kjit::lint {

namespace {

// The names that may not expand at a token, as a shared list: adding one is O(1).
struct HideNode {
    std::string name;
    std::shared_ptr<const HideNode> next;
};
using Hide = std::shared_ptr<const HideNode>;

// A token with the names that may not expand at it: those whose expansion produced it.
struct Tok {
    std::string text;
    Hide hide;
};

bool hidden(const Tok& t) {
    for (const HideNode* n = t.hide.get(); n; n = n->next.get())
        if (n->name == t.text)
            return true;
    return false;
}

Hide with(const Hide& h, const std::string& name) {
    return std::make_shared<const HideNode>(HideNode{name, h});
}

std::string stringize(const std::vector<Tok>& arg) {
    std::string s = "\"";
    for (std::size_t i = 0; i < arg.size(); ++i) {
        if (i)
            s += ' ';
        for (const char c : arg[i].text) {
            if (c == '"' || c == '\\')
                s += '\\';
            s += c;
        }
    }
    return s + "\"";
}

class Expander {
  public:
    Expander(const Macros& macros, bool condition) : macros_(macros), condition_(condition) {}

    std::optional<std::vector<std::string>> run(std::span<const std::string> tokens) {
        std::deque<Tok> in;
        for (const auto& t : tokens)
            in.push_back({t, nullptr});
        auto out = expand(std::move(in), 0);
        if (failed_)
            return std::nullopt;
        std::vector<std::string> texts;
        texts.reserve(out.size());
        for (auto& t : out)
            texts.push_back(std::move(t.text));
        return texts;
    }

  private:
    static constexpr int kMaxDepth = 64;

    // Copies the token at the front of `in`, and through its matching ')' when it is '('.
    static void copy_operand(std::deque<Tok>& in, std::vector<Tok>& out) {
        if (in.empty())
            return;
        const bool paren = in.front().text == "(";
        int depth = 0;
        do {
            depth += in.front().text == "(" ? 1 : in.front().text == ")" ? -1 : 0;
            out.push_back(std::move(in.front()));
            in.pop_front();
        } while (paren && depth > 0 && !in.empty());
    }

    std::vector<Tok> expand(std::deque<Tok> in, int depth) {
        std::vector<Tok> out;
        if (depth > kMaxDepth) {
            failed_ = true;
            return out;
        }
        while (!in.empty() && !failed_) {
            if (++steps_ > kBudget) {
                failed_ = true;
                break;
            }
            Tok t = std::move(in.front());
            in.pop_front();
            if (condition_ && (t.text == "defined" || is_has_operator(t.text))) {
                // `defined X`, `defined(X)`, `__has_include(<x>)`: operands are not expanded.
                out.push_back(std::move(t));
                if (!in.empty() && out.back().text == "defined" && in.front().text == "(") {
                    for (int k = 0; k < 3 && !in.empty(); ++k) {
                        out.push_back(std::move(in.front()));
                        in.pop_front();
                    }
                } else {
                    copy_operand(in, out);
                }
                continue;
            }
            const auto it = is_identifier(t.text) ? macros_.find(t.text) : macros_.end();
            if (it == macros_.end() || hidden(t)) {
                out.push_back(std::move(t));
                continue;
            }
            const Macro& m = it->second;
            if (m.function_like && (in.empty() || in.front().text != "(")) {
                out.push_back(std::move(t)); // a function-like name without a call
                continue;
            }
            std::vector<std::vector<Tok>> args;
            if (m.function_like && !collect_args(in, m, args))
                return out;
            if (m.opaque) {
                out.push_back({std::string(kUnknownToken), nullptr});
                continue;
            }
            const Hide hide = with(t.hide, t.text);
            std::vector<Tok> replaced = m.function_like ? substitute(m, args, depth)
                                                        : std::vector<Tok>{};
            if (!m.function_like)
                for (const auto& b : m.body)
                    replaced.push_back({b, nullptr});
            // A token of the body takes the call's hidden names and the macro's own; one that
            // came from an argument (expanded already, with its own) takes the macro's.
            for (auto r = replaced.rbegin(); r != replaced.rend(); ++r) {
                r->hide = r->hide ? with(r->hide, t.text) : hide;
                in.push_front(std::move(*r));
            }
        }
        return out;
    }

    // The arguments of a call whose '(' is at the front of `in`; false (and failed) when the
    // call is unterminated or has the wrong number of arguments.
    bool collect_args(std::deque<Tok>& in, const Macro& m, std::vector<std::vector<Tok>>& args) {
        in.pop_front();
        args.emplace_back();
        int depth = 1;
        while (!in.empty()) {
            Tok t = std::move(in.front());
            in.pop_front();
            if (t.text == "(")
                ++depth;
            if (t.text == ")" && --depth == 0)
                break;
            if (t.text == "," && depth == 1 && !(m.variadic && args.size() == m.params.size())) {
                args.emplace_back();
                continue;
            }
            args.back().push_back(std::move(t));
        }
        if (depth != 0) {
            failed_ = true;
            return false;
        }
        if (m.params.empty() && args.size() == 1 && args[0].empty())
            args.clear();
        if (m.variadic && args.size() + 1 == m.params.size())
            args.emplace_back();
        if (args.size() != m.params.size()) {
            failed_ = true;
            return false;
        }
        return true;
    }

    std::vector<Tok> substitute(const Macro& m, const std::vector<std::vector<Tok>>& args,
                                int depth) {
        auto param = [&](const std::string& s) -> int {
            const auto p = std::find(m.params.begin(), m.params.end(), s);
            return p == m.params.end() ? -1 : static_cast<int>(p - m.params.begin());
        };
        std::vector<Tok> out;
        bool paste = false;
        auto emit = [&](std::vector<Tok> toks) {
            if (paste && !toks.empty() && !out.empty()) {
                out.back().text += toks.front().text;
                toks.erase(toks.begin());
            }
            paste = false;
            for (auto& t : toks)
                out.push_back(std::move(t));
        };
        const auto& b = m.body;
        for (std::size_t i = 0; i < b.size(); ++i) {
            if (b[i] == "##") {
                paste = true;
                continue;
            }
            if (b[i] == "#" && i + 1 < b.size() && param(b[i + 1]) >= 0) {
                emit({{stringize(args[static_cast<std::size_t>(param(b[++i]))]), nullptr}});
                continue;
            }
            const int p = param(b[i]);
            if (p < 0) {
                emit({{b[i], nullptr}});
                continue;
            }
            const auto& arg = args[static_cast<std::size_t>(p)];
            const bool raw = paste || (i + 1 < b.size() && b[i + 1] == "##");
            if (raw) {
                emit(arg);
                continue;
            }
            emit(expand(std::deque<Tok>(arg.begin(), arg.end()), depth + 1));
        }
        return out;
    }

    static constexpr std::size_t kBudget = 200000;
    const Macros& macros_;
    bool condition_;
    bool failed_ = false;
    std::size_t steps_ = 0;
};

// The header name of a `__has_include` operand ("x.h" or <x.h> as tokens), or nullopt.
std::optional<std::pair<std::string, bool>> header_operand(const std::vector<std::string>& t,
                                                           std::size_t begin, std::size_t end) {
    if (begin >= end)
        return std::nullopt;
    const std::string& first = t[begin];
    if (end - begin == 1 && first.size() >= 2 && first.front() == '"' && first.back() == '"')
        return std::pair{first.substr(1, first.size() - 2), false};
    if (first == "<" && t[end - 1] == ">") {
        std::string name;
        for (std::size_t k = begin + 1; k + 1 < end; ++k)
            name += t[k];
        return std::pair{name, true};
    }
    return std::nullopt;
}

} // namespace

std::optional<std::pair<std::string, Macro>> parse_define(const Directive& d) {
    if (d.args.empty() || !is_identifier(d.args[0].text))
        return std::nullopt;
    Macro m;
    std::size_t i = 1;
    if (d.args.size() > 1 && d.args[1].text == "(" && !d.args[1].spaced) {
        m.function_like = true;
        auto dots = [&](std::size_t k) {
            return k + 2 < d.args.size() && d.args[k].text == "." && d.args[k + 1].text == "." &&
                   d.args[k + 2].text == ".";
        };
        for (i = 2; i < d.args.size() && d.args[i].text != ")"; ++i) {
            const std::string& a = d.args[i].text;
            if (a == ",")
                continue;
            if (dots(i)) { // `...`: the scanner reads three dots
                m.variadic = true;
                m.params.emplace_back("__VA_ARGS__");
                i += 2;
            } else if (dots(i + 1)) { // `args...` (GNU)
                m.variadic = true;
                m.params.push_back(a);
                i += 3;
            } else {
                m.params.push_back(a);
            }
        }
        ++i;
    }
    for (; i < d.args.size(); ++i)
        m.body.push_back(d.args[i].text);
    return std::pair{d.args[0].text, std::move(m)};
}

std::optional<std::vector<std::string>> expand(std::span<const std::string> tokens,
                                               const Macros& macros, bool condition) {
    return Expander(macros, condition).run(tokens);
}

std::string_view alternative_operator(std::string_view token) {
    static const std::map<std::string_view, std::string_view> kAlternatives = {
        {"and", "&&"}, {"or", "||"},    {"not", "!"},    {"bitand", "&"}, {"bitor", "|"},
        {"xor", "^"},  {"compl", "~"}, {"not_eq", "!="}, {"and_eq", "&="}, {"or_eq", "|="},
        {"xor_eq", "^="}};
    const auto it = kAlternatives.find(token);
    return it == kAlternatives.end() ? std::string_view{} : it->second;
}

bool is_has_operator(std::string_view name) {
    return name == "__has_include" || name == "__has_include_next" || name == "__has_builtin" ||
           name == "__has_attribute" || name == "__has_cpp_attribute" ||
           name == "__has_feature" || name == "__has_extension" || name == "__is_identifier" ||
           name == "__has_declspec_attribute" || name == "__has_c_attribute";
}

std::optional<long long> evaluate_condition(std::span<const std::string> tokens,
                                            const Macros& macros, const HasInclude& has_include) {
    const auto expanded = expand(tokens, macros, true);
    if (!expanded)
        return std::nullopt;
    const auto& t = *expanded;
    std::vector<std::string> out;
    out.reserve(t.size());
    for (std::size_t i = 0; i < t.size(); ++i) {
        if (t[i] == "defined") {
            std::size_t k = i + 1;
            const bool paren = k < t.size() && t[k] == "(";
            if (paren)
                ++k;
            if (k >= t.size() || !is_identifier(t[k]) || (paren && (k + 1 >= t.size() ||
                                                                    t[k + 1] != ")")))
                return std::nullopt;
            const auto it = macros.find(t[k]);
            out.emplace_back(it == macros.end()  ? "0"
                             : it->second.opaque ? std::string(kUnknownToken)
                                                 : "1");
            i = paren ? k + 1 : k;
            continue;
        }
        if (is_has_operator(t[i])) {
            if (i + 1 >= t.size() || t[i + 1] != "(")
                return std::nullopt;
            std::size_t close = i + 1;
            for (int depth = 0; close < t.size(); ++close) {
                depth += t[close] == "(" ? 1 : t[close] == ")" ? -1 : 0;
                if (depth == 0)
                    break;
            }
            if (close >= t.size())
                return std::nullopt;
            std::optional<bool> found;
            if (t[i] == "__has_include" || t[i] == "__has_include_next")
                if (const auto h = header_operand(t, i + 2, close); h && has_include)
                    found = has_include(h->first, h->second);
            out.emplace_back(!found ? std::string(kUnknownToken) : *found ? "1" : "0");
            i = close;
            continue;
        }
        const std::string_view alt = alternative_operator(t[i]);
        out.emplace_back(alt.empty() ? t[i] : std::string(alt));
    }
    return evaluate_expanded(std::move(out));
}

} // namespace kjit::lint
