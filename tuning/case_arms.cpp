#include "tuning/case_arms.hpp"

#include <set>

namespace kjit {

std::vector<const Function*> PreparedArm::functions(const CasePlan& plan) const {
    return step_functions(
        plan, [this](const std::string& entry) -> const Function& { return function(entry); });
}

KernelSpec case_spec(const KernelContract& contract, const Defines& defines) {
    KernelSpec spec;
    spec.name = contract.name;
    for (const auto& [k, v] : defines)
        spec.name += "/" + k + "=" + v;
    spec.source = contract.source_name();
    spec.defines = defines;
    spec.instantiations = contract.name_expressions();
    return spec;
}

std::vector<PreparedArm> prepare_arms(Engine& engine, const KernelContract& contract,
                                      const std::vector<Defines>& define_sets,
                                      const Device& device) {
    std::vector<KernelSpec> specs;
    for (const Defines& d : define_sets)
        specs.push_back(case_spec(contract, d));
    const std::vector<PrepareRow> rows = engine.prepare({}, specs);
    const std::string source_hash =
        engine.sources().current()->kernel(contract.source_name()).hash.hex().substr(0, 12);
    std::vector<PreparedArm> arms;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].error)
            std::rethrow_exception(rows[i].error);
        PreparedArm arm;
        arm.engine = &engine;
        arm.spec_name = specs[i].name;
        arm.defines = define_sets[i];
        arm.compiled = rows[i].compiled;
        arm.provenance = {device.name(), engine.arch(), rows[i].defines, engine.flags().tier(),
                          source_hash};
        arms.push_back(std::move(arm));
    }
    return arms;
}

void require_launch_types(const PreparedArm& arm, const KernelContract& contract,
                          std::span<const CasePlan* const> plans) {
    if (!arm.compiled)
        return;
    std::set<DType> checked;
    for (const CasePlan* plan : plans) {
        if (!checked.insert(plan->dtype).second)
            continue;
        std::string where_key;
        const std::string problem = launch_type_problem(*plan, *arm.engine->sources().current(),
                                                        arm.compiled->options, where_key);
        if (problem.empty())
            continue;
        const std::string message =
            arm.spec_name + " " + std::string(dtype_name(plan->dtype)) + ": " + problem;
        if (const auto w = contract.where.find(where_key); w != contract.where.end())
            throw ConfigError(message, w->second);
        throw ConfigError(message);
    }
}

LaunchSequence case_launch(const PreparedArm& arm, const CasePlan& plan,
                           const CaseBuffers& buffers) {
    return [plan, functions = arm.functions(plan), &buffers](CUstream stream) {
        enqueue_case(plan, functions, buffers.pointers(), stream);
    };
}

std::vector<HostBuffer> run_case_once(const PreparedArm& arm, const CasePlan& plan,
                                      CaseBuffers& buffers, LaunchConfig* launched) {
    return run_case_once(plan, arm.functions(plan), buffers, launched);
}

} // namespace kjit
