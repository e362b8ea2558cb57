#pragma once

#include "kernels/contract.hpp"

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kjit {

/// A case's shape: named integers ("rows" -> 8192).
using ShapeValues = std::map<std::string, std::int64_t>;

/// Parses "rows=8192,n=7168" against the contract's keys; ConfigError on an unknown, missing
/// or repeated key, or a value that is not a positive 32-bit integer.
ShapeValues parse_shape(const KernelContract& contract, std::string_view text);
/// "rows=8192,n=7168", keys in the contract's order: the form baselines store.
std::string shape_text(const KernelContract& contract, const ShapeValues& shape);
/// Splits "rows=1,n=7168;rows=4096,n=7168" at ';' (empty parts dropped).
std::vector<std::string> split_shapes(std::string_view text);

/// `base` with every NAME=VALUE of `overrides` set; ConfigError on a bad assignment.
Defines merge_defines(Defines base, std::span<const std::string> overrides);
/// "NAME=VALUE NAME=VALUE" or "(none)".
std::string defines_text(const Defines& defines);

} // namespace kjit
