#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kjit {

/// One swept parameter: its values in order, written as a list, a range or the powers of two
/// in a range. A range is never expanded: size() and value(i) are computed, overflow-safe, so
/// that a huge one is refused (SweepSpace) before anything is allocated for it. A define
/// unless it is a launch parameter.
struct SweepParam {
    enum class Kind { list, range, pow2 };
    std::string name;
    bool define = true;
    Kind kind = Kind::list;
    std::vector<long long> list; ///< Kind::list: the values as written
    long long min = 0, max = 0;  ///< range and pow2: the bounds, both included
    long long step = 1;          ///< range: positive
    /// Appends `v` to a list unless it is there: a value met twice is measured once.
    void add(long long v);
    /// How many values (a range of more than 2^64 - 1 values saturates there).
    [[nodiscard]] std::uint64_t size() const;
    /// Value `i` (< size()).
    [[nodiscard]] long long value(std::uint64_t i) const;
    /// The i with value(i) == `v`, computed (a range is never walked); nullopt when `v` is not
    /// one of the values.
    [[nodiscard]] std::optional<std::uint64_t> index_of(long long v) const;
};

/// The points of a sweep: every combination of its parameters' values, the last parameter
/// varying fastest. Never materialized: its size is computed without expanding it, and point
/// i is decoded from i, so that a search may draw from a space far larger than it evaluates.
class SweepSpace {
  public:
    explicit SweepSpace(std::vector<SweepParam> params);
    /// The number of points; nullopt when it is more than 2^64 - 1.
    [[nodiscard]] std::optional<std::uint64_t> size() const;
    /// "1000000 points (A: 1000 values x B: 1000 values)"; "more than 2^64 points (...)".
    [[nodiscard]] std::string describe() const;
    /// Point `i` (< size()): each parameter's value, by name.
    [[nodiscard]] std::map<std::string, long long> point(std::uint64_t i) const;
    /// Throws ConfigError (message only) when the space has more than `cap` points: an
    /// exhaustive sweep evaluates every one.
    void check_cap(std::uint64_t cap) const;
    [[nodiscard]] const std::vector<SweepParam>& params() const { return params_; }

  private:
    std::vector<SweepParam> params_;
};

/// KJIT_SWEEP_MAX_VARIANTS: the most points an exhaustive sweep evaluates (default 10000).
std::uint64_t default_sweep_cap();

} // namespace kjit
