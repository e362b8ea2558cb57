#pragma once
// Fixed-width fields of kjit's binary formats (the disk cache entry, the signed remote
// envelope): written and read in the host's byte order, at byte offsets of no alignment.

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace kjit::detail {

/// Appends `v`'s bytes to `out`.
template <class T> void put(std::string& out, T v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

/// The T at `offset` of `bytes` (the caller has checked that it fits).
template <class T> T get(std::string_view bytes, std::size_t offset) {
    T v;
    std::memcpy(&v, bytes.data() + offset, sizeof v);
    return v;
}

} // namespace kjit::detail
