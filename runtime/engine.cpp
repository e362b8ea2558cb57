#include "runtime/engine.hpp"

#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

#include <algorithm>
#include <chrono>

namespace kjit {

struct Engine::Loaded {
    std::string key;
    Module module;
    std::unordered_map<std::string, Function, StringHash, std::equal_to<>> functions;
};

namespace {

double ms_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

[[noreturn]] void fail_at(const std::string& file, const toml::source_region& where,
                          const std::string& message) {
    throw ConfigError(message, file, static_cast<int>(where.begin.line),
                      static_cast<int>(where.begin.column));
}

std::string define_value(const std::string& file, const toml::node& node) {
    if (auto i = node.as_integer())
        return std::to_string(i->get());
    if (auto s = node.as_string())
        return s->get();
    if (auto b = node.as_boolean())
        return b->get() ? "1" : "0";
    fail_at(file, node.source(), "a define's value must be an integer, a string or a boolean");
}

} // namespace

ShapeFile ShapeFile::load(const std::filesystem::path& path) {
    const std::string file = path.string();
    toml::table root;
    try {
        root = toml::parse_file(file);
    } catch (const toml::parse_error& e) {
        fail_at(file, e.source(), std::string(e.description()));
    } catch (const std::exception& e) {
        throw ConfigError(std::string("cannot read shape file: ") + e.what(), file);
    }
    ShapeFile out;
    for (const auto& [key, node] : root) {
        if (key == "shape") {
            const toml::table* t = node.as_table();
            if (!t)
                fail_at(file, node.source(), "'shape' must be a table of integers");
            for (const auto& [name, value] : *t) {
                const auto* i = value.as_integer();
                if (!i)
                    fail_at(file, value.source(),
                            "shape entry '" + std::string(name.str()) + "' must be an integer");
                out.shape.values[std::string(name.str())] = i->get();
            }
        } else if (key == "kernel") {
            const toml::array* list = node.as_array();
            if (!list || !list->is_array_of_tables())
                fail_at(file, node.source(), "'kernel' must be an array of tables ([[kernel]])");
            for (const auto& entry : *list) {
                const toml::table& t = *entry.as_table();
                KernelSpec spec;
                for (const auto& [k, v] : t) {
                    if (k == "name" || k == "source" || k == "fallback") {
                        const auto* s = v.as_string();
                        if (!s)
                            fail_at(file, v.source(), "'" + std::string(k.str()) + "' must be a string");
                        (k == "name" ? spec.name : k == "source" ? spec.source : spec.fallback) =
                            s->get();
                    } else if (k == "defines") {
                        const toml::table* d = v.as_table();
                        if (!d)
                            fail_at(file, v.source(), "'defines' must be a table");
                        for (const auto& [dn, dv] : *d) {
                            std::map<std::string, std::string> probe;
                            try {
                                add_define(probe, std::string(dn.str()) + "=" + define_value(file, dv));
                            } catch (const ConfigError& e) {
                                if (!e.file.empty())
                                    throw;
                                fail_at(file, dv.source(), e.message);
                            }
                            spec.defines.insert(probe.begin(), probe.end());
                        }
                    } else {
                        fail_at(file, k.source(),
                                "unknown key '" + std::string(k.str()) +
                                    "' in [[kernel]] (known: name, source, defines, fallback)");
                    }
                }
                if (spec.name.empty())
                    fail_at(file, t.source(), "[[kernel]] needs a 'name'");
                if (spec.source.empty())
                    spec.source = spec.name;
                out.kernels.push_back(std::move(spec));
            }
            for (const auto& k : out.kernels)
                if (!k.fallback.empty() &&
                    std::none_of(out.kernels.begin(), out.kernels.end(),
                                 [&](const KernelSpec& o) { return o.name == k.fallback; }))
                    fail_at(file, node.source(),
                            "kernel '" + k.name + "' names fallback '" + k.fallback +
                                "', which is not a [[kernel]] of this file");
        } else {
            fail_at(file, key.source(),
                    "unknown key '" + std::string(key.str()) + "' (known: shape, kernel)");
        }
    }
    return out;
}

std::map<std::string, std::string> resolve_defines(const KernelSpec& spec,
                                                   const ModelShape& shape) {
    std::map<std::string, std::string> out;
    for (const auto& [name, value] : spec.defines) {
        std::string v;
        for (std::size_t i = 0; i < value.size();) {
            if (value.compare(i, 2, "${") == 0) {
                const std::size_t end = value.find('}', i);
                if (end == std::string::npos)
                    throw ConfigError("kernel '" + spec.name + "': define " + name +
                                      " has an unclosed '${'");
                const std::string ref = value.substr(i + 2, end - i - 2);
                const auto it = shape.values.find(ref);
                if (it == shape.values.end())
                    throw ConfigError("kernel '" + spec.name + "': define " + name +
                                      " names shape entry '" + ref + "', which the shape lacks");
                v += std::to_string(it->second);
                i = end + 1;
            } else {
                v += value[i++];
            }
        }
        out[name] = v;
    }
    return out;
}

namespace {
CacheSettings with_flags(CacheSettings s, const ResolvedFlags& flags) {
    if (flags.get_bool(kFlagNoCache))
        s.use_disk = false;
    if (s.jobs <= 0 && flags.get_int(kFlagCompileJobs) > 0)
        s.jobs = static_cast<int>(flags.get_int(kFlagCompileJobs));
    return s;
}
} // namespace

Engine::Engine(const Context* context, EngineOptions options, SourceProvider sources)
    : flags_((options.flags ? *options.flags : builtin_flags()).resolve()), context_(context),
      arch_(!options.arch.empty() ? options.arch
            : context         ? context->device().arch()
                              : std::string("sm_90")),
      cache_(with_flags(std::move(options.cache), flags_)), sources_(std::move(sources)) {}

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
                options.defines = resolve_defines(specs[i], shape);
                flags_.apply_to(options.defines);
                row.defines = options.defines_text();
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
            row.error = s.error;
            continue;
        }
        row.compile_ms = s.compiled->compile_ms;
        row.origin = s.origin == Origin::disk ? Prepared::disk : Prepared::compiled;
        if (!context_)
            continue;
        try {
            const auto start = std::chrono::steady_clock::now();
            Module module = Module::load(*context_, s.compiled->cubin, row.name);
            std::unordered_map<std::string, Function, StringHash, std::equal_to<>> functions;
            for (Function& f : module.functions())
                functions.emplace(f.name(), std::move(f));
            loaded[request_row[r]] = std::make_shared<const Loaded>(
                Loaded{row.key, std::move(module), std::move(functions)});
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
    const auto f = it->second->functions.find(entry);
    if (f == it->second->functions.end())
        throw NotFoundError("prepared kernel '" + std::string(name) + "' has no entry point '" +
                            std::string(entry) + "'");
    return f->second;
}

} // namespace kjit
