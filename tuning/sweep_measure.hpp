#pragma once

#include "kernels/case_buffers.hpp"
#include "runtime/context.hpp"
#include "tuning/sweep_result.hpp"
#include "tuning/sweep_spec.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace kjit {

/// The buffers and float64 reference one device's share of a sweep runs against, and the
/// check and timing of each variant on them.
class SweepMeasure {
  public:
    /// Buffers sized for the largest variant (and `reference`), inputs from the contract's
    /// generator at `seed`; in tolerance mode, what every variant is compared with: the float64
    /// reference's outputs at the baseline variant, or those of `reference` run once through
    /// `reference_functions` (one per plan step).
    SweepMeasure(const SweepSpec& spec, const std::vector<SweepVariant>& variants,
                 const Device& device, std::uint64_t seed,
                 const SweepVariant* reference = nullptr,
                 std::span<const Function* const> reference_functions = {});
    /// Runs row.variant once through `functions` (one per plan step) on poisoned outputs and
    /// fresh in-out buffers, digests and checks every output, then times the pipeline.
    void measure(SweepRow& row, std::span<const Function* const> functions, double copy_gbps);

  private:
    const SweepSpec& spec_;
    const Device& device_;
    std::unique_ptr<CaseBuffers> buffers_;
    std::map<std::string, std::vector<double>> want_; ///< tolerance mode, by output name
};

} // namespace kjit
