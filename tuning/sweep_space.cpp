#include "tuning/sweep_space.hpp"

#include "core/error.hpp"
#include "core/flags.hpp"

#include <algorithm>
#include <limits>

namespace kjit {

namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

/// The exponents k (0..62) of the powers of two in [lo, hi], as [first, last]; first > last
/// when there is none.
std::pair<int, int> pow2_exponents(long long lo, long long hi) {
    int first = 0;
    while (first < 63 && (1LL << first) < lo)
        ++first;
    int last = -1;
    while (last < 62 && (1LL << (last + 1)) <= hi)
        ++last;
    return {first, last};
}

} // namespace

void SweepParam::add(long long v) {
    if (std::find(list.begin(), list.end(), v) == list.end())
        list.push_back(v);
}

std::uint64_t SweepParam::size() const {
    switch (kind) {
    case Kind::list:
        return list.size();
    case Kind::range: {
        if (max < min || step <= 0)
            return 0;
        // In unsigned arithmetic: max - min may not fit a long long.
        const std::uint64_t span = static_cast<std::uint64_t>(max) - static_cast<std::uint64_t>(min);
        const std::uint64_t steps = span / static_cast<std::uint64_t>(step);
        return steps == kMax ? kMax : steps + 1;
    }
    case Kind::pow2: {
        const auto [first, last] = pow2_exponents(min, max);
        return first > last ? 0 : static_cast<std::uint64_t>(last - first + 1);
    }
    }
    return 0;
}

long long SweepParam::value(std::uint64_t i) const {
    switch (kind) {
    case Kind::list:
        return list.at(i);
    case Kind::range:
        // min + i * step stays within [min, max] for i < size(): computed modulo 2^64.
        return static_cast<long long>(static_cast<std::uint64_t>(min) +
                                      i * static_cast<std::uint64_t>(step));
    case Kind::pow2:
        return 1LL << (pow2_exponents(min, max).first + static_cast<int>(i));
    }
    return 0;
}

std::optional<std::uint64_t> SweepParam::index_of(long long v) const {
    switch (kind) {
    case Kind::list:
        for (std::size_t i = 0; i < list.size(); ++i)
            if (list[i] == v)
                return i;
        return std::nullopt;
    case Kind::range: {
        if (v < min || v > max)
            return std::nullopt;
        const std::uint64_t offset = static_cast<std::uint64_t>(v) - static_cast<std::uint64_t>(min);
        if (offset % static_cast<std::uint64_t>(step) != 0)
            return std::nullopt;
        const std::uint64_t i = offset / static_cast<std::uint64_t>(step);
        return i < size() ? std::optional<std::uint64_t>(i) : std::nullopt;
    }
    case Kind::pow2: {
        if (v <= 0 || (v & (v - 1)) != 0)
            return std::nullopt;
        int e = 0;
        while ((1LL << e) < v)
            ++e;
        const int first = pow2_exponents(min, max).first;
        if (e < first || static_cast<std::uint64_t>(e - first) >= size())
            return std::nullopt;
        return static_cast<std::uint64_t>(e - first);
    }
    }
    return std::nullopt;
}

SweepSpace::SweepSpace(std::vector<SweepParam> params) : params_(std::move(params)) {}

std::optional<std::uint64_t> SweepSpace::size() const {
    std::uint64_t n = 1;
    bool over = false;
    for (const SweepParam& p : params_) {
        const std::uint64_t k = p.size();
        if (k == 0)
            return 0;
        over = over || k == kMax || n > kMax / k;
        n = over ? kMax : n * k;
    }
    if (over)
        return std::nullopt;
    return n;
}

std::string SweepSpace::describe() const {
    const auto n = size();
    std::string out = n ? std::to_string(*n) + " points (" : "more than 2^64 points (";
    for (std::size_t i = 0; i < params_.size(); ++i) {
        const std::uint64_t k = params_[i].size();
        out += (i ? " x " : "") + params_[i].name + ": " +
               (k == kMax ? "more than 2^64" : std::to_string(k)) + (k == 1 ? " value" : " values");
    }
    return out + ")";
}

std::map<std::string, long long> SweepSpace::point(std::uint64_t i) const {
    std::map<std::string, long long> out;
    for (std::size_t p = params_.size(); p-- > 0;) {
        const std::uint64_t k = params_[p].size();
        out[params_[p].name] = params_[p].value(i % k);
        i /= k;
    }
    return out;
}

void SweepSpace::check_cap(std::uint64_t cap) const {
    const auto n = size();
    if (n && *n <= cap)
        return;
    throw ConfigError("the sweep's space has " + describe() + ", more than the " +
                      std::to_string(cap) + " an exhaustive sweep evaluates (" +
                      std::string(kFlagSweepMaxVariants) +
                      "): narrow the ranges, or raise the cap");
}

std::uint64_t default_sweep_cap() {
    return static_cast<std::uint64_t>(process_flags().get_int(kFlagSweepMaxVariants));
}

} // namespace kjit
