// libFuzzer target for sweep expansion: a sweep file's text is read (SweepSpec::parse), the
// size of its space computed without expanding it, a few of its points decoded, and the space
// expanded under a small cap. Any bytes are read or refused with a kjit::Error; a space over
// the cap is refused before anything is planned; every decoded point holds values of its
// parameters. Any other exception, crash, hang or runaway allocation is a bug. fuzz/run.sh
// builds and runs it.
#include "core/error.hpp"
#include "tuning/sweep_plan.hpp"
#include "tuning/sweep_spec.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace {

constexpr std::uint64_t kCap = 64;

/// `v` is a value `p` can take.
bool holds(const kjit::SweepParam& p, long long v) {
    switch (p.kind) {
    case kjit::SweepParam::Kind::list:
        for (long long x : p.list)
            if (x == v)
                return true;
        return false;
    case kjit::SweepParam::Kind::range:
        return v >= p.min && v <= p.max &&
               (static_cast<std::uint64_t>(v) - static_cast<std::uint64_t>(p.min)) %
                       static_cast<std::uint64_t>(p.step) ==
                   0;
    case kjit::SweepParam::Kind::pow2:
        return v >= p.min && v <= p.max && v > 0 && (v & (v - 1)) == 0;
    }
    return false;
}

void check_point(const kjit::SweepSpace& space, std::uint64_t i) {
    const auto point = space.point(i);
    if (point.size() != space.params().size())
        __builtin_trap();
    for (const kjit::SweepParam& p : space.params())
        if (!holds(p, point.at(p.name)))
            __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::optional<kjit::SweepSpec> spec;
    try {
        spec = kjit::SweepSpec::parse(text, "fuzz.sweep.toml");
    } catch (const kjit::Error&) {
        return 0;
    }
    const kjit::SweepSpace space(spec->params);
    const std::optional<std::uint64_t> n = space.size();
    (void)space.describe();
    if (n && *n > 0) {
        check_point(space, 0);
        check_point(space, *n / 2);
        check_point(space, *n - 1);
    }
    try {
        const auto variants = kjit::expand(*spec, nullptr, kCap);
        if (!n || *n > kCap || variants.size() > *n)
            __builtin_trap(); // over the cap yet expanded, or more variants than points
    } catch (const kjit::Error& e) {
        const bool capped = std::string(e.what()).find("an exhaustive sweep evaluates") !=
                            std::string::npos;
        if (capped != (!n || *n > kCap))
            __builtin_trap(); // refused for its size exactly when it is over the cap
    }
    return 0;
}
