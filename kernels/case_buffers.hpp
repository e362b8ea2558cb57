#pragma once

#include "kernels/host_buffer.hpp"
#include "kernels/plan.hpp"
#include "runtime/buffer.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace kjit {

/// The device buffers of one case: generated inputs (one copy per input set), outputs and
/// workspaces, in the current context.
class CaseBuffers {
  public:
    /// `input_sets` sets of generated_inputs from `seed`.
    CaseBuffers(const CasePlan& plan, std::uint64_t seed, int input_sets = 1);
    /// One input set uploaded from `inputs` (plan.inputs order).
    CaseBuffers(const CasePlan& plan, std::span<const HostBuffer> inputs);
    /// Makes input set `set` the one pointers() gives.
    void select(int set);
    /// The device address of every buffer of the plan, in its order (the selected input set).
    [[nodiscard]] std::span<const CUdeviceptr> pointers() const { return pointers_[selected_]; }
    /// Writes the canary into every output and workspace and restores the selected set's
    /// in-out buffers to their generated values (synchronous).
    void fill_canary();
    /// Every output (plan.outputs order), copied to the host.
    [[nodiscard]] std::vector<HostBuffer> download() const;
    [[nodiscard]] const CasePlan& plan() const { return plan_; }

  private:
    void add_input_set(std::vector<HostBuffer> inputs);
    CasePlan plan_;
    std::vector<std::vector<DeviceBuffer>> generated_; ///< per set, per plan.inputs entry
    std::vector<std::vector<HostBuffer>> in_out_;      ///< per set: the in-out buffers' values
    std::vector<DeviceBuffer> others_;                 ///< per buffer (empty when generated)
    std::vector<std::vector<CUdeviceptr>> pointers_;   ///< per set, per buffer
    int selected_ = 0;
};

} // namespace kjit
