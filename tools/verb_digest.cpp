#include "tools/verbs.hpp"

#include "kernels/registry.hpp"
#include "runtime/context.hpp"
#include "tuning/digest_run.hpp"

#include <cstdio>
#include <memory>

namespace kjit::cli {

namespace {
struct DigestArgs {
    SourceOptions sources;
    CacheOptions cache;
    std::string kernel;
    std::string file;
    DigestSelection selection;
    std::vector<std::string> defines;
    std::uint64_t seed = 1;
    int device = 0;
};

/// A device, its context and an engine that compiles through the cache.
struct Session {
    explicit Session(const DigestArgs& args)
        : device(Device::get(args.device)), context(device),
          engine(&context, options(args), args.sources.provider()) {}
    static EngineOptions options(const DigestArgs& args) {
        EngineOptions o;
        o.cache = args.cache.settings();
        return o;
    }
    Device device;
    Context context;
    Engine engine;
};

/// --baseline, else the project file's `baselines` directory's KERNEL.toml (absolute, as the
/// default is named), else "" (the default under the current directory).
std::string baseline_file(const DigestArgs& args, const std::string& kernel) {
    if (!args.file.empty())
        return args.file;
    const Project* project = args.sources.project_file();
    if (project && project->baselines)
        return (project->baselines->path / (kernel + ".toml")).string();
    return {};
}

const char* name_of(DType d) {
    return dtype_name(d).data();
}

void print_unwritten(const Unwritten& u, std::size_t count) {
    std::printf("      UNWRITTEN: %zu of %zu elements still hold the canary, first at index %zu\n",
                u.count, count, u.first);
}

int run_record(const DigestArgs& args) {
    const KernelContract& kc = args.sources.contract(args.kernel);
    const DigestRecordPlan plan = plan_digest_record(kc, args.selection, args.defines);
    const BaselineLocation at = locate_baseline(kc.name, baseline_file(args, kc.name));
    Baseline baseline = baseline_to_record(at, kc, args.seed);

    Session session(args);
    const PreparedArm arm =
        prepare_arms(session.engine, kc, {plan.defines}, session.device).front();
    std::vector<const CasePlan*> plans;
    for (const CasePlan& p : plan.plans)
        plans.push_back(&p);
    require_launch_types(arm, kc, plans);
    std::printf("kjit digest record %s: %zu case(s), inputs seed %llu -> %s%s\n", kc.name.c_str(),
                plan.cases.size(), static_cast<unsigned long long>(args.seed), at.path.c_str(),
                at.exists ? "" : " (does not exist yet: a new file)");
    std::printf("  reading: %s\n", arm.provenance.text().c_str());
    int unwritten = 0;
    for (std::size_t ci = 0; ci < plan.cases.size(); ++ci) {
        RecordedRun run = record_digest_case(plan, ci, arm, args.seed);
        for (std::size_t o = 0; o < run.recorded.outputs.size(); ++o) {
            const OutputDigest& out = run.recorded.outputs[o];
            std::printf("  %-20s %-5s %-4s %10llu elements  digest %s\n",
                        run.recorded.shape.c_str(), name_of(run.recorded.dtype), out.name.c_str(),
                        static_cast<unsigned long long>(out.count), hex64(out.digest).c_str());
            if (run.unwritten[o].count) {
                ++unwritten;
                print_unwritten(run.unwritten[o], out.count);
            }
        }
        baseline.put(std::move(run.recorded));
    }
    if (!record_writes_file(unwritten)) {
        std::printf("digest record: %d output(s) with unwritten elements; %s not written\n",
                    unwritten, at.path.c_str());
        return kFindings;
    }
    baseline.save(at.path);
    std::printf("digest record: wrote %zu case(s) to %s (%zu in the file)\n", plan.cases.size(),
                at.path.c_str(), baseline.cases.size());
    return kOk;
}

/// A DIFFERS and the lines under it: why the output differs, and where when a reference run
/// can tell.
void print_differs(const CheckedOutput& o, const BaselineCase& rec, const PreparedArm& now,
                   const PreparedArm& ref) {
    std::printf("DIFFERS   baseline %s now %s\n",
                o.recorded ? hex64(o.recorded->digest).c_str() : "(none)",
                hex64(o.digest).c_str());
    if (o.verdict == DigestVerdict::not_recorded) {
        std::printf("      the baseline records no output '%s'\n", o.name.c_str());
        return;
    }
    if (o.verdict == DigestVerdict::resized) {
        std::printf("      recorded %llu %s elements, now %zu %s\n",
                    static_cast<unsigned long long>(o.recorded->count),
                    name_of(o.recorded->dtype), o.count, name_of(o.dtype));
        return;
    }
    if (o.stale) {
        std::printf("      the baseline's own defines (%s) no longer give its digest, and the "
                    "values behind a digest are not stored: no index to name (recorded src=%s "
                    "tier=%s gpu=%s %s; now src=%s tier=%s gpu=%s %s)\n",
                    defines_text(rec.defines).c_str(), rec.source_hash.c_str(), rec.tier.c_str(),
                    rec.gpu.c_str(), rec.arch.c_str(), now.provenance.source_hash.c_str(),
                    now.provenance.tier.c_str(), now.provenance.gpu.c_str(),
                    now.provenance.arch.c_str());
        return;
    }
    if (o.reference_digest && *o.reference_digest != o.recorded->digest)
        std::printf("      note: the baseline's own defines (%s) now give %s, not the recorded "
                    "digest (recorded src=%s, now src=%s): the comparison below is against "
                    "that reference run\n",
                    defines_text(rec.defines).c_str(), hex64(*o.reference_digest).c_str(),
                    rec.source_hash.c_str(), ref.provenance.source_hash.c_str());
    if (const auto& diff = o.difference)
        std::printf("      first difference at index %zu of %zu (%zu differ): baseline defines "
                    "(%s) %s, now (%s) %s\n",
                    diff->index, o.count, diff->count, defines_text(rec.defines).c_str(),
                    diff->reference.c_str(), defines_text(now.defines).c_str(),
                    diff->actual.c_str());
    else
        std::printf("      the reference run with the baseline's defines gives the same values "
                    "as now\n");
}

int run_check(const DigestArgs& args) {
    const KernelContract& kc = args.sources.contract(args.kernel);
    const BaselineLocation at = locate_baseline(kc.name, baseline_file(args, kc.name));
    const Baseline baseline = baseline_to_check(at, kc);
    const DigestCheckPlan plan = plan_digest_check(kc, baseline, args.selection, args.defines);
    Session session(args);
    const std::vector<PreparedArm> arms =
        prepare_arms(session.engine, kc, plan.define_sets, session.device);
    for (std::size_t a = 0; a < arms.size(); ++a) {
        std::vector<const CasePlan*> plans; // what this set launches as the checked one
        for (std::size_t ci = 0; ci < plan.cases.size(); ++ci)
            if (plan.now_set[ci] == a)
                plans.push_back(&plan.now_plans[ci]);
        require_launch_types(arms[a], kc, plans);
    }

    std::printf("kjit digest check %s against %s: %zu case(s), inputs seed %llu\n",
                kc.name.c_str(), at.path.c_str(), plan.cases.size(),
                static_cast<unsigned long long>(baseline.seed));
    std::vector<bool> shown(arms.size(), false);
    for (std::size_t i : plan.now_set)
        if (!shown[i]) {
            shown[i] = true;
            std::printf("  reading: %s\n", arms[i].provenance.text().c_str());
        }
    DigestTally tally;
    for (std::size_t ci = 0; ci < plan.cases.size(); ++ci) {
        const CheckedCase& c = plan.cases[ci];
        const CheckedRun run = check_digest_case(plan, ci, arms, baseline.seed);
        for (const CheckedOutput& o : run.outputs) {
            std::printf("  %-20s %-5s %-4s ", c.key.shape.c_str(), name_of(c.key.dtype),
                        o.name.c_str());
            if (o.verdict == DigestVerdict::identical)
                std::printf("IDENTICAL %s\n", hex64(o.digest).c_str());
            else
                print_differs(o, *c.recorded, arms[plan.now_set[ci]], arms[plan.ref_set[ci]]);
            if (o.unwritten.count)
                print_unwritten(o.unwritten, o.count);
        }
        tally.add(run);
    }
    std::printf("digest check: %d identical, %d differ, %d output(s) with unwritten elements\n",
                tally.identical, tally.differs, tally.unwritten);
    return tally.passed() ? kOk : kFindings;
}
} // namespace

Action add_digest(CLI::App& app) {
    auto args = std::make_shared<DigestArgs>();
    auto* sub = app.add_subcommand(
        "digest", "record or check xxh3-64 digests of a kernel's outputs on generator inputs");
    sub->require_subcommand(1);
    auto* record = sub->add_subcommand(
        "record", "run each shape and dtype and write the digests to the baseline file");
    auto* check = sub->add_subcommand(
        "check", "rerun every recorded case and print IDENTICAL or DIFFERS (with the first "
                 "differing index and both values)");
    for (CLI::App* verb : {record, check}) {
        args->sources.add_to(*verb);
        args->cache.add_to(*verb);
        verb->add_option("kernel", args->kernel, "kernel name, e.g. rms_norm")->required();
        verb->add_option("--baseline,--file", args->file,
                         "baseline file (default: KERNEL.toml in the project file's baselines, "
                         "else bench/baselines/KERNEL.toml under the current directory)");
        verb->add_option("--shapes", args->selection.shapes,
                         "shapes, ';'-separated: rows=1,n=7168;rows=4096,n=7168 (default: "
                         "record the kernel's, check every recorded one)");
        verb->add_option("--dtype", args->selection.dtypes,
                         "element types (default: all the kernel's)");
        verb->add_option("-D,--define", args->defines,
                         verb == record ? "NAME=VALUE injected as a define"
                                        : "NAME=VALUE overriding the recorded defines");
        verb->add_option("--device", args->device, "device ordinal")->capture_default_str();
    }
    record->add_option("--seed", args->seed, "input generator seed")
        ->capture_default_str()
        ->check(seed_check());
    return [args, record] { return record->parsed() ? run_record(*args) : run_check(*args); };
}

} // namespace kjit::cli
