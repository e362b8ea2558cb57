#include "runtime/engine.hpp"

#include "core/names.hpp"
#include "core/warnings.hpp"
#include "jit/compiler.hpp"
#include "jit/define_use.hpp"
#include "jit/project.hpp"

#include <algorithm>
#include <chrono>
#include <set>

namespace kjit {

const char* prepared_name(Prepared origin) {
    switch (origin) {
    case Prepared::memory:
        return "memory";
    case Prepared::disk:
        return "hit";
    case Prepared::remote:
        return "remote";
    case Prepared::compiled:
        return "miss";
    case Prepared::failed:
        break;
    }
    return "FAILED";
}

struct Engine::Loaded {
    std::string key;
    Module module;
    std::unordered_map<std::string, Function, StringHash, std::equal_to<>> functions;
    /// Name expression -> lowered name, for the spec's instantiations.
    std::map<std::string, std::string, std::less<>> lowered;
};

namespace {

/// A compile that failed on one of the spec's `instantiations`: NVRTC reports it in the name
/// map it builds from them (`__nv_name_map:2:25: error: identifier "scale" is undefined`), a
/// place in no file; the mistake is the shape file's `instantiations`, so it is said there.
std::exception_ptr instantiation_error(const KernelSpec& spec, const std::exception_ptr& error) {
    if (spec.instantiations.empty() || spec.instantiations_where.path.empty())
        return error;
    try {
        std::rethrow_exception(error);
    } catch (const std::exception& e) {
        if (const auto m = name_map_error(e.what(), spec.instantiations))
            return std::make_exception_ptr(ConfigError(
                "kernel '" + spec.name + "': instantiation '" + m->expression +
                    "' names no template of " + (spec.source.empty() ? spec.name : spec.source) +
                    ".cu (NVRTC: " + m->nvrtc + ")",
                spec.instantiations_where));
    }
    return error;
}

double ms_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

CacheSettings with_flags(CacheSettings s, const ResolvedFlags& flags) {
    if (flags.get_bool(kFlagNoCache))
        s.use_disk = false;
    if (s.jobs <= 0 && flags.get_int(kFlagCompileJobs) > 0)
        s.jobs = static_cast<int>(flags.get_int(kFlagCompileJobs));
    return s;
}

} // namespace

std::string Engine::apply_tuned(const SourceSet& sources, const std::string& source,
                                const KernelSpec& spec, const ModelShape& shape,
                                std::map<std::string, std::string>& defines,
                                std::map<std::string, std::string>& origins,
                                std::map<std::string, SourceLocation>& places) const {
    if (!spec.tuned || spec.tuned_shape.empty())
        return {};
    const auto tuned_shape = resolve_tuned_shape(spec, shape);
    const std::string gpu = context_ ? context_->device().name() : std::string();
    const TunedMatch m =
        spec.tuned->lookup(source, tuned_shape, spec.tuned_dtype, gpu, arch_, spec.tuned_contract);
    const std::string table = display_path(spec.tuned->file);
    if (!m.entry) {
        const std::string contract = spec.tuned_contract.empty() ? source : spec.tuned_contract;
        std::string text =
            "no entry in " + table + " for " + tuned_kernel_name(source, spec.tuned_contract) +
            " " + tuned_shape_text(tuned_shape) +
            (spec.tuned_dtype.empty() ? "" : " " + spec.tuned_dtype) + " on " +
            (gpu.empty() ? "any GPU" : gpu) + " " + arch_ + ": the kernel's defaults";
        // A contract the table holds nothing of (a misspelt name?): the ones it holds.
        std::set<std::string> contracts;
        for (const TunedEntry& e : spec.tuned->entries)
            if (e.kernel == source)
                contracts.insert(e.contract_name());
        if (!contracts.empty() && !contracts.contains(contract))
            text += "; the table has no entry of " + contract + "; its contracts of " + source +
                    ": " + join(contracts);
        return text;
    }
    const std::string where = table + ":" + std::to_string(m.entry->where.line);
    // An entry is the configuration that was measured: all of it or none. A define the spec
    // sets itself (a production cap, a pinned knob) to another value makes it a configuration
    // nobody timed: the entry is not used, and the lookup says why.
    for (const auto& [name, value] : m.entry->defines)
        if (const auto own = defines.find(name); own != defines.end() && own->second != value)
            return where + " (" + m.how + ") not used: the spec sets " + name + "=" +
                   own->second + " and the entry was measured with " + name + "=" + value;
    for (const auto& [name, value] : m.entry->defines)
        if (!defines.contains(name)) {
            defines[name] = value;
            origins[name] = "tuned: " + where;
            places[name] = m.entry->where;
        }
    std::string text = where + " (" + m.how + ")";
    const std::string now = tuned_source_hash(sources, source);
    if (!m.entry->source.empty() && m.entry->source != now)
        text += ", recorded for source " + m.entry->source + ", now " + now +
                ": re-run kjit tune";
    return text;
}

Engine::Engine(const Context* context, EngineOptions options, SourceProvider sources)
    : flags_((options.flags ? *options.flags : builtin_flags()).resolve()), context_(context),
      arch_(!options.arch.empty() ? options.arch
            : context         ? context->device().arch()
                              : std::string("sm_90")),
      check_only_(options.check_only),
      cache_(with_flags(std::move(options.cache), flags_)), sources_(std::move(sources)) {
    CompileOptions arch_only;
    arch_only.arch = arch_;
    check_options(arch_only); // a bad arch is refused once, not as every kernel's failure
    if (check_only_ && context_)
        throw Error("an Engine that compiles to check only (EngineOptions::check_only) has "
                    "nothing to load: give it no context");
}

std::vector<PrepareRow> Engine::prepare(const ModelShape& shape,
                                        std::span<const KernelSpec> specs,
                                        const CompileProgress& progress) {
    auto sources = sources_.current();
    std::vector<PrepareRow> rows(specs.size());
    std::vector<CompileRequest> requests;
    std::vector<std::size_t> request_row;
    std::vector<std::shared_ptr<const Loaded>> loaded(specs.size());
    {
        std::shared_lock lock(mutex_);
        for (std::size_t i = 0; i < specs.size(); ++i) {
            PrepareRow& row = rows[i];
            row.name = specs[i].name;
            row.source = specs[i].source.empty() ? specs[i].name : specs[i].source;
            try {
                CompileOptions options;
                options.arch = arch_;
                options.toolkit_headers = true;
                options.check_only = check_only_;
                options.defines = resolve_defines(specs[i], shape);
                for (const auto& [name, _] : options.defines) {
                    const auto at = specs[i].define_sources.find(name);
                    row.define_origins[name] = at == specs[i].define_sources.end()
                                                   ? std::string("spec")
                                                   : display_location(at->second.name) + ":" +
                                                         std::to_string(at->second.name.column);
                }
                // The tuned entry's defines are placed at its line, as the spec's at theirs.
                auto places = define_places(specs[i]);
                row.tuned = apply_tuned(*sources, row.source, specs[i], shape, options.defines,
                                        row.define_origins, places);
                refuse_unread_diagnostics(
                    unread_define_diagnostics(*sources, sources->kernel(row.source), row.name,
                                              places, options.defines, Severity::error,
                                              specs[i].instantiations),
                    flags_.get_bool(kFlagAllowUnreadDefines));
                for (const auto& dir : sources_.include_dirs())
                    options.include_dirs.push_back(dir.string());
                options.name_expressions = specs[i].instantiations;
                {
                    const auto before = options.defines;
                    flags_.apply_to(options.defines);
                    for (const auto& [name, value] : options.defines)
                        if (!before.contains(name) || before.at(name) != value)
                            row.define_origins[name] = "flag";
                }
                row.defines = options.defines_text();
                row.define_values = options.defines;
                row.key = make_cache_key(*sources, row.source, options).hex();
                // A memory hit: this engine already loaded the key.
                if (const auto hit = by_key_.find(row.key); hit != by_key_.end()) {
                    loaded[i] = hit->second;
                    row.origin = Prepared::memory;
                } else {
                    requests.push_back({row.source, std::move(options)});
                    request_row.push_back(i);
                }
            } catch (...) {
                row.error = std::current_exception();
            }
        }
    }

    std::vector<Specialized> results = cache_.get_all(*sources, requests, progress);
    for (std::size_t r = 0; r < results.size(); ++r) {
        PrepareRow& row = rows[request_row[r]];
        Specialized& s = results[r];
        row.read_ms = s.read_ms;
        if (s.error) {
            row.error = instantiation_error(specs[request_row[r]], s.error);
            continue;
        }
        // What a dry run reads of the compile, without its CUBIN (a 10,000-variant sweep).
        auto slim = std::make_shared<CompiledKernel>();
        slim->kernel = s.compiled->kernel;
        slim->path = s.compiled->path;
        slim->source_hash = s.compiled->source_hash;
        slim->compile_ms = s.compiled->compile_ms;
        slim->options = s.compiled->options; // what the launch type check compiles the probe with
        slim->entries = s.compiled->entries;
        slim->lowered_names = s.compiled->lowered_names;
        row.compiled = std::move(slim);
        row.compile_ms = row.compiled->compile_ms;
        row.origin = s.origin == Origin::disk     ? Prepared::disk
                     : s.origin == Origin::remote ? Prepared::remote
                                                  : Prepared::compiled;
        if (!context_)
            continue;
        try {
            const auto start = std::chrono::steady_clock::now();
            Module module = Module::load(*context_, s.compiled->cubin, row.name);
            std::unordered_map<std::string, Function, StringHash, std::equal_to<>> functions;
            for (Function& f : module.functions()) {
                if (const EntryParams* e = row.compiled->entry(f.name()))
                    f.set_param_types(e->params);
                functions.emplace(f.name(), std::move(f));
            }
            loaded[request_row[r]] = std::make_shared<const Loaded>(
                Loaded{row.key, std::move(module), std::move(functions),
                       {row.compiled->lowered_names.begin(), row.compiled->lowered_names.end()}});
            row.load_ms = ms_since(start);
        } catch (...) {
            row.error = std::current_exception();
        }
    }
    for (auto& row : rows)
        if (row.error)
            row.origin = Prepared::failed;

    std::unique_lock lock(mutex_);
    snapshot_ = sources;
    shape_ = shape;
    specs_.assign(specs.begin(), specs.end());
    for (std::size_t i = 0; i < specs.size(); ++i)
        if (loaded[i]) {
            by_name_[specs[i].name] = loaded[i];
            by_key_[loaded[i]->key] = loaded[i];
        }
    return rows;
}

const Function& Engine::function_for(std::string_view name, std::string_view entry,
                                     const LaunchConfig& config) {
    std::string current(name);
    for (std::size_t hops = 0;; ++hops) {
        const Function& f = function(current, entry);
        std::string next;
        {
            std::shared_lock lock(mutex_);
            for (const auto& s : specs_)
                if (s.name == current)
                    next = s.fallback;
        }
        if (f.fits(config) || next.empty() || hops > specs_.size())
            return f;
        current = next;
    }
}

const Function& Engine::function(std::string_view name, std::string_view entry) {
    if (!sources_.override_dir().empty() && sources_.current() != snapshot_) {
        const ModelShape shape = shape_;
        const std::vector<KernelSpec> specs = specs_;
        for (const auto& row : prepare(shape, specs))
            if (row.error && row.name == name)
                std::rethrow_exception(row.error);
    }
    std::shared_lock lock(mutex_);
    const auto it = by_name_.find(name);
    if (it == by_name_.end())
        throw NotFoundError("no prepared kernel named '" + std::string(name) +
                            "' (prepare it with Engine::prepare first)");
    const Loaded& loaded = *it->second;
    auto f = loaded.functions.find(entry);
    if (f == loaded.functions.end())
        if (const auto lowered = loaded.lowered.find(entry); lowered != loaded.lowered.end())
            f = loaded.functions.find(lowered->second);
    if (f == loaded.functions.end()) {
        std::vector<std::string> symbols;
        for (const auto& [symbol, _] : loaded.functions)
            symbols.push_back(symbol);
        throw NotFoundError("prepared kernel '" + std::string(name) + "' has no entry point '" +
                            std::string(entry) + "'" + missing_entry_hint(entry, symbols) +
                            (entry.find('<') == std::string_view::npos
                                 ? std::string()
                                 : "; a template instantiation is compiled when the kernel's "
                                   "spec lists it in 'instantiations'"));
    }
    return f->second;
}

} // namespace kjit
