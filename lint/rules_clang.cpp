#include "lint/rules_clang.hpp"

#include "core/names.hpp"
#include "jit/define_use.hpp"
#include "lint/evaluate.hpp"
#include "lint/parallel.hpp"
#include "lint/scanner.hpp"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

namespace kjit::lint {

namespace {

// Every name a conditional directive mentions, `defined` operands included.
void tested_names(const ScannedSource& s, std::set<std::string>& out) {
    for (const auto& d : s.directives)
        if (is_conditional_start(d.name) || is_conditional_else(d.name))
            for (const auto& a : d.args)
                if (is_identifier(a.text) && a.text != "defined" && !is_reserved(a.text))
                    out.insert(a.text);
}

// The macros a parse read: those it expanded or tested, and every name in the body of one it
// expanded (libclang records no expansion nested in another).
std::set<std::string> read_macros(const ParsedUnit& unit) {
    std::map<std::string, std::vector<const MacroDef*>> defs;
    for (const auto& m : unit.macros)
        defs[m.name].push_back(&m);
    std::set<std::string> read;
    std::vector<std::string> work;
    for (const auto& u : unit.uses)
        if (read.insert(u.name).second)
            work.push_back(u.name);
    while (!work.empty()) {
        const std::string name = std::move(work.back());
        work.pop_back();
        const auto it = defs.find(name);
        if (it == defs.end())
            continue;
        for (const MacroDef* m : it->second)
            for (const auto& t : m->body)
                if (is_identifier(t) && read.insert(t).second)
                    work.push_back(t);
    }
    return read;
}

// The knob `name` is given a default: `#ifndef name` (or `#if !defined name`) is the directive
// right before its `#define`.
bool guarded_default(const ScannedSource& s, const std::string& name, int define_line) {
    for (std::size_t i = 1; i < s.directives.size(); ++i) {
        const Directive& d = s.directives[i];
        if (d.line != define_line || d.name != "define")
            continue;
        const Directive& g = s.directives[i - 1];
        if (g.name == "ifndef")
            return !g.args.empty() && g.args[0].text == name;
        if (g.name == "if") {
            std::string cond;
            for (const auto& a : g.args)
                cond += a.text;
            return cond == "!defined" + name || cond == "!defined(" + name + ")";
        }
        return false;
    }
    return false;
}

bool same_value(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    const auto va = evaluate(a, {}), vb = evaluate(b, {});
    if (va && vb)
        return *va == *vb;
    return a == b;
}

struct ParseJob {
    const SourceFile* file;
    std::map<std::string, std::string> defines;
    std::optional<ParsedUnit> unit;
    std::string error;
};

void run_parallel(const Libclang& clang, const SourceSet& sources,
                  const std::vector<std::string>& include_dirs, std::vector<ParseJob>& jobs) {
    detail::parallel_for(jobs.size(), [&](std::size_t i) {
        try {
            jobs[i].unit = clang.parse(sources, *jobs[i].file, {jobs[i].defines, include_dirs, {}});
        } catch (const std::exception& e) {
            jobs[i].error = e.what();
        }
    });
}

class ClangRules {
  public:
    ClangRules(const LintRequest& r, std::vector<Diagnostic>& out, std::vector<std::string>& notes)
        : r_(r), sources_(*r.sources), out_(out), notes_(notes) {}

    void run(const std::vector<const SourceFile*>& files) {
        // One parse with the source's own defaults, one per distinct injected define set.
        std::vector<ParseJob> jobs;
        std::map<const SourceFile*, std::vector<std::size_t>> by_file;
        // Both rules compare a kernel with its injected define sets: a kernel no shape file
        // specializes is not parsed.
        std::vector<const SourceFile*> kernels;
        for (const SourceFile* f : files)
            if (f->is_kernel() && !injections(*f).empty())
                kernels.push_back(f);
        for (const SourceFile* f : kernels) {
            by_file[f].push_back(jobs.size());
            jobs.push_back({f, {}, {}, {}});
            for (const Injection* inj : injections(*f)) {
                const bool seen =
                    std::any_of(by_file[f].begin(), by_file[f].end(),
                                [&](std::size_t j) { return jobs[j].defines == inj->defines; });
                if (!seen) {
                    by_file[f].push_back(jobs.size());
                    jobs.push_back({f, inj->defines, {}, {}});
                }
            }
        }
        const std::vector<std::string> include_dirs =
            r_.resolver ? r_.resolver->search_dirs() : IncludeResolver(sources_).search_dirs();
        run_parallel(*r_.clang, sources_, include_dirs, jobs);
        for (const SourceFile* f : kernels) {
            std::vector<const ParseJob*> units;
            for (std::size_t j : by_file[f]) {
                if (jobs[j].unit)
                    units.push_back(&jobs[j]);
                else
                    notes_.push_back(f->path + ": clang rules not checked: " + jobs[j].error);
            }
            if (units.empty())
                continue;
            unread_injections(*f, units);
            disagreeing_defaults(*f, *units.front()->unit);
        }
    }

  private:
    std::vector<const Injection*> injections(const SourceFile& f) const {
        std::vector<const Injection*> out;
        for (const auto& inj : r_.injections)
            if (inj.source == f.kernel_name() && !inj.contract)
                out.push_back(&inj);
        return out;
    }

    const ScannedSource& scanned(const std::string& name) {
        auto it = scans_.find(name);
        if (it == scans_.end()) {
            const SourceFile* f = sources_.find(name);
            it = scans_.emplace(name, f ? scan(f->text) : ScannedSource{}).first;
        }
        return it->second;
    }

    std::string path_of(const std::string& name) const {
        const SourceFile* f = sources_.find(name);
        return f ? f->path : name;
    }

    // KJ002
    void unread_injections(const SourceFile& f, const std::vector<const ParseJob*>& units) {
        for (const Injection* inj : injections(f)) {
            const auto unit = std::find_if(units.begin(), units.end(), [&](const ParseJob* u) {
                return u->defines == inj->defines;
            });
            if (unit == units.end())
                continue;
            const ParsedUnit& u = *(*unit)->unit;
            if (u.fatal) {
                notes_.push_back(f.path + ": KJ002 not checked for kernel '" + inj->spec +
                                 "': " + (u.errors.empty() ? "fatal error" : u.errors.front()));
                continue;
            }
            const std::set<std::string> read = read_macros(u);
            std::set<std::string> known = read;
            for (const auto& name : u.files)
                tested_names(scanned(name), known);
            std::vector<std::string> candidates;
            for (const auto& name : known)
                if (!is_reserved(name) && !inj->defines.contains(name) &&
                    std::none_of(u.macros.begin(), u.macros.end(), [&](const MacroDef& m) {
                        return m.name == name && m.function_like;
                    }))
                    candidates.push_back(name);
            // A read define whose value the compile #defines again, or that only its own
            // `#ifndef` default tests, or only a macro nothing expands reads (libclang counts
            // those as reads).
            const auto redefined = replaced_defines(sources_, f, inj->defines);
            std::map<std::string, UnreadDefine> defaulted;
            for (UnreadDefine& u : unread_defines(sources_, f, inj->defines, inj->instantiations))
                if (u.default_at || !u.unexpanded_macro.empty())
                    defaulted.emplace(u.name, std::move(u));
            for (const auto& [name, value] : inj->defines) {
                const auto again = redefined.find(name);
                const auto only_default = defaulted.find(name);
                std::string why;
                if (only_default != defaulted.end())
                    why = "it " + unread_reason(only_default->second, f.name);
                else if (!read.contains(name))
                    why = f.name + " never tests or expands it" +
                          did_you_mean(nearest(name, candidates));
                else if (again != redefined.end())
                    why = "it " + redefined_reason(name, again->second, false);
                else
                    continue;
                const auto at = inj->where.find(name);
                const SourceLocation key = at == inj->where.end() ? SourceLocation{} : at->second;
                out_.push_back(
                    {inj->file, key.line, key.column, Severity::error,
                     name + "=" + value + " is injected into kernel '" + inj->spec + "' but " + why,
                     "KJ002"});
            }
        }
    }

    // KJ004
    void disagreeing_defaults(const SourceFile& f, const ParsedUnit& defaults) {
        const auto injs = injections(f);
        for (const auto& m : defaults.macros) {
            if (m.function_like || m.pos.file.empty())
                continue;
            std::vector<std::pair<const Injection*, std::string>> production;
            for (const Injection* inj : injs)
                if (const auto it = inj->defines.find(m.name); it != inj->defines.end())
                    production.emplace_back(inj, it->second);
            // A production kernel that injects no value runs the default itself (a tuned
            // kernel on a device its table has no entry for, say): the default is production.
            const bool default_runs = production.size() < injs.size();
            if (production.empty() || default_runs ||
                !guarded_default(scanned(m.pos.file), m.name, m.pos.line))
                continue;
            const bool agrees =
                std::any_of(production.begin(), production.end(),
                            [&](const auto& p) { return same_value(m.body, tokenize(p.second)); });
            // A header's default serves every kernel that includes it: one of them that
            // injects the default's value makes it production.
            const auto includes_header = [&](const std::string& kernel) {
                const SourceFile* k = sources_.find(kernel + ".cu");
                if (!k)
                    return false;
                const auto files = sources_.includable(*k);
                return std::any_of(files.begin(), files.end(),
                                   [&](const SourceFile* h) { return h->name == m.pos.file; });
            };
            const bool shared_agrees =
                m.pos.file != f.name &&
                std::any_of(r_.injections.begin(), r_.injections.end(), [&](const Injection& i) {
                    const auto it = i.defines.find(m.name);
                    return !i.contract && it != i.defines.end() &&
                           same_value(m.body, tokenize(it->second)) && includes_header(i.source);
                });
            if (agrees || shared_agrees)
                continue;
            std::string values;
            for (std::size_t i = 0; i < production.size() && i < 3; ++i)
                values += (i ? ", " : "") + production[i].second + " for kernel '" +
                          production[i].first->spec + "' in " +
                          std::filesystem::path(production[i].first->file).filename().string();
            if (production.size() > 3)
                values += ", ...";
            out_.push_back({path_of(m.pos.file), m.pos.line, m.pos.column, Severity::warning,
                            "default " + m.name + "=" + join(m.body, " ") +
                                " matches no production value (" + values +
                                "): a build without the injected value runs another "
                                "configuration",
                            "KJ004"});
        }
    }

    const LintRequest& r_;
    const SourceSet& sources_;
    std::vector<Diagnostic>& out_;
    std::vector<std::string>& notes_;
    std::map<std::string, ScannedSource> scans_;
};

} // namespace

void lint_clang(const LintRequest& request, const std::vector<const SourceFile*>& files,
                std::vector<Diagnostic>& out, std::vector<std::string>& notes) {
    ClangRules(request, out, notes).run(files);
}

} // namespace kjit::lint
