#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kjit {

/// Levenshtein edit distance (insert, delete, substitute: 1 each).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidates closest to `typed` (ties all named, in candidate order), or none when
/// nothing is close: within max(3, a third of the name after `prefix_len` characters) and
/// short of rewriting the whole name. Case-insensitive and word-aware over '_': a word may
/// stand for a run of words by their initials (BI for BATCH_INVARIANT). The first
/// `prefix_len` characters (a shared prefix such as "KJIT_") are not compared.
std::vector<std::string> nearest(std::string_view typed, const std::vector<std::string>& candidates,
                                 std::size_t prefix_len = 0);

/// The parts joined with `sep`: "a, b, c" (any range of strings).
template <class Range>
std::string join(const Range& parts, std::string_view sep = ", ") {
    std::string out;
    bool first = true;
    for (const auto& part : parts) {
        if (!first)
            out += sep;
        out += part;
        first = false;
    }
    return out;
}

/// An entry point's symbol as C++ names it: "blas::axpy" for _ZN4blas4axpyEPfPKffi,
/// "ts::scale<float>" for a template's instantiation; an unmangled symbol as it is.
std::string readable_entry(const std::string& symbol);

/// What follows "has no entry point 'ENTRY'" for a module of `symbols`: the nearest entry
/// points as C++ names them (else each whose name without its namespaces is `entry`), then
/// every entry point, sorted: "; did you mean blas::axpy? (entry points: blas::axpy
/// (_ZN4blas4axpyEPfPKffi), scale)".
std::string missing_entry_hint(std::string_view entry, const std::vector<std::string>& symbols);

/// "; did you mean A?", "; did you mean A or B?", "; did you mean A, B or C?", or "" for none.
std::string did_you_mean(const std::vector<std::string>& names);

} // namespace kjit
