#pragma once

#include "kernels/host_buffer.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kjit {

/// xxh3-64 of the buffer's bytes.
std::uint64_t digest(const HostBuffer& buffer);

/// Where two buffers of the same shape first differ, compared bit for bit.
struct Difference {
    std::size_t index = 0; ///< the first differing element
    std::size_t count = 0; ///< how many elements differ
    std::string reference; ///< format_element of the reference at index
    std::string actual;
};

/// The first element where `actual` differs from `reference` (bit for bit), or nothing when
/// they are identical; Error when their dtypes or counts differ.
std::optional<Difference> first_difference(const HostBuffer& reference, const HostBuffer& actual);

/// The recorded digest of one output buffer.
struct OutputDigest {
    std::string name;
    DType dtype = DType::f32;
    std::uint64_t count = 0;
    std::uint64_t digest = 0;
    friend bool operator==(const OutputDigest&, const OutputDigest&) = default;
};

/// One recorded case: a shape and dtype, the defines it ran with, a digest per output.
struct BaselineCase {
    std::string shape; ///< "rows=1,n=7168", keys in the kernel's order
    DType dtype = DType::f32;
    std::map<std::string, std::string> defines;
    std::string gpu, arch, tier, source_hash; ///< what produced the digests
    std::vector<OutputDigest> outputs;
    int line = 0, column = 0; ///< where the case starts in its file (0 when built in memory)
    /// Equal recorded content (the file position is not compared).
    [[nodiscard]] bool same_record(const BaselineCase& other) const;
};

/// A kernel's digest baseline file (TOML): per case, the digests of every output buffer.
struct Baseline {
    std::string kernel;
    std::uint64_t seed = 1; ///< generator seed of the inputs
    std::vector<BaselineCase> cases;
    std::string file; ///< where it was loaded from (errors name it)

    /// Reads `path`; ConfigError at file:line:col for a syntax error, an unknown key, a wrong
    /// type, a missing key, a bad digest or a duplicate case.
    static Baseline load(const std::filesystem::path& path);
    /// load() on text in memory; `file` is the name errors show.
    static Baseline parse(std::string_view text, const std::string& file);
    /// The TOML text load() reads back to an equal baseline.
    [[nodiscard]] std::string to_toml() const;
    /// Writes to_toml() to a temporary file beside `path`, then renames it over `path`.
    void save(const std::filesystem::path& path) const;
    /// The case of `shape` and `dtype`, or nullptr.
    [[nodiscard]] const BaselineCase* find(std::string_view shape, DType dtype) const;
    /// Replaces the case of the same shape and dtype, or appends it.
    void put(BaselineCase c);
};

} // namespace kjit
