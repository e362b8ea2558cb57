#pragma once

#include <cstddef>
#include <string_view>

namespace kjit {

/// The element type of a kernel's buffer.
enum class DType { f32, bf16 };

/// "f32" or "bf16".
std::string_view dtype_name(DType dtype);
/// The dtype named `name`; ConfigError naming the known ones otherwise.
DType parse_dtype(std::string_view name);
/// Bytes per element.
std::size_t dtype_size(DType dtype);

} // namespace kjit
