#include "kernels/case_buffers.hpp"

#include "core/error.hpp"
#include "kernels/inputs.hpp"

#include <algorithm>

namespace kjit {

namespace {
DeviceBuffer uploaded(const HostBuffer& host) {
    DeviceBuffer d(host.bytes.size());
    if (!host.bytes.empty())
        d.upload(host.bytes.data(), host.bytes.size());
    return d;
}
} // namespace

CaseBuffers::CaseBuffers(const CasePlan& plan, std::uint64_t seed, int input_sets) : plan_(plan) {
    for (const BufferSpec& b : plan_.buffers)
        others_.emplace_back(is_generated(b.role) ? 0 : b.bytes());
    for (int s = 0; s < input_sets; ++s)
        add_input_set(generated_inputs(plan_, seed, s));
}

CaseBuffers::CaseBuffers(const CasePlan& plan, std::span<const HostBuffer> inputs)
    : CaseBuffers(plan, 0, 0) {
    add_input_set(std::vector<HostBuffer>(inputs.begin(), inputs.end()));
}

void CaseBuffers::add_input_set(std::vector<HostBuffer> inputs) {
    if (inputs.size() != plan_.inputs.size())
        throw Error(plan_.entry() + " takes " + std::to_string(plan_.inputs.size()) +
                    " inputs, not " + std::to_string(inputs.size()));
    std::vector<DeviceBuffer> set;
    std::vector<HostBuffer> in_out;
    std::vector<CUdeviceptr> ptrs;
    for (std::size_t b = 0; b < plan_.buffers.size(); ++b)
        ptrs.push_back(others_[b].ptr());
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        set.push_back(uploaded(inputs[k]));
        ptrs[plan_.inputs[k]] = set.back().ptr();
        if (plan_.buffers[plan_.inputs[k]].role == ArgRole::in_out)
            in_out.push_back(std::move(inputs[k]));
    }
    generated_.push_back(std::move(set));
    in_out_.push_back(std::move(in_out));
    pointers_.push_back(std::move(ptrs));
}

void CaseBuffers::select(int set) {
    if (set < 0 || static_cast<std::size_t>(set) >= pointers_.size())
        throw Error("input set " + std::to_string(set) + " of " + std::to_string(pointers_.size()));
    selected_ = set;
}

void CaseBuffers::fill_canary() {
    std::size_t in_out = 0;
    for (std::size_t k = 0; k < plan_.inputs.size(); ++k)
        if (plan_.buffers[plan_.inputs[k]].role == ArgRole::in_out) {
            const HostBuffer& host = in_out_[selected_][in_out++];
            if (!host.bytes.empty())
                generated_[selected_][k].upload(host.bytes.data(), host.bytes.size());
        }
    for (std::size_t b = 0; b < plan_.buffers.size(); ++b) {
        const BufferSpec& spec = plan_.buffers[b];
        if (is_generated(spec.role) || spec.count == 0)
            continue;
        const HostBuffer host = canary_buffer(spec.name, spec.dtype, spec.count);
        others_[b].upload(host.bytes.data(), host.bytes.size());
    }
}

std::vector<HostBuffer> CaseBuffers::download() const {
    std::vector<HostBuffer> out;
    for (std::size_t o : plan_.outputs) {
        const BufferSpec& spec = plan_.buffers[o];
        HostBuffer h;
        h.name = spec.name;
        h.dtype = spec.dtype;
        h.count = spec.count;
        h.bytes.resize(spec.bytes());
        const auto k = static_cast<std::size_t>(
            std::find(plan_.inputs.begin(), plan_.inputs.end(), o) - plan_.inputs.begin());
        const DeviceBuffer& d = k < plan_.inputs.size() ? generated_[selected_][k] : others_[o];
        if (!h.bytes.empty())
            d.download(h.bytes.data(), h.bytes.size());
        out.push_back(std::move(h));
    }
    return out;
}

} // namespace kjit
