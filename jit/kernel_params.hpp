#pragma once
// What each entry point of a compiled kernel takes, read from the PTX NVRTC produced: the
// `.param` list of every `.entry`. PTX tells an integer from a floating-point value and gives
// each parameter's width (an aggregate's size and alignment); it does not tell `int` from
// `unsigned`, nor (without a `.ptr` attribute) a pointer from a 64-bit integer.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kjit {

/// What a kernel parameter holds, as far as its PTX type says.
enum class ParamKind {
    integer,  ///< .u8 .. .u64, .s8 .. .s64, .b8 .. .b64 (a pointer is a .u64 too)
    floating, ///< .f16 .f32 .f64
    pointer,  ///< a .u64 with the `.ptr` attribute
    bytes     ///< an aggregate: `.align A .b8 name[N]` (a struct, __half, __nv_bfloat16, ...)
};

/// One parameter of an entry point.
struct ParamType {
    ParamKind kind = ParamKind::bytes;
    std::size_t size = 0;  ///< bytes
    std::size_t align = 0; ///< bytes
    std::string name{};    ///< the source's name where known (PTX does not keep it); "" else
    /// The PTX spelling: "u32", "f32", "u64.ptr", "b8[8]@4".
    [[nodiscard]] std::string ptx() const;
    /// For people: "32-bit integer (.u32)", "8-byte aggregate (.b8[8], align 4)".
    [[nodiscard]] std::string describe() const;
    friend bool operator==(const ParamType&, const ParamType&) = default;
};

/// The most threads a block can have, on every architecture kjit targets.
inline constexpr unsigned kMaxBlockThreads = 1024;

/// One entry point and its parameters, in order.
struct EntryParams {
    std::string entry; ///< the name the module exports: "rms_norm", "_Z5scaleILi128EfEvPT0_S0_i"
    std::vector<ParamType> params;
    /// The most threads a block may have: `__launch_bounds__` as the PTX's `.maxntid` (or
    /// `.reqntid`) states it, the product of its dimensions; 0 when the kernel declares none.
    /// (A compile refuses one above 1024, so a compiled entry's is at most that.)
    unsigned max_threads = 0;
    friend bool operator==(const EntryParams&, const EntryParams&) = default;
};

/// Every `.entry` of `ptx` with its parameters, in the order the PTX declares them.
/// ConfigError when an entry's parameter list cannot be read.
std::vector<EntryParams> parse_ptx_entries(std::string_view ptx);

/// One line for a cache entry's meta: "ENTRY TYPE TYPE ..." with ParamType::ptx() spellings,
/// then "maxntid=N" when the entry declares a launch bound.
std::string encode_entry_params(const EntryParams& entry);
/// The inverse of encode_entry_params(); nullopt when the text is not one.
std::optional<EntryParams> decode_entry_params(std::string_view text);

} // namespace kjit
