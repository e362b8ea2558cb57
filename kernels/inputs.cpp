#include "kernels/inputs.hpp"

#include "kernels/numeric.hpp"

namespace kjit {

HostBuffer generated_input(const BufferSpec& spec, std::uint64_t seed) {
    // The unscaled stream is generated_buffer's own, so recorded digests of unscaled inputs
    // keep their meaning.
    HostBuffer b = generated_buffer(spec.name, spec.dtype, spec.count, seed);
    if (spec.scale != 1.0f || spec.offset != 0.0f)
        for (std::size_t i = 0; i < spec.count; ++i)
            store_element(b, i, uniform(seed, i) * spec.scale + spec.offset);
    return b;
}

std::vector<HostBuffer> generated_inputs(const CasePlan& plan, std::uint64_t seed, int set) {
    const std::size_t n = plan.inputs.size();
    std::vector<HostBuffer> out;
    for (std::size_t k = 0; k < n; ++k)
        out.push_back(generated_input(plan.buffers[plan.inputs[k]],
                                      seed + static_cast<std::uint64_t>(set) * n + k));
    return out;
}

} // namespace kjit
