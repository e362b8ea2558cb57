#pragma once

#include "kernels/host_buffer.hpp"
#include "kernels/plan.hpp"

#include <span>
#include <string_view>
#include <vector>

namespace kjit {

/// What a float64 reference sees of one case, by name: the shape, the defines, the scalars as
/// the kernel receives them, the inputs as doubles (the values the kernel reads: bf16-rounded
/// where bf16) and the outputs to fill. An in-out buffer is an input and an output; its output
/// starts as a copy of its input.
class ReferenceIo {
  public:
    /// `inputs` holds one vector per plan.inputs entry, in that order.
    ReferenceIo(const CasePlan& plan, std::span<const std::vector<double>> inputs);

    /// Shape entry `key`; ConfigError when the shape has none.
    [[nodiscard]] long long shape(std::string_view key) const;
    /// Define `name` as an integer; ConfigError when it is unset or not one.
    [[nodiscard]] long long define(std::string_view name) const;
    /// Scalar argument `name` as the kernel receives it (rounded to its type).
    [[nodiscard]] double scalar(std::string_view name) const;
    /// Input (or in-out) buffer `name`.
    [[nodiscard]] std::span<const double> input(std::string_view name) const;
    /// Output (or in-out) buffer `name`, sized as its buffer.
    [[nodiscard]] std::span<double> output(std::string_view name);
    [[nodiscard]] const CasePlan& plan() const { return plan_; }
    /// The outputs, one vector per plan.outputs entry, in that order.
    [[nodiscard]] std::vector<std::vector<double>> take_outputs() { return std::move(outputs_); }

  private:
    const CasePlan& plan_;
    std::span<const std::vector<double>> inputs_;
    std::vector<std::vector<double>> outputs_;
};

/// Runs the plan's float64 reference on `inputs` (one vector per plan.inputs entry); one vector
/// per plan.outputs entry. Error when the contract has no reference.
std::vector<std::vector<double>> reference_outputs(const CasePlan& plan,
                                                   std::span<const std::vector<double>> inputs);
/// reference_outputs on the values of host buffers (plan.inputs order).
std::vector<std::vector<double>> reference_outputs(const CasePlan& plan,
                                                   std::span<const HostBuffer> inputs);

} // namespace kjit
