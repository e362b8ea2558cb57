#pragma once

#include <cstddef>
#include <string_view>

namespace kjit {

/// Levenshtein edit distance (insert, delete, substitute: 1 each); what every "did you mean"
/// of kjit (flags, lint, sweeps) is built on.
std::size_t edit_distance(std::string_view a, std::string_view b);

} // namespace kjit
