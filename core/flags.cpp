#include "core/flags.hpp"

#include "core/flag_rules.hpp"
#include "core/names.hpp"

#include <algorithm>
#include <sstream>

extern char** environ; // NOLINT(readability-redundant-declaration): POSIX declares it nowhere

namespace kjit {

using detail::check_rule;
using detail::check_spec;
using detail::fill_default;
using detail::is_flag_name;
using detail::istarts_with;
using detail::parse_value;
using detail::Parsed;
using detail::quoted_value;
using detail::range_text;

namespace {

const std::pair<std::string, Severity>*
prefix_of(const std::vector<std::pair<std::string, Severity>>& prefixes, std::string_view name) {
    const std::pair<std::string, Severity>* best = nullptr;
    for (const auto& p : prefixes)
        if (istarts_with(name, p.first) && (!best || p.first.size() > best->first.size()))
            best = &p;
    return best;
}

/// A boolean that is true, or another flag set in the environment to a non-empty value.
bool is_on(const ResolvedFlag& f) {
    if (f.spec.type == FlagType::boolean)
        return f.value == "true";
    return f.source == FlagSource::environment && !f.value.empty();
}

Diagnostic flag_diagnostic(Severity severity, std::string name, std::string message) {
    return {std::move(name), 0, 0, severity, std::move(message), {}};
}

std::string flag_error_message(const std::vector<Diagnostic>& diagnostics) {
    std::size_t errors = 0;
    for (const auto& d : diagnostics)
        errors += d.severity == Severity::error;
    if (diagnostics.size() == 1)
        return diagnostics[0].message;
    std::string msg = std::to_string(errors) + " error(s) in the environment flags:";
    for (const auto& d : diagnostics)
        msg += "\n  " + std::string(severity_name(d.severity)) + ": " + d.message;
    return msg;
}

} // namespace

Environment process_environment() {
    Environment env;
    for (char** e = environ; e && *e; ++e) {
        const std::string_view entry(*e);
        const auto eq = entry.find('=');
        if (eq != std::string_view::npos)
            env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
    }
    return env;
}

std::string_view flag_type_name(FlagType type) {
    switch (type) {
    case FlagType::boolean:
        return "bool";
    case FlagType::integer:
        return "int";
    case FlagType::enumeration:
        return "enum";
    case FlagType::string:
        break;
    }
    return "string";
}

FlagError::FlagError(std::vector<Diagnostic> diagnostics_)
    : ConfigError(flag_error_message(diagnostics_)), diagnostics(std::move(diagnostics_)) {}

const ResolvedFlag& ResolvedFlags::find(std::string_view name) const {
    for (const auto& f : flags_)
        if (f.spec.name == name)
            return f;
    throw NotFoundError("environment flag " + std::string(name) + " is not declared");
}

bool ResolvedFlags::get_bool(std::string_view name) const {
    const ResolvedFlag& f = find(name);
    if (f.spec.type != FlagType::boolean)
        throw ConfigError("environment flag " + f.spec.name + " is a " +
                          std::string(flag_type_name(f.spec.type)) + ", not a bool");
    return f.value == "true";
}

std::int64_t ResolvedFlags::get_int(std::string_view name) const {
    const ResolvedFlag& f = find(name);
    if (f.spec.type != FlagType::integer)
        throw ConfigError("environment flag " + f.spec.name + " is a " +
                          std::string(flag_type_name(f.spec.type)) + ", not an int");
    return std::stoll(f.value);
}

const std::string& ResolvedFlags::get_string(std::string_view name) const {
    const ResolvedFlag& f = find(name);
    if (f.spec.type != FlagType::string && f.spec.type != FlagType::enumeration)
        throw ConfigError("environment flag " + f.spec.name + " is a " +
                          std::string(flag_type_name(f.spec.type)) + ", not a string or enum");
    return f.value;
}

FlagSource ResolvedFlags::source(std::string_view name) const {
    return find(name).source;
}

std::map<std::string, std::string> ResolvedFlags::defines() const {
    std::map<std::string, std::string> out;
    for (const auto& f : flags_) {
        if (f.spec.define.empty())
            continue;
        if (f.spec.type == FlagType::boolean)
            out[f.spec.define] = f.value == "true" ? "1" : "0";
        else
            out[f.spec.define] = f.value;
    }
    return out;
}

void ResolvedFlags::apply_to(std::map<std::string, std::string>& compile_defines) const {
    for (const auto& [name, value] : defines()) {
        auto it = compile_defines.find(name);
        if (it != compile_defines.end() && it->second != value)
            throw ConfigError("define " + name + "=" + value +
                              " from an environment flag conflicts with " + name + "=" +
                              it->second + " already in the compile options");
        compile_defines[name] = value;
    }
}

void FlagRegistry::add_prefix(std::string prefix, Severity unknown) {
    if (!is_flag_name(prefix))
        throw ConfigError("flag prefix " + quoted_value(prefix) +
                          " must be upper-case letters, digits and '_'");
    for (auto& p : prefixes_)
        if (p.first == prefix) {
            p.second = unknown;
            return;
        }
    prefixes_.emplace_back(std::move(prefix), unknown);
}

void FlagRegistry::declare(FlagSpec spec) {
    fill_default(spec);
    if (auto problem = check_spec(spec, prefixes_, flags_))
        throw ConfigError(problem->message);
    spec.default_value = *parse_value(spec, spec.default_value).value;
    flags_.push_back(std::move(spec));
}

void FlagRegistry::add_tier_rule(TierRule rule) {
    if (auto problem = check_rule(rule, flags_))
        throw ConfigError(problem->message);
    tier_rules_.push_back(std::move(rule));
}

void FlagRegistry::set_tier_default(std::string tier) {
    tier_default_ = std::move(tier);
}

const FlagSpec* FlagRegistry::find(std::string_view name) const {
    for (const auto& f : flags_)
        if (f.name == name)
            return &f;
    return nullptr;
}

void FlagRegistry::check_requires() const {
    for (const auto& f : flags_)
        for (const auto& r : f.requires_)
            if (!find(r))
                throw ConfigError("flag " + f.name + " requires " + r +
                                  ", which is not a declared flag");
}

std::vector<std::string> FlagRegistry::restore_set(const Environment& env) const {
    std::vector<std::string> out;
    for (const auto& [name, value] : env)
        if (prefix_of(prefixes_, name))
            out.push_back(name);
    return out;
}

ResolvedFlags FlagRegistry::resolve() const {
    return resolve(process_environment());
}

ResolvedFlags FlagRegistry::resolve(const Environment& env) const {
    check_requires();
    std::vector<Diagnostic> diagnostics;
    ResolvedFlags out;
    out.restore_set_ = restore_set(env);

    for (const auto& name : out.restore_set_) {
        if (find(name))
            continue;
        const auto* prefix = prefix_of(prefixes_, name);
        std::vector<std::string> candidates;
        for (const auto& f : flags_)
            if (prefix_of(prefixes_, f.name) == prefix)
                candidates.push_back(f.name);
        std::string message = name + " is not a declared flag";
        const auto near = nearest(name, candidates, prefix->first.size());
        if (!near.empty())
            message += did_you_mean(near);
        else if (candidates.empty())
            message += " (no flags are declared under " + prefix->first + ")";
        else
            message += " (declared under " + prefix->first + ": " + join(candidates, ", ") + ")";
        diagnostics.push_back(flag_diagnostic(prefix->second, name, std::move(message)));
    }

    std::vector<bool> parsed_ok;
    for (const auto& spec : flags_) {
        ResolvedFlag r{spec, spec.default_value, FlagSource::default_value};
        bool ok = true;
        if (auto it = env.find(spec.name); it != env.end()) {
            r.source = FlagSource::environment;
            const Parsed p = parse_value(spec, it->second);
            if (p.value) {
                r.value = *p.value;
            } else {
                ok = false;
                diagnostics.push_back(flag_diagnostic(Severity::error, spec.name,
                                                      spec.name + "=" + it->second + " " +
                                                          p.problem));
            }
        }
        out.flags_.push_back(std::move(r));
        parsed_ok.push_back(ok);
    }

    for (std::size_t i = 0; i < out.flags_.size(); ++i) {
        const ResolvedFlag& f = out.flags_[i];
        if (!parsed_ok[i] || !is_on(f))
            continue;
        for (const auto& req : f.spec.requires_) {
            const auto& rf = out.find(req);
            if (is_on(rf))
                continue;
            const bool set = rf.source == FlagSource::environment;
            diagnostics.push_back(flag_diagnostic(
                Severity::error, f.spec.name,
                f.spec.name + " requires " + req + ", which is " +
                    (set ? "set to " + quoted_value(env.at(req)) : std::string("not set"))));
        }
    }

    std::vector<std::string> tags;
    for (const auto& rule : tier_rules_)
        if (out.find(rule.flag).value == rule.value &&
            std::find(tags.begin(), tags.end(), rule.tag) == tags.end())
            tags.push_back(rule.tag);
    out.tier_ = tags.empty() ? tier_default_ : join(tags, "+");

    const bool failed = std::any_of(diagnostics.begin(), diagnostics.end(),
                                    [](const auto& d) { return d.severity == Severity::error; });
    if (failed)
        throw FlagError(std::move(diagnostics));
    out.warnings_ = std::move(diagnostics);
    return out;
}

std::string flag_type_text(const FlagSpec& spec) {
    std::string t(flag_type_name(spec.type));
    if (spec.type == FlagType::integer) {
        const std::string r = range_text(spec);
        if (!r.empty())
            t += " " + r;
    } else if (spec.type == FlagType::enumeration) {
        t += " " + join(spec.choices, "|");
    }
    return t;
}

namespace {
std::string markdown_cell(std::string s) {
    std::string out;
    for (char c : s)
        out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
}
} // namespace

std::string FlagRegistry::markdown() const {
    std::ostringstream os;
    os << "| flag | type | default | what it does |\n|---|---|---|---|\n";
    for (const auto& f : flags_) {
        std::string doc = f.doc;
        if (!f.requires_.empty()) {
            std::vector<std::string> names;
            for (const auto& r : f.requires_)
                names.push_back("`" + r + "`");
            doc += (doc.empty() ? "" : "; ") + std::string("requires ") + join(names, ", ");
        }
        if (!f.define.empty())
            doc += (doc.empty() ? "" : "; ") + std::string("compiles with `-D") + f.define + "`";
        os << "| `" << f.name << "` | " << markdown_cell(flag_type_text(f)) << " | "
           << (f.default_value.empty() ? "(empty)" : "`" + markdown_cell(f.default_value) + "`")
           << " | " << markdown_cell(doc) << " |\n";
    }
    return os.str();
}

FlagRegistry builtin_flags() {
    FlagRegistry r;
    r.add_prefix("KJIT_");
    auto flag = [&](std::string_view name, FlagType type, std::string def, std::string doc) {
        FlagSpec s;
        s.name = name;
        s.type = type;
        s.default_value = std::move(def);
        s.doc = std::move(doc);
        return s;
    };
    r.declare(flag(kFlagDriverLibrary, FlagType::string, "libcuda.so.1",
                   "the CUDA driver library to open with dlopen"));
    r.declare(flag(kFlagCacheDir, FlagType::string, "",
                   "disk cache directory; empty: $XDG_CACHE_HOME/kjit, else ~/.cache/kjit"));
    FlagSpec max_bytes = flag(kFlagCacheMaxBytes, FlagType::integer, "1073741824",
                              "size cap of the disk cache; least recently used entries go first");
    max_bytes.min = 1048576;
    r.declare(std::move(max_bytes));
    FlagSpec lock_wait = flag(kFlagCacheLockWait, FlagType::integer, "30",
                              "seconds to wait for another process compiling the same kernel "
                              "(holding its cache lock) before compiling it here; 0: do not wait");
    lock_wait.min = 0;
    lock_wait.max = 86400;
    r.declare(std::move(lock_wait));
    FlagSpec jobs =
        flag(kFlagCompileJobs, FlagType::integer, "0", "parallel NVRTC compiles; 0: one per core");
    jobs.min = 0;
    jobs.max = 1024;
    r.declare(std::move(jobs));
    r.declare(flag("KJIT_COMPILE_WORKER", FlagType::string, "",
                   "compile-worker executable (kjit compile-worker); empty: compile on threads "
                   "(the kjit verbs: on kjit itself). One that cannot start or does not answer "
                   "is warned about once per batch, and compiles go on on threads"));
    r.declare(flag(kFlagKernelDir, FlagType::string, "",
                   "read kernels from this directory instead of the embedded copies"));
    r.declare(flag(kFlagAllowUnreadDefines, FlagType::boolean, "false",
                   "a define a shape file injects that the kernel never reads, or #defines "
                   "again, is a warning at prepare, not an error"));
    r.declare(flag(kFlagLedger, FlagType::boolean, "false",
                   "record every launch: kernel, geometry, registers (kjit ledger reads it)"));
    FlagSpec ledger_timing = flag("KJIT_LEDGER_TIMING", FlagType::boolean, "false",
                                  "also time each recorded launch with a pair of events");
    ledger_timing.requires_ = {std::string(kFlagLedger)};
    r.declare(std::move(ledger_timing));
    FlagSpec ledger_file = flag("KJIT_LEDGER_FILE", FlagType::string, "kjit-ledger.csv",
                                "where a recording process writes its ledger at exit");
    ledger_file.requires_ = {std::string(kFlagLedger)};
    r.declare(std::move(ledger_file));
    r.declare(flag(kFlagNoCache, FlagType::boolean, "false",
                   "neither read nor write the disk cache: compile every kernel afresh"));
    r.declare(flag(kFlagRemoteCache, FlagType::string, "",
                   "remote cache behind the disk cache: "
                   "redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]"));
    r.declare(flag(kFlagRemotePrefix, FlagType::string, "kjit",
                   "prefix of the remote cache's keys: PREFIX:e:KEY entries, PREFIX:l:KEY leases"));
    r.declare(flag(kFlagRemoteSecret, FlagType::string, "",
                   "owner-only file: the secret remote entries are signed with (HMAC-SHA-256)"));
    r.declare(flag(kFlagRemoteUnsigned, FlagType::boolean, "false",
                   "no secret: use the remote cache unsigned (whoever can write it runs code)"));
    FlagSpec timeout = flag(kFlagRemoteTimeout, FlagType::integer, "500",
                            "ms the remote cache may take to connect or answer, else it is off");
    timeout.min = 1;
    timeout.max = 60000;
    r.declare(std::move(timeout));
    FlagSpec lease = flag(kFlagRemoteLease, FlagType::integer, "10000",
                          "ms a remote compile lease lives unless its holder renews it");
    lease.min = 100;
    lease.max = 3600000;
    r.declare(std::move(lease));
    FlagSpec sweep_max = flag(kFlagSweepMaxVariants, FlagType::integer, "10000",
                              "the most points of a sweep's space an exhaustive sweep evaluates; "
                              "a larger space is refused before anything is planned");
    sweep_max.min = 1;
    sweep_max.max = 1000000000;
    r.declare(std::move(sweep_max));
    r.declare(flag("KJIT_BUILD_DIR", FlagType::string, "build",
                   "build directory of run.sh, test.sh and scripts/build.sh"));
    r.declare(flag("KJIT_TEST_SKIP_EXIT", FlagType::boolean, "false",
                   "tests: a GPU test without a device exits 77, read as skipped (CTest sets it)"));
    FlagSpec test_seed = flag(kFlagTestSeed, FlagType::integer, "0",
                              "tests: the seed of every randomized test (a failure prints the "
                              "one it used); 0: a fresh one per run");
    test_seed.min = 0;
    r.declare(std::move(test_seed));
    return r;
}


const ResolvedFlags& process_flags() {
    // Never destroyed: static objects that read a flag in their destructor (the launch ledger's
    // file at exit) may outlive a function-local object. A failed resolution leaves it unset,
    // so the next call throws again.
    static const ResolvedFlags* const flags = new ResolvedFlags(builtin_flags().resolve());
    return *flags;
}

} // namespace kjit
