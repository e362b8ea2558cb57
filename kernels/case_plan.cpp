// What a case plan answers once it is built: its main launch, its buffers and scalars by name,
// an output's tolerance. Building the plan from a contract is plan.cpp's job.
#include "kernels/plan.hpp"

#include "core/error.hpp"

namespace kjit {

double output_tolerance(const BufferSpec& output) {
    if (output.tolerance > 0)
        return output.tolerance;
    return output.dtype == DType::bf16 ? 1e-2 : 1e-6;
}

LaunchConfig StepPlan::config(CUstream stream) const {
    LaunchConfig c;
    c.grid = grid;
    c.block = block;
    c.smem_bytes = smem;
    c.stream = stream;
    return c;
}

const StepPlan& CasePlan::main_launch() const {
    for (const StepPlan& s : steps)
        if (s.main)
            return s;
    for (auto it = steps.rbegin(); it != steps.rend(); ++it)
        if (it->kind == PipelineStep::Kind::launch)
            return *it;
    throw Error("the plan of " + kernel + " has no launch step");
}

std::string CasePlan::launches_text() const {
    std::string out;
    for (const StepPlan& s : steps)
        if (s.kind == PipelineStep::Kind::launch)
            out += (out.empty() ? "" : " + ") + s.entry;
    return out;
}

const BufferSpec* CasePlan::find_buffer(std::string_view name) const {
    for (const BufferSpec& b : buffers)
        if (b.name == name)
            return &b;
    return nullptr;
}

const ScalarSpec* CasePlan::find_scalar(std::string_view name) const {
    for (const ScalarSpec& s : scalars)
        if (s.name == name)
            return &s;
    return nullptr;
}

} // namespace kjit
