#pragma once
// What `kjit bench` runs, decided before a device is touched: the case (shape, dtype), arm A's
// defines and, for an A B B A comparison, arm B's.

#include "kernels/contract.hpp"
#include "kernels/plan.hpp"
#include "tuning/roofline.hpp"

#include <span>
#include <string>
#include <vector>

namespace kjit {

/// A bench of one arm, or of two in A B B A order, with every usage error already found.
struct BenchPlan {
    ShapeValues shape;
    DType dtype = DType::f32;
    std::vector<Defines> sets;   ///< arm A's defines, then arm B's when compared
    std::vector<CasePlan> plans; ///< per arm
    /// What one run of arm `arm` moves and computes (its defines may size a buffer: a split-K
    /// workspace).
    [[nodiscard]] Work work(std::size_t arm = 0) const {
        return {plans.at(arm).bytes, plans.at(arm).flops};
    }
};

/// Plans a bench of `contract` at `shape` (its bench shape when empty) in `dtype` (its first
/// when empty): arm A runs its defines with `defines` (NAME=VALUE) over them and, when `vs` is
/// not empty, arm B runs arm A's with `vs` over them, `pairs` A B pairs; ConfigError on a bad
/// shape, dtype, define or pair count. Arms may size a buffer differently (buffer_capacity
/// gives buffers both can use).
BenchPlan plan_bench(const KernelContract& contract, const std::string& shape,
                     const std::string& dtype, std::span<const std::string> defines,
                     std::span<const std::string> vs, int pairs);

} // namespace kjit
