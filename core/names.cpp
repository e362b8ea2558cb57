#include "core/names.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cxxabi.h>
#include <memory>

namespace kjit {

namespace {

std::string upper(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

std::vector<std::string> words(std::string_view s) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (c == '_') {
            if (!cur.empty())
                out.push_back(std::move(cur));
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty())
        out.push_back(std::move(cur));
    return out;
}

/// Edit distance over words: a word costs its own edit distance to the word it is aligned
/// with, or 1 when it abbreviates a run of two or more words by their initials (BI for
/// BATCH_INVARIANT, TC for TENSOR_CORES), so a name that swaps spelled-out and abbreviated
/// words is still found near the one meant.
std::size_t word_distance(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    const std::size_t n = a.size(), m = b.size();
    std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1, 0));
    // A word inserted or dropped costs its letters and its '_'.
    for (std::size_t i = 1; i <= n; ++i)
        d[i][0] = d[i - 1][0] + a[i - 1].size() + 1;
    for (std::size_t j = 1; j <= m; ++j)
        d[0][j] = d[0][j - 1] + b[j - 1].size() + 1;
    auto initials = [](const std::vector<std::string>& w, std::size_t from, std::size_t to) {
        std::string s;
        for (std::size_t k = from; k < to; ++k)
            s += w[k][0];
        return s;
    };
    for (std::size_t i = 1; i <= n; ++i)
        for (std::size_t j = 1; j <= m; ++j) {
            std::size_t best =
                std::min({d[i - 1][j] + a[i - 1].size() + 1, d[i][j - 1] + b[j - 1].size() + 1,
                          d[i - 1][j - 1] + edit_distance(a[i - 1], b[j - 1])});
            for (std::size_t k = 2; k <= j; ++k)
                if (a[i - 1] == initials(b, j - k, j))
                    best = std::min(best, d[i - 1][j - k] + 1);
            for (std::size_t k = 2; k <= i; ++k)
                if (b[j - 1] == initials(a, i - k, i))
                    best = std::min(best, d[i - k][j - 1] + 1);
            d[i][j] = best;
        }
    return d[n][m];
}

std::size_t name_distance(std::string_view a, std::string_view b) {
    const std::string ua = upper(a), ub = upper(b);
    return std::min(edit_distance(ua, ub), word_distance(words(ua), words(ub)));
}

} // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j)
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::vector<std::string> nearest(std::string_view typed, const std::vector<std::string>& candidates,
                                 std::size_t prefix_len) {
    const std::string_view suffix = typed.substr(std::min(prefix_len, typed.size()));
    const std::size_t limit = std::max<std::size_t>(3, suffix.size() / 3);
    std::size_t best = limit + 1;
    std::vector<std::string> out;
    for (const auto& c : candidates) {
        const std::string_view other =
            std::string_view(c).substr(std::min(prefix_len, c.size()));
        const std::size_t dist = name_distance(suffix, other);
        if (dist >= std::max(suffix.size(), other.size()))
            continue;
        if (dist < best) {
            best = dist;
            out.clear();
        }
        if (dist == best)
            out.push_back(c);
    }
    return out;
}

std::string did_you_mean(const std::vector<std::string>& names) {
    if (names.empty())
        return {};
    std::string s = "; did you mean " + names[0];
    for (std::size_t i = 1; i < names.size(); ++i)
        s += (i + 1 == names.size() ? " or " : ", ") + names[i];
    return s + "?";
}

std::string readable_entry(const std::string& symbol) {
    // Only a C++ symbol: an extern "C" name `f` or `x` is no mangled type ("float").
    if (!symbol.starts_with("_Z"))
        return symbol;
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> text(
        abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), std::free);
    if (status != 0 || !text)
        return symbol;
    std::string name = text.get();
    // "void ns::f<float>(float*, int)": the parameters and a template's return type dropped.
    if (name.ends_with(")")) {
        int depth = 0;
        for (std::size_t i = name.size(); i-- > 0;) {
            depth += name[i] == ')' ? 1 : name[i] == '(' ? -1 : 0;
            if (depth == 0) {
                name.erase(i);
                break;
            }
        }
    }
    if (name.starts_with("void "))
        name.erase(0, 5);
    return name;
}

std::string missing_entry_hint(std::string_view entry, const std::vector<std::string>& symbols) {
    std::vector<std::string> names, listed;
    for (const std::string& symbol : symbols) {
        names.push_back(readable_entry(symbol));
        listed.push_back(names.back() == symbol ? symbol : names.back() + " (" + symbol + ")");
    }
    std::sort(listed.begin(), listed.end());
    std::vector<std::string> near = nearest(entry, names);
    if (near.empty()) // the name without its namespaces: every kernel of that name
        for (const std::string& n : names)
            if (n.ends_with("::" + std::string(entry)))
                near.push_back(n);
    return did_you_mean(near) + " (entry points: " + join(listed) + ")";
}

} // namespace kjit
