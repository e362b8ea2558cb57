#include "kernels/launch_case.hpp"

#include "core/error.hpp"
#include "core/names.hpp"
#include "runtime/stream.hpp"

#include <array>

namespace kjit {

std::vector<const Function*> step_functions(const CasePlan& plan, const EntryLookup& lookup) {
    std::vector<const Function*> out;
    for (const StepPlan& s : plan.steps)
        out.push_back(s.kind == PipelineStep::Kind::launch ? &lookup(s.entry) : nullptr);
    return out;
}

std::string launch_problem(const CasePlan& plan, const StepPlan& step, const EntryParams& entry) {
    std::vector<std::size_t> sizes;
    std::vector<ArgKind> kinds;
    for (const ParamRef& r : step.params) {
        sizes.push_back(r.scalar ? plan.scalars[r.index].size : sizeof(CUdeviceptr));
        kinds.push_back(param_kind(plan, r));
    }
    if (std::string why = param_mismatch(entry.params, sizes, kinds); !why.empty())
        return why;
    if (entry.max_threads && step.block.volume() > entry.max_threads)
        return "block " + step.block.str() + " has " + std::to_string(step.block.volume()) +
               " threads; the kernel's __launch_bounds__ allow " +
               std::to_string(entry.max_threads);
    return {};
}

std::string step_launch_problem(const CasePlan& plan, std::size_t index,
                                const CompiledKernel& compiled, const std::string& source_file,
                                std::string& where_key) {
    const StepPlan& step = plan.steps.at(index);
    const std::string what = "step " + std::to_string(index + 1);
    where_key = what;
    if (const EntryParams* entry = compiled.entry(step.entry)) {
        std::string problem = launch_problem(plan, step, *entry);
        if (problem.starts_with("block "))
            where_key = what + " block[0]";
        return problem;
    }
    std::vector<std::string> names;
    for (const EntryParams& e : compiled.entries)
        names.push_back(e.entry);
    where_key = what + " entry";
    return source_file + " has no entry point '" + step.entry + "'" +
           did_you_mean(nearest(step.entry, names)) + " (entry points: " + join(names) + ")";
}

LaunchConfig enqueue_case(const CasePlan& plan, std::span<const Function* const> functions,
                          std::span<const CUdeviceptr> buffers, CUstream stream) {
    if (functions.size() != plan.steps.size() || buffers.size() != plan.buffers.size())
        throw Error(plan.kernel + ": " + std::to_string(plan.steps.size()) + " steps over " +
                    std::to_string(plan.buffers.size()) + " buffers, given " +
                    std::to_string(functions.size()) + " functions and " +
                    std::to_string(buffers.size()) + " buffers");
    LaunchConfig last;
    for (std::size_t s = 0; s < plan.steps.size(); ++s) {
        const StepPlan& step = plan.steps[s];
        if (step.kind == PipelineStep::Kind::copy) {
            const CUresult r = driver().cuMemcpyDtoDAsync(buffers[step.to], buffers[step.from],
                                                          plan.buffers[step.to].bytes(), stream);
            if (r != CUDA_SUCCESS) // the context is built only on failure
                check(r, "cuMemcpyDtoDAsync",
                      plan.kernel + " " + plan.buffers[step.from].name + " -> " +
                          plan.buffers[step.to].name);
            continue;
        }
        // Parameters point into these arrays; small pipelines need no allocation.
        constexpr std::size_t kInline = 16;
        const std::size_t n = step.params.size();
        std::array<void*, kInline> inline_params{};
        std::array<std::size_t, kInline> inline_sizes{}, inline_aligns{};
        std::array<ArgKind, kInline> inline_kinds{};
        std::vector<void*> heap_params;
        std::vector<std::size_t> heap_sizes, heap_aligns;
        std::vector<ArgKind> heap_kinds;
        void** params = inline_params.data();
        std::size_t* sizes = inline_sizes.data();
        std::size_t* aligns = inline_aligns.data();
        ArgKind* kinds = inline_kinds.data();
        if (n > kInline) {
            heap_params.resize(n);
            heap_sizes.resize(n);
            heap_aligns.resize(n);
            heap_kinds.resize(n);
            params = heap_params.data();
            sizes = heap_sizes.data();
            aligns = heap_aligns.data();
            kinds = heap_kinds.data();
        }
        for (std::size_t i = 0; i < n; ++i) {
            const ParamRef& r = step.params[i];
            kinds[i] = param_kind(plan, r);
            if (r.scalar) {
                const ScalarSpec& sc = plan.scalars[r.index];
                params[i] = const_cast<std::byte*>(sc.bytes.data());
                sizes[i] = aligns[i] = sc.size;
            } else {
                params[i] = const_cast<CUdeviceptr*>(&buffers[r.index]);
                sizes[i] = sizeof(CUdeviceptr);
                aligns[i] = alignof(CUdeviceptr);
            }
        }
        last = step.config(stream);
        functions[s]->launch_packed(last, params, std::span<const std::size_t>(sizes, n),
                                    std::span<const std::size_t>(aligns, n), step.signature,
                                    std::span<const ArgKind>(kinds, n));
    }
    return last;
}

std::vector<HostBuffer> run_case_once(const CasePlan& plan,
                                      std::span<const Function* const> functions,
                                      CaseBuffers& buffers, LaunchConfig* launched) {
    buffers.select(0);
    buffers.fill_canary();
    const Stream stream;
    const LaunchConfig config = enqueue_case(plan, functions, buffers.pointers(), stream.handle());
    stream.synchronize();
    if (launched)
        *launched = config;
    // Buffers may be larger than this plan sizes them (they serve several plans): each output
    // as this plan has it.
    std::vector<HostBuffer> outs = buffers.download();
    for (std::size_t o = 0; o < outs.size(); ++o) {
        const BufferSpec& spec = plan.buffers[plan.outputs[o]];
        outs[o].count = spec.count;
        outs[o].bytes.resize(spec.bytes());
    }
    return outs;
}

} // namespace kjit
