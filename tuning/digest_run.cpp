#include "tuning/digest_run.hpp"

#include "kernels/case_buffers.hpp"

namespace kjit {

DigestRecordPlan plan_digest_record(const KernelContract& contract,
                                    const DigestSelection& selection,
                                    std::span<const std::string> overrides) {
    DigestRecordPlan plan;
    plan.cases = record_cases(contract, selection);
    plan.defines = merge_defines(contract.defines, overrides);
    const ContractPlanner planner(contract);
    for (const DigestCase& c : plan.cases)
        plan.plans.push_back(planner.plan(c.values, c.dtype, plan.defines));
    return plan;
}

RecordedRun record_digest_case(const DigestRecordPlan& plan, std::size_t index,
                               const PreparedArm& arm, std::uint64_t seed) {
    CaseBuffers buffers(plan.plans[index], seed);
    const std::vector<HostBuffer> outputs = run_case_once(arm, plan.plans[index], buffers);
    RecordedRun run{recorded_case(plan.cases[index], plan.defines, arm.provenance, outputs), {}};
    for (const HostBuffer& out : outputs)
        run.unwritten.push_back(find_unwritten(out));
    return run;
}

DigestCheckPlan plan_digest_check(const KernelContract& contract, const Baseline& baseline,
                                  const DigestSelection& selection,
                                  std::span<const std::string> overrides) {
    DigestCheckPlan plan;
    plan.cases = checked_cases(baseline, contract, selection, overrides);
    const auto index_of = [&plan](const Defines& d) {
        for (std::size_t i = 0; i < plan.define_sets.size(); ++i)
            if (plan.define_sets[i] == d)
                return i;
        plan.define_sets.push_back(d);
        return plan.define_sets.size() - 1;
    };
    for (const CheckedCase& c : plan.cases) {
        plan.now_set.push_back(index_of(c.defines));
        plan.ref_set.push_back(index_of(c.recorded->defines));
    }
    const ContractPlanner planner(contract);
    for (std::size_t ci = 0; ci < plan.cases.size(); ++ci) {
        const DigestCase& key = plan.cases[ci].key;
        plan.now_plans.push_back(
            planner.plan(key.values, key.dtype, plan.define_sets[plan.now_set[ci]]));
        plan.ref_plans.push_back(
            planner.plan(key.values, key.dtype, plan.define_sets[plan.ref_set[ci]]));
    }
    return plan;
}

namespace {

const HostBuffer* find_output(const std::vector<HostBuffer>& outputs, const std::string& name) {
    for (const HostBuffer& b : outputs)
        if (b.name == name)
            return &b;
    return nullptr;
}

} // namespace

CheckedRun check_digest_case(const DigestCheckPlan& plan, std::size_t index,
                             std::span<const PreparedArm> arms, std::uint64_t seed) {
    const BaselineCase& rec = *plan.cases[index].recorded;
    const std::size_t now_set = plan.now_set[index], ref_set = plan.ref_set[index];
    CaseBuffers buffers(plan.now_plans[index], seed);
    const std::vector<HostBuffer> now =
        run_case_once(arms[now_set], plan.now_plans[index], buffers);
    // The recorded defines run only when an output differs, once per case.
    std::optional<std::vector<HostBuffer>> ref;
    CheckedRun run;
    for (const HostBuffer& out : now) {
        CheckedOutput o;
        o.name = out.name;
        o.dtype = out.dtype;
        o.count = out.count;
        o.digest = digest(out);
        o.recorded = recorded_output(rec, out.name);
        o.verdict = judge_output(o.recorded, out, o.digest);
        if (o.verdict == DigestVerdict::differs) {
            if (now_set == ref_set) {
                o.stale = true;
            } else {
                if (!ref)
                    ref = run_case_once(arms[ref_set], plan.ref_plans[index], buffers);
                if (const HostBuffer* base = find_output(*ref, out.name)) {
                    o.reference_digest = digest(*base);
                    o.difference = first_difference(*base, out);
                }
            }
        }
        o.unwritten = find_unwritten(out);
        run.outputs.push_back(std::move(o));
    }
    return run;
}

bool CheckedRun::differs() const {
    for (const CheckedOutput& o : outputs)
        if (o.verdict != DigestVerdict::identical)
            return true;
    return false;
}

void DigestTally::add(const CheckedRun& run) {
    (run.differs() ? differs : identical) += 1;
    for (const CheckedOutput& o : run.outputs)
        unwritten += o.unwritten.count ? 1 : 0;
}

} // namespace kjit
