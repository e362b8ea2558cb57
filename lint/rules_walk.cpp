#include "lint/rules_walk.hpp"

#include "jit/compiler.hpp"
#include "lint/parallel.hpp"
#include "lint/preprocess.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <map>
#include <optional>
#include <set>

namespace kjit::lint {

namespace {

struct WalkJob {
    const SourceFile* file;
    std::map<std::string, std::string> defines;
    const Macros* predefined;
    WalkResult result;
};

using Key = std::pair<std::string, std::size_t>; // a directive: file name, index in its scan

// What every walk said about one live #if/#elif.
struct ConditionFacts {
    std::set<std::size_t> undefined; // undefined in every walk that evaluated it
    bool uncertain = false;
};

// Whether NVRTC compiles `#include <name>` with the resolver's directories, as kjit compiles
// (no lookup beside the including file): nullopt when it does, else its first catastrophic
// error (or first error). NVRTC provides some of the toolkit's headers itself, so a missing
// include seen inside them is only an error when NVRTC says so. Asked once per process.
std::optional<std::string> toolkit_header_error(const std::string& name,
                                                const IncludeResolver& resolver) {
    static std::mutex mutex;
    static std::map<std::pair<std::string, std::vector<std::string>>, std::optional<std::string>>
        cache;
    const auto dirs = resolver.search_dirs();
    const auto key = std::pair{name, dirs};
    {
        const std::lock_guard lock(mutex);
        if (const auto it = cache.find(key); it != cache.end())
            return it->second;
    }
    SourceSet probe;
    probe.add({"kjit_include_probe.cu", "kjit_include_probe.cu", "#include <" + name + ">\n",
               {}, 0});
    CompileOptions options;
    options.include_dirs = dirs;
    options.extra = {"--no-source-include"};
    options.entry_optional = true;
    std::optional<std::string> error;
    try {
        (void)compile(probe, "kjit_include_probe", options);
    } catch (const CompileError& e) {
        const auto& d = e.diagnostics;
        const auto fatal = std::find_if(d.begin(), d.end(), [](const Diagnostic& x) {
            return x.message.find("cannot open source file") != std::string::npos;
        });
        error = fatal != d.end() ? fatal->format() : d.empty() ? e.log : d.front().format();
    } catch (const std::exception& e) {
        error = e.what();
    }
    const std::lock_guard lock(mutex);
    cache.emplace(key, error);
    return error;
}

bool comparison(std::string_view op) {
    return op == "==" || op == "!=" || op == "<" || op == ">" || op == "<=" || op == ">=";
}

// Whether a token may stand beside an operand of a comparison that is all of its side.
bool boundary(const std::vector<PpToken>& args, std::size_t i) {
    if (i >= args.size())
        return true;
    static const std::set<std::string_view> kBounds = {"(", ")", "&&", "||", "!", "?",
                                                      ":", "and", "or", "not"};
    return kBounds.contains(args[i].text);
}

class WalkRules {
  public:
    WalkRules(const LintRequest& r, std::vector<Diagnostic>& out) : r_(r), out_(out) {}

    std::set<std::string> run(const std::vector<const SourceFile*>& files) {
        std::optional<IncludeResolver> own;
        if (!r_.resolver)
            own.emplace(*r_.sources);
        const IncludeResolver& resolver = r_.resolver ? *r_.resolver : *own;
        toolkit_ = !resolver.toolkit_dirs().empty();
        resolver_ = &resolver;
        ScanCache scans(*r_.sources);
        const int version = nvrtc_version();
        std::vector<Macros> predefined;
        for (const auto& arch : r_.archs)
            predefined.push_back(nvrtc_macros(arch, version));

        std::vector<WalkJob> jobs;
        auto add = [&](const SourceFile* f, const std::map<std::string, std::string>& defines) {
            for (const auto& p : predefined)
                jobs.push_back({f, defines, &p, {}});
        };
        for (const SourceFile* f : files) {
            if (!f->is_kernel())
                continue;
            std::vector<std::map<std::string, std::string>> sets{{}};
            for (const auto& inj : r_.injections)
                if (inj.source == f->kernel_name() &&
                    std::find(sets.begin(), sets.end(), inj.defines) == sets.end())
                    sets.push_back(inj.defines);
            for (const auto& s : sets)
                add(f, s);
        }
        run_jobs(resolver, scans, jobs);
        for (const auto& [name, _] : reach_)
            from_kernels_.insert(name);
        // A header no walked kernel includes is walked on its own.
        std::vector<WalkJob> alone;
        for (const SourceFile* f : files)
            if (!f->is_kernel() && !reach_.contains(f->name))
                for (const auto& p : predefined)
                    alone.push_back({f, {}, &p, {}});
        run_jobs(resolver, scans, alone);

        // Each name a reached file #defines, at its first definition (the file's set name
        // and line; no file when injected).
        std::map<std::string, std::pair<std::string, int>> defined_anywhere;
        for (const auto& [name, _] : reach_)
            if (const ScannedSource* s = scans.set_file(name))
                for (const auto& d : s->directives)
                    if (d.name == "define" && !d.args.empty())
                        defined_anywhere.emplace(d.args[0].text, std::pair{name, d.line});
        for (const auto& inj : r_.injections)
            for (const auto& [name, _] : inj.defines)
                defined_anywhere.emplace(name, std::pair<std::string, int>{});
        report_includes(scans);
        report_conditions(scans, defined_anywhere);
        std::set<std::string> reached;
        for (const auto& [name, _] : reach_)
            reached.insert(name);
        return reached;
    }

  private:
    void run_jobs(const IncludeResolver& resolver, ScanCache& scans, std::vector<WalkJob>& jobs) {
        detail::parallel_for(jobs.size(), [&](std::size_t i) {
            WalkOptions o{&resolver, &scans, *jobs[i].predefined, jobs[i].defines};
            jobs[i].result = walk(*jobs[i].file, o);
        });
        for (auto& job : jobs)
            merge(std::move(job.result));
    }

    void merge(WalkResult w) {
        for (auto& [name, bits] : w.reach) {
            auto& r = reach_[name];
            r.resize(std::max(r.size(), bits.size()), 0);
            for (std::size_t i = 0; i < bits.size(); ++i)
                r[i] |= bits[i];
        }
        for (auto& e : w.includes) {
            const Key k{e.file, e.directive};
            auto it = includes_.find(k);
            if (it == includes_.end())
                includes_.emplace(k, std::move(e));
            else if (it->second.broken.empty() && !e.broken.empty()) {
                it->second.broken = std::move(e.broken);
                it->second.broken_toolkit = std::move(e.broken_toolkit);
            }
        }
        for (auto& e : w.conditions) {
            const Key k{e.file, e.directive};
            const std::set<std::size_t> undefined(e.undefined.begin(), e.undefined.end());
            auto [it, fresh] = conditions_.try_emplace(k);
            if (fresh) {
                it->second.undefined = undefined;
            } else {
                std::set<std::size_t> both;
                std::set_intersection(it->second.undefined.begin(), it->second.undefined.end(),
                                      undefined.begin(), undefined.end(),
                                      std::inserter(both, both.begin()));
                it->second.undefined = std::move(both);
            }
            it->second.uncertain = it->second.uncertain || e.uncertain;
        }
    }

    std::string path_of(const std::string& name) const {
        const SourceFile* f = r_.sources->find(name);
        return f ? f->path : name;
    }

    // KJ005: a live #include NVRTC cannot find, or finds and cannot compile.
    void report_includes(ScanCache& scans) {
        for (const auto& [key, e] : includes_) {
            const ScannedSource* s = scans.set_file(key.first);
            if (!s || key.second >= s->directives.size() ||
                s->directives[key.second].args.empty())
                continue;
            const PpToken& h = s->directives[key.second].args[0];
            const std::string spelled = e.angled ? "<" + e.name + ">" : "\"" + e.name + "\"";
            std::string message;
            if (!e.resolved.found() && e.resolved.beside) {
                message = "#include " + spelled + " names no file NVRTC finds: it looks headers "
                          "up by the name as written, not beside the including file; write \"" +
                          e.resolved.beside->name + "\"";
            } else if (!e.resolved.found() && !e.angled) {
                message = "#include " + spelled +
                          " names no file among the kernel sources: NVRTC cannot find it";
            } else if (!e.resolved.found()) {
                message = "#include " + spelled +
                          ": NVRTC finds no such header (not a kernel source" +
                          (toolkit_ ? ", not in the CUDA toolkit's include directories"
                                   : "; no CUDA toolkit include directory was found") +
                          "): host headers are not available to NVRTC";
            } else if (!e.broken.empty() && e.broken_toolkit.empty()) {
                message = "#include " + spelled + ": NVRTC cannot compile it: " + e.broken;
            } else if (!e.broken.empty()) {
                const auto error = toolkit_header_error(e.broken_toolkit, *resolver_);
                if (!error)
                    continue;
                message = "#include " + spelled + ": NVRTC cannot compile it: " +
                          (e.broken_toolkit == e.name ? "" : "<" + e.broken_toolkit + ">: ") +
                          *error;
            } else {
                continue;
            }
            out_.push_back({path_of(key.first), h.line, h.column, Severity::error,
                            std::move(message), "KJ005"});
        }
    }

    // KJ003 and KJ008.
    void
    report_conditions(ScanCache& scans,
                      const std::map<std::string, std::pair<std::string, int>>& defined_anywhere) {
        for (const auto& [key, facts] : conditions_) {
            if (facts.uncertain)
                continue;
            const ScannedSource* s = scans.set_file(key.first);
            if (!s || key.second >= s->directives.size())
                continue;
            const Directive& d = s->directives[key.second];
            // A kernel's walk knows every macro defined before the condition, so a name
            // #defined only after it is read as 0 there. A header walked on its own lacks its
            // includers' macros: there a name defined anywhere is taken as theirs.
            // `#if !GUARD_H` then `#define GUARD_H`: an include guard, read as 0 on purpose.
            const bool alone = !from_kernels_.contains(key.first);
            const Directive* next =
                key.second + 1 < s->directives.size() ? &s->directives[key.second + 1] : nullptr;
            const auto guard = [&](const std::string& name) {
                return next && next->name == "define" && !next->args.empty() &&
                       next->args[0].text == name;
            };
            std::set<std::size_t> undefined;
            for (const std::size_t a : facts.undefined)
                if (a < d.args.size() && !(alone && defined_anywhere.contains(d.args[a].text)) &&
                    !guard(d.args[a].text))
                    undefined.insert(a);
            for (std::size_t i = 0; i + 2 < d.args.size(); ++i) {
                if (!undefined.contains(i) || !undefined.contains(i + 2) ||
                    !comparison(d.args[i + 1].text) || (i > 0 && !boundary(d.args, i - 1)) ||
                    !boundary(d.args, i + 3))
                    continue;
                const std::string& op = d.args[i + 1].text;
                const bool always = op == "==" || op == "<=" || op == ">=";
                out_.push_back({path_of(key.first), d.args[i].line, d.args[i].column,
                                Severity::error,
                                "#" + d.name + " compares " + d.args[i].text + " " + op + " " +
                                    d.args[i + 2].text +
                                    ", and neither is a macro: both are 0 to the preprocessor "
                                    "(enumerators and constants do not exist there), so it is "
                                    "always " + (always ? "true" : "false"),
                                "KJ008"});
                undefined.erase(i);
                undefined.erase(i + 2);
            }
            for (const std::size_t a : undefined) {
                const auto other = defined_anywhere.find(d.args[a].text);
                std::string why = ", which is neither defined in the source nor injected";
                if (other != defined_anywhere.end() && !other->second.first.empty()) {
                    const auto& [file, line] = other->second;
                    why = ", which no macro defines at this point (the #define at " +
                          (file == key.first ? "line " : path_of(file) + ":") +
                          std::to_string(line) + " is not in effect here)";
                }
                out_.push_back(
                    {path_of(key.first), d.args[a].line, d.args[a].column, Severity::error,
                     "#" + d.name + " reads " + d.args[a].text + why + ": it evaluates to 0",
                     "KJ003"});
            }
        }
    }

    const LintRequest& r_;
    std::vector<Diagnostic>& out_;
    std::map<std::string, std::vector<unsigned char>> reach_;
    std::set<std::string> from_kernels_; ///< set files a kernel's walk reached
    std::map<Key, IncludeEvent> includes_;
    std::map<Key, ConditionFacts> conditions_;
    bool toolkit_ = false;
    const IncludeResolver* resolver_ = nullptr;
};

} // namespace

std::set<std::string> lint_walks(const LintRequest& request,
                                 const std::vector<const SourceFile*>& files,
                                 std::vector<Diagnostic>& out) {
    return WalkRules(request, out).run(files);
}

} // namespace kjit::lint
