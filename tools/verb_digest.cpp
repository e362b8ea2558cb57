#include "tools/verbs.hpp"

#include "runtime/context.hpp"
#include "kernels/registry.hpp"
#include "tuning/case_arms.hpp"
#include "tuning/digest.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

namespace kjit::cli {

namespace {
struct DigestArgs {
    SourceOptions sources;
    CacheOptions cache;
    std::string kernel;
    std::string file;
    std::vector<std::string> shapes;
    std::vector<std::string> dtypes;
    std::vector<std::string> defines;
    std::uint64_t seed = 1;
    int device = 0;
};

/// One (shape, dtype) a record or check runs.
struct CaseKey {
    std::string shape; ///< canonical text
    ShapeValues values;
    DType dtype = DType::f32;
};

std::filesystem::path baseline_path(const DigestArgs& args) {
    if (!args.file.empty())
        return args.file;
    // The source tree's bench/baselines, beside the kernel directory this binary was built from.
    return std::filesystem::path(KJIT_DEFAULT_KERNEL_DIR).parent_path() / "bench" / "baselines" /
           (args.kernel + ".toml");
}

/// The shapes (the kernel's digest shapes when none were given) times the dtypes (all the
/// kernel's when none were given) asked for on the command line.
std::vector<CaseKey> requested_cases(const KernelContract& kc, const DigestArgs& args) {
    std::vector<std::string> shapes;
    for (const std::string& s : args.shapes)
        for (std::string& part : split_shapes(s))
            shapes.push_back(std::move(part));
    if (shapes.empty())
        shapes = kc.digest_shapes;
    std::vector<DType> dtypes;
    for (const std::string& d : args.dtypes)
        dtypes.push_back(parse_dtype(d));
    if (dtypes.empty())
        dtypes = kc.dtypes;
    std::vector<CaseKey> out;
    for (const std::string& s : shapes) {
        const ShapeValues values = parse_shape(kc, s);
        for (DType d : dtypes)
            out.push_back({shape_text(kc, values), values, d});
    }
    return out;
}

/// A device, its context and an engine that compiles through the cache.
struct Session {
    explicit Session(const DigestArgs& args)
        : device(Device::get(args.device)), context(device),
          engine(&context, options(args), SourceProvider(args.sources.dir)) {}
    static EngineOptions options(const DigestArgs& args) {
        EngineOptions o;
        o.cache = args.cache.settings();
        return o;
    }
    Device device;
    Context context;
    Engine engine;
};

const char* name_of(DType d) {
    return dtype_name(d).data();
}

int run_record(const DigestArgs& args) {
    const KernelContract& kc = kernel_contract(args.kernel);
    const std::vector<CaseKey> cases = requested_cases(kc, args);
    const Defines defines = merge_defines(kc.defines, args.defines);
    const ContractPlanner planner(kc);
    std::vector<CasePlan> plans;
    for (const CaseKey& key : cases)
        plans.push_back(planner.plan(key.values, key.dtype, defines));
    const std::filesystem::path path = baseline_path(args);
    Baseline baseline;
    if (std::filesystem::exists(path)) {
        baseline = Baseline::load(path);
        if (baseline.kernel != kc.name)
            throw ConfigError("the baseline is for kernel '" + baseline.kernel + "', not '" +
                                  kc.name + "'",
                              path.string());
        if (baseline.seed != args.seed)
            throw ConfigError("the baseline was recorded with seed " +
                                  std::to_string(baseline.seed) + ", not " +
                                  std::to_string(args.seed) + " (remove it to start afresh)",
                              path.string());
    }
    baseline.kernel = kc.name;
    baseline.seed = args.seed;

    Session session(args);
    const PreparedArm arm = prepare_arms(session.engine, kc, {defines}, session.device).front();
    std::printf("kjit digest record %s: %zu case(s), inputs seed %llu -> %s\n", kc.name.c_str(),
                cases.size(), static_cast<unsigned long long>(args.seed), path.c_str());
    std::printf("  reading: %s\n", arm.provenance.text().c_str());
    int unwritten = 0;
    for (std::size_t ci = 0; ci < cases.size(); ++ci) {
        const CaseKey& key = cases[ci];
        CaseBuffers buffers(plans[ci], args.seed);
        BaselineCase c;
        c.shape = key.shape;
        c.dtype = key.dtype;
        c.defines = defines;
        c.gpu = arm.provenance.gpu;
        c.arch = arm.provenance.arch;
        c.tier = arm.provenance.tier;
        c.source_hash = arm.provenance.source_hash;
        for (const HostBuffer& out : run_case_once(arm, plans[ci], buffers)) {
            const std::uint64_t d = digest(out);
            c.outputs.push_back({out.name, out.dtype, out.count, d});
            std::printf("  %-20s %-5s %-4s %10zu elements  digest %s\n", key.shape.c_str(),
                        name_of(key.dtype), out.name.c_str(), out.count, hex64(d).c_str());
            if (const Unwritten u = find_unwritten(out); u.count) {
                ++unwritten;
                std::printf("      UNWRITTEN: %zu of %zu elements still hold the canary, first at "
                            "index %zu\n",
                            u.count, out.count, u.first);
            }
        }
        baseline.put(std::move(c));
    }
    if (unwritten) {
        std::printf("digest record: %d output(s) with unwritten elements; %s not written\n",
                    unwritten, path.c_str());
        return kFindings;
    }
    baseline.save(path);
    std::printf("digest record: wrote %zu case(s) to %s (%zu in the file)\n", cases.size(),
                path.c_str(), baseline.cases.size());
    return kOk;
}

/// The run of one define set on one case, kept for the element-wise comparison.
struct CaseRun {
    std::vector<HostBuffer> outputs;
    const HostBuffer* find(const std::string& name) const {
        for (const HostBuffer& b : outputs)
            if (b.name == name)
                return &b;
        return nullptr;
    }
};

int run_check(const DigestArgs& args) {
    const KernelContract& kc = kernel_contract(args.kernel);
    const std::filesystem::path path = baseline_path(args);
    const Baseline baseline = Baseline::load(path);
    if (baseline.kernel != kc.name)
        throw ConfigError("the baseline is for kernel '" + baseline.kernel + "', not '" +
                              kc.name + "'",
                          path.string());
    // Every recorded shape must still mean something to the kernel's row.
    std::vector<std::pair<const BaselineCase*, CaseKey>> cases;
    for (const BaselineCase& c : baseline.cases) {
        try {
            const ShapeValues values = parse_shape(kc, c.shape);
            cases.push_back({&c, {shape_text(kc, values), values, c.dtype}});
        } catch (const ConfigError& e) {
            throw ConfigError(e.message, path.string(), c.line, c.column);
        }
    }
    // --shapes and --dtype narrow the check to the recorded cases they name.
    std::vector<std::string> shapes;
    for (const std::string& s : args.shapes)
        for (const std::string& part : split_shapes(s))
            shapes.push_back(shape_text(kc, parse_shape(kc, part)));
    std::vector<DType> dtypes;
    for (const std::string& d : args.dtypes)
        dtypes.push_back(parse_dtype(d));
    std::erase_if(cases, [&](const auto& entry) {
        const CaseKey& key = entry.second;
        return (!shapes.empty() &&
                std::find(shapes.begin(), shapes.end(), key.shape) == shapes.end()) ||
               (!dtypes.empty() &&
                std::find(dtypes.begin(), dtypes.end(), key.dtype) == dtypes.end());
    });
    for (const std::string& s : shapes)
        if (std::none_of(cases.begin(), cases.end(),
                         [&](const auto& e) { return e.second.shape == s; }))
            throw ConfigError("no recorded case for shape " + s +
                                  " (record it with kjit digest record --shapes " + s + ")",
                              path.string());
    if (cases.empty())
        throw ConfigError("the baseline records no case to check", path.string());

    // Prepare every define set the check needs at once: the checked one per case and, for the
    // element-wise comparison, the baseline's own.
    std::vector<Defines> sets;
    const auto index_of = [&sets](const Defines& d) {
        for (std::size_t i = 0; i < sets.size(); ++i)
            if (sets[i] == d)
                return i;
        sets.push_back(d);
        return sets.size() - 1;
    };
    std::vector<std::size_t> now_set, ref_set;
    for (const auto& [c, key] : cases) {
        now_set.push_back(index_of(merge_defines(c->defines, args.defines)));
        ref_set.push_back(index_of(c->defines));
    }
    // Plans of every case with both define sets, before the device is touched.
    const ContractPlanner planner(kc);
    std::vector<CasePlan> now_plans, ref_plans;
    for (std::size_t ci = 0; ci < cases.size(); ++ci) {
        const CaseKey& key = cases[ci].second;
        now_plans.push_back(planner.plan(key.values, key.dtype, sets[now_set[ci]]));
        ref_plans.push_back(planner.plan(key.values, key.dtype, sets[ref_set[ci]]));
    }
    Session session(args);
    const std::vector<PreparedArm> arms = prepare_arms(session.engine, kc, sets, session.device);

    std::printf("kjit digest check %s against %s: %zu case(s), inputs seed %llu\n",
                kc.name.c_str(), path.c_str(), cases.size(),
                static_cast<unsigned long long>(baseline.seed));
    std::vector<bool> shown(arms.size(), false);
    for (std::size_t i : now_set)
        if (!shown[i]) {
            shown[i] = true;
            std::printf("  reading: %s\n", arms[i].provenance.text().c_str());
        }
    int identical = 0, differs = 0, unwritten = 0;
    for (std::size_t ci = 0; ci < cases.size(); ++ci) {
        const BaselineCase& rec = *cases[ci].first;
        const CaseKey& key = cases[ci].second;
        const PreparedArm& now_arm = arms[now_set[ci]];
        const PreparedArm& ref_arm = arms[ref_set[ci]];
        CaseBuffers buffers(now_plans[ci], baseline.seed);
        const CaseRun now{run_case_once(now_arm, now_plans[ci], buffers)};
        std::optional<CaseRun> ref;
        bool case_differs = false;
        for (const HostBuffer& out : now.outputs) {
            const std::uint64_t d = digest(out);
            const OutputDigest* want = nullptr;
            for (const OutputDigest& o : rec.outputs)
                if (o.name == out.name)
                    want = &o;
            std::printf("  %-20s %-5s %-4s ", key.shape.c_str(), name_of(key.dtype),
                        out.name.c_str());
            if (want && want->digest == d && want->count == out.count && want->dtype == out.dtype) {
                std::printf("IDENTICAL %s\n", hex64(d).c_str());
            } else {
                case_differs = true;
                std::printf("DIFFERS   baseline %s now %s\n",
                            want ? hex64(want->digest).c_str() : "(none)",
                            hex64(d).c_str());
                if (!want) {
                    std::printf("      the baseline records no output '%s'\n", out.name.c_str());
                } else if (want->count != out.count || want->dtype != out.dtype) {
                    std::printf("      recorded %llu %s elements, now %zu %s\n",
                                static_cast<unsigned long long>(want->count), name_of(want->dtype),
                                out.count, name_of(out.dtype));
                } else if (&now_arm == &ref_arm) {
                    std::printf("      the baseline's own defines (%s) no longer give its digest, "
                                "and the values behind a digest are not stored: no index to name "
                                "(recorded src=%s tier=%s gpu=%s %s; now src=%s tier=%s gpu=%s "
                                "%s)\n",
                                defines_text(rec.defines).c_str(), rec.source_hash.c_str(),
                                rec.tier.c_str(), rec.gpu.c_str(), rec.arch.c_str(),
                                now_arm.provenance.source_hash.c_str(),
                                now_arm.provenance.tier.c_str(), now_arm.provenance.gpu.c_str(),
                                now_arm.provenance.arch.c_str());
                } else {
                    if (!ref)
                        ref = CaseRun{run_case_once(ref_arm, ref_plans[ci], buffers)};
                    const HostBuffer* base = ref->find(out.name);
                    if (base && digest(*base) != want->digest)
                        std::printf("      note: the baseline's own defines (%s) now give %s, not "
                                    "the recorded digest (recorded src=%s, now src=%s): the "
                                    "comparison below is against that reference run\n",
                                    defines_text(rec.defines).c_str(),
                                    hex64(digest(*base)).c_str(), rec.source_hash.c_str(),
                                    ref_arm.provenance.source_hash.c_str());
                    if (const auto diff = base ? first_difference(*base, out) : std::nullopt)
                        std::printf("      first difference at index %zu of %zu (%zu differ): "
                                    "baseline defines (%s) %s, now (%s) %s\n",
                                    diff->index, out.count, diff->count,
                                    defines_text(rec.defines).c_str(), diff->reference.c_str(),
                                    defines_text(now_arm.defines).c_str(), diff->actual.c_str());
                    else
                        std::printf("      the reference run with the baseline's defines gives the "
                                    "same values as now\n");
                }
            }
            if (const Unwritten u = find_unwritten(out); u.count) {
                ++unwritten;
                std::printf("      UNWRITTEN: %zu of %zu elements still hold the canary, first at "
                            "index %zu\n",
                            u.count, out.count, u.first);
            }
        }
        (case_differs ? differs : identical) += 1;
    }
    std::printf("digest check: %d identical, %d differ, %d output(s) with unwritten elements\n",
                identical, differs, unwritten);
    return differs || unwritten ? kFindings : kOk;
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
        verb->add_option("--file", args->file,
                         "baseline file (default: bench/baselines/KERNEL.toml in the source tree)");
        verb->add_option("--shapes", args->shapes,
                         "shapes, ';'-separated: rows=1,n=7168;rows=4096,n=7168 (default: "
                         "record the kernel's, check every recorded one)");
        verb->add_option("--dtype", args->dtypes, "element types (default: all the kernel's)");
        verb->add_option("-D,--define", args->defines,
                         verb == record ? "NAME=VALUE injected as a define"
                                        : "NAME=VALUE overriding the recorded defines");
        verb->add_option("--device", args->device, "device ordinal")->capture_default_str();
    }
    record->add_option("--seed", args->seed, "input generator seed")->capture_default_str();
    return [args, record] { return record->parsed() ? run_record(*args) : run_check(*args); };
}

} // namespace kjit::cli
