#include "kernels/reference.hpp"

#include "core/error.hpp"
#include "kernels/registry.hpp"

#include <charconv>

namespace kjit {

ReferenceIo::ReferenceIo(const CasePlan& plan, std::span<const std::vector<double>> inputs)
    : plan_(plan), inputs_(inputs) {
    if (inputs.size() != plan.inputs.size())
        throw Error(plan.kernel + "'s reference takes " + std::to_string(plan.inputs.size()) +
                    " inputs, not " + std::to_string(inputs.size()));
    for (std::size_t i = 0; i < inputs.size(); ++i)
        if (inputs[i].size() != plan.buffers[plan.inputs[i]].count)
            throw Error(plan.kernel + "'s reference: input " + plan.buffers[plan.inputs[i]].name +
                        " holds " + std::to_string(inputs[i].size()) + " values, not " +
                        std::to_string(plan.buffers[plan.inputs[i]].count));
    for (std::size_t o : plan.outputs) {
        const BufferSpec& b = plan.buffers[o];
        std::vector<double> out(b.count);
        for (std::size_t i = 0; i < plan.inputs.size(); ++i)
            if (plan.inputs[i] == o)
                out = inputs[i];
        outputs_.push_back(std::move(out));
    }
}

long long ReferenceIo::shape(std::string_view key) const {
    const auto it = plan_.shape.find(std::string(key));
    if (it == plan_.shape.end())
        throw ConfigError(plan_.kernel + "'s reference reads shape entry '" + std::string(key) +
                          "', which the shape lacks");
    return it->second;
}

long long ReferenceIo::define(std::string_view name) const {
    const auto it = plan_.defines.find(std::string(name));
    if (it == plan_.defines.end())
        throw ConfigError(plan_.kernel + "'s reference needs define " + std::string(name) +
                          " and it is not set");
    long long v = 0;
    const std::string& s = it->second;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size())
        throw ConfigError("define " + std::string(name) + "=" + s + " must be an integer");
    return v;
}

double ReferenceIo::scalar(std::string_view name) const {
    if (const ScalarSpec* s = plan_.find_scalar(name))
        return s->value;
    throw ConfigError(plan_.kernel + "'s reference reads scalar '" + std::string(name) +
                      "', which the contract lacks");
}

std::span<const double> ReferenceIo::input(std::string_view name) const {
    for (std::size_t i = 0; i < plan_.inputs.size(); ++i)
        if (plan_.buffers[plan_.inputs[i]].name == name)
            return inputs_[i];
    throw ConfigError(plan_.kernel + "'s reference reads input '" + std::string(name) +
                      "', which the contract lacks");
}

std::span<double> ReferenceIo::output(std::string_view name) {
    for (std::size_t i = 0; i < plan_.outputs.size(); ++i)
        if (plan_.buffers[plan_.outputs[i]].name == name)
            return outputs_[i];
    throw ConfigError(plan_.kernel + "'s reference writes output '" + std::string(name) +
                      "', which the contract lacks");
}

std::vector<std::vector<double>> reference_outputs(const CasePlan& plan,
                                                   std::span<const std::vector<double>> inputs) {
    const ReferenceFn fn = plan.reference.empty() ? nullptr : find_reference(plan.reference);
    if (!fn)
        throw Error("kernel " + plan.kernel + " has no float64 reference");
    ReferenceIo io(plan, inputs);
    fn(io);
    return io.take_outputs();
}

std::vector<std::vector<double>> reference_outputs(const CasePlan& plan,
                                                   std::span<const HostBuffer> inputs) {
    std::vector<std::vector<double>> in;
    for (const HostBuffer& b : inputs)
        in.push_back(element_values(b));
    return reference_outputs(plan, std::span<const std::vector<double>>(in));
}

} // namespace kjit
