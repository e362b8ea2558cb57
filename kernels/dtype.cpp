#include "kernels/dtype.hpp"

#include "core/error.hpp"

#include <string>

namespace kjit {

std::string_view dtype_name(DType dtype) {
    switch (dtype) {
    case DType::f32:
        return "f32";
    case DType::bf16:
        return "bf16";
    }
    return "?";
}

DType parse_dtype(std::string_view name) {
    for (DType d : {DType::f32, DType::bf16})
        if (dtype_name(d) == name)
            return d;
    throw ConfigError("unknown dtype '" + std::string(name) + "' (known: f32, bf16)");
}

std::size_t dtype_size(DType dtype) {
    return dtype == DType::bf16 ? 2 : 4;
}

} // namespace kjit
