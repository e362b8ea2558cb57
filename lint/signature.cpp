#include "lint/signature.hpp"

#include "core/json.hpp"
#include "jit/source_lines.hpp"
#include "lint/evaluate.hpp"
#include "lint/macros.hpp"
#include "lint/parallel.hpp"
#include "lint/report.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <set>
#include <tuple>

namespace kjit::lint {

namespace {

struct ParseJob {
    const SourceFile* file;
    std::optional<ParsedUnit> unit;
    std::string error;
    /// Name expressions of the explicit instantiations the file writes itself, parsed as if
    /// listed with --instantiate; one that names no kernel is left out without a word.
    std::vector<std::string> own_instantiations{};
};

// "scale<float, 4>" for each `template [__global__] void scale<float, 4>(...)` of `text` (an
// explicit instantiation definition: no `extern` before it, no `<` after `template`); the
// template arguments as written, tokens joined with a space only between two words, qualified
// by the namespaces it is written in. Only those outside every #if (an include guard's aside):
// which branches compile is not known here, and one the compile skips is no kernel of it.
std::vector<std::string> explicit_instantiations(std::string_view text) {
    const LogicalSource source(text);
    std::vector<const LogicalLine*> directives;
    for (const LogicalLine& l : source.lines())
        if (l.is_directive && !l.directive.empty())
            directives.push_back(&l);
    const auto directive_is = [&](std::size_t k, std::string_view name) {
        return k < directives.size() && directives[k]->directive[0].text == name;
    };
    // `#ifndef G` then `#define G` first in the file: an include guard, no condition.
    const bool guarded = directive_is(0, "ifndef") && directive_is(1, "define") &&
                         directives[0]->directive.size() > 1 &&
                         directives[1]->directive.size() > 1 &&
                         directives[0]->directive[1].text == directives[1]->directive[1].text;
    std::vector<Token> code;
    int depth = 0;
    for (const LogicalLine& l : source.lines()) {
        if (l.is_directive) {
            const std::string_view d = l.directive.empty() ? "" : l.directive[0].text;
            depth += d == "if" || d == "ifdef" || d == "ifndef" ? 1 : d == "endif" ? -1 : 0;
        } else if (depth == (guarded ? 1 : 0)) {
            code.insert(code.end(), l.tokens.begin(), l.tokens.end());
        }
    }
    const auto is = [&](std::size_t i, std::string_view t) {
        return i < code.size() && code[i].text == t;
    };
    const auto word = [&](std::size_t i) {
        return code[i].kind == Token::Kind::identifier || code[i].kind == Token::Kind::number;
    };
    std::vector<std::string> out;
    // Per open brace: the namespace it opens ("a::b"), "" for any other, "?" for an anonymous
    // namespace (nothing in it can be named from outside).
    std::vector<std::string> scopes;
    for (std::size_t i = 0; i < code.size(); ++i) {
        if (is(i, "{") || is(i, "}")) {
            if (is(i, "}") && !scopes.empty())
                scopes.pop_back();
            else if (is(i, "{"))
                scopes.emplace_back();
            continue;
        }
        if (is(i, "namespace")) {
            std::string name;
            std::size_t k = i + 1;
            for (; k < code.size() && (code[k].kind == Token::Kind::identifier || is(k, ":"));
                 ++k)
                name += code[k].text;
            if (is(k, "{")) {
                scopes.push_back(name.empty() ? "?" : name);
                i = k;
            }
            continue;
        }
        if (!is(i, "template") || is(i + 1, "<") || (i > 0 && is(i - 1, "extern")))
            continue;
        std::size_t open = i + 1;
        while (open < code.size() && !is(open, "(") && !is(open, ";") && !is(open, "{"))
            ++open;
        if (!is(open, "(") || !is(open - 1, ">"))
            continue;
        // Back over the template arguments to their `<`, then over a qualified name.
        std::size_t start = open - 1;
        for (int angle = 0; start > i; --start) {
            angle += is(start, ">") ? 1 : is(start, "<") ? -1 : 0;
            if (angle == 0)
                break;
        }
        if (start <= i + 1 || code[start - 1].kind != Token::Kind::identifier)
            continue;
        --start;
        while (start >= i + 4 && is(start - 1, ":") && is(start - 2, ":") &&
               code[start - 3].kind == Token::Kind::identifier)
            start -= 3;
        std::string expr;
        bool anonymous = false;
        for (const std::string& scope : scopes) {
            anonymous = anonymous || scope == "?";
            if (!scope.empty())
                expr += scope + "::";
        }
        if (anonymous)
            continue;
        for (std::size_t k = start; k < open; ++k) {
            if (k > start && word(k) && word(k - 1))
                expr += ' ';
            expr += code[k].text;
        }
        out.push_back(std::move(expr));
    }
    return out;
}

void parse_all(const SignatureRequest& r, std::vector<ParseJob>& jobs) {
    detail::parallel_for(jobs.size(), [&](std::size_t i) {
        try {
            ParseOptions options = r.options;
            for (auto& e : jobs[i].own_instantiations)
                if (std::find(options.instantiations.begin(), options.instantiations.end(), e) ==
                    options.instantiations.end())
                    options.instantiations.push_back(e);
                else
                    e.clear(); // listed by the user: reported as theirs
            jobs[i].unit = r.clang->parse(*r.sources, *jobs[i].file, options);
        } catch (const std::exception& e) {
            jobs[i].error = e.what();
        }
    });
}

// The unit's macros as the preprocessor left them (the last definition of each name).
Macros unit_macros(const ParsedUnit& unit, const std::map<std::string, std::string>& defines) {
    Macros out;
    for (const auto& m : unit.macros) {
        Macro x;
        x.function_like = m.function_like;
        x.variadic = m.variadic;
        x.params = m.params;
        x.body = m.body;
        out[m.name] = std::move(x);
    }
    for (const auto& [name, value] : defines) {
        Macro x;
        x.body = tokenize(value);
        out[name] = std::move(x);
    }
    return out;
}

// The arguments of the first `__launch_bounds__(...)` (or `launch_bounds(...)`) in `t`.
std::optional<std::vector<std::vector<std::string>>> bound_args(const std::vector<std::string>& t) {
    for (std::size_t i = 0; i + 1 < t.size(); ++i) {
        if ((t[i] != "__launch_bounds__" && t[i] != "launch_bounds") || t[i + 1] != "(")
            continue;
        std::vector<std::vector<std::string>> args(1);
        int depth = 0;
        for (std::size_t j = i + 1; j < t.size(); ++j) {
            if (t[j] == "(" && depth++ == 0)
                continue;
            if (t[j] == ")" && --depth == 0)
                break;
            if (t[j] == "," && depth == 1)
                args.emplace_back();
            else
                args.back().push_back(t[j]);
        }
        return args;
    }
    return std::nullopt;
}

std::vector<LaunchBound> launch_bounds(const EntryPoint& e, const Macros& file_macros) {
    // An instantiation's template arguments are values the bounds may name (`Width * 32`).
    Macros macros = file_macros;
    for (const auto& [name, value] : e.template_values) {
        Macro v;
        if (value < 0)
            v.body = {"(", "0", "-", std::to_string(0ULL - static_cast<unsigned long long>(value)),
                      ")"};
        else
            v.body = {std::to_string(value)};
        macros[name] = std::move(v);
    }
    auto args = bound_args(e.specifiers);
    if (!args) {
        // Written through a macro (`#define LB(n) __launch_bounds__(n)`): read its expansion,
        // with object-like macros left as written (`LB(THREADS)` shows THREADS=128).
        Macros calls;
        for (const auto& [name, m] : macros)
            if (m.function_like)
                calls.emplace(name, m);
        if (const auto expanded = expand(e.specifiers, calls))
            args = bound_args(*expanded);
    }
    std::vector<LaunchBound> out;
    if (!args)
        return out;
    for (const auto& arg : *args) {
        LaunchBound b;
        for (const auto& t : arg)
            b.text += t;
        if (const auto x = expand(arg, macros))
            b.value = evaluate(*x, {});
        out.push_back(std::move(b));
    }
    return out;
}

Diagnostic at(const SourceSet& sources, const SourcePos& pos, Severity severity,
              std::string message) {
    const SourceFile* f = sources.find(pos.file);
    return {f                       ? f->path
            : pos.disk_path.empty() ? pos.file
                                    : pos.disk_path,
            pos.line,
            pos.column,
            severity,
            std::move(message),
            ""};
}

std::string number(long long v) {
    return v < 0 ? "?" : std::to_string(v);
}

// `s` padded with spaces to `width`, on the left when `right` (numbers line up).
std::string pad(const std::string& s, std::size_t width, bool right = false) {
    if (s.size() >= width)
        return s;
    const std::string fill(width - s.size(), ' ');
    return right ? fill + s : s + fill;
}

std::string json_number(long long v) {
    return v < 0 ? "null" : std::to_string(v);
}

} // namespace

bool SignatureReport::has_errors() const {
    return std::any_of(kernels.begin(), kernels.end(), [](const KernelSignature& k) {
        return std::any_of(k.diagnostics.begin(), k.diagnostics.end(),
                           [](const Diagnostic& d) { return d.severity == Severity::error; });
    });
}

std::vector<long long> param_offsets(const std::vector<KernelParam>& params) {
    std::vector<long long> out;
    long long at = 0;
    for (const auto& p : params) {
        if (at < 0 || p.size < 0 || p.align <= 0) {
            out.push_back(-1);
            at = -1;
            continue;
        }
        at = (at + p.align - 1) / p.align * p.align;
        out.push_back(at);
        at += p.size;
    }
    return out;
}

SignatureReport signatures(const SignatureRequest& r) {
    const SourceSet& sources = *r.sources;
    std::vector<const SourceFile*> files;
    if (r.targets.empty()) {
        files = sources.kernels();
    } else {
        for (const auto& t : r.targets)
            if (const SourceFile* f = sources.find(t))
                files.push_back(f);
    }
    // Each file's explicit instantiations, lexed once however many units reach it.
    std::map<const SourceFile*, std::vector<std::string>> instantiations_of;
    const auto instantiations = [&](const SourceFile* f) -> const std::vector<std::string>& {
        auto it = instantiations_of.find(f);
        if (it == instantiations_of.end())
            it = instantiations_of.emplace(f, explicit_instantiations(f->text)).first;
        return it->second;
    };
    std::vector<ParseJob> jobs;
    for (const SourceFile* f : files)
        jobs.push_back({f, {}, {}, instantiations(f)});
    parse_all(r, jobs);
    // A unit that includes a header of the set writing explicit instantiations is parsed again
    // with them (which headers it reaches is known only from its parse).
    std::vector<ParseJob> again;
    std::vector<std::size_t> again_of;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        if (!jobs[i].unit)
            continue;
        std::vector<std::string> more = jobs[i].own_instantiations;
        for (const std::string& name : jobs[i].unit->files)
            if (const SourceFile* h = sources.find(name); h && h != jobs[i].file)
                for (const std::string& e : instantiations(h))
                    if (std::find(more.begin(), more.end(), e) == more.end())
                        more.push_back(e);
        if (more.size() > jobs[i].own_instantiations.size()) {
            again.push_back({jobs[i].file, {}, {}, std::move(more)});
            again_of.push_back(i);
        }
    }
    parse_all(r, again);
    for (std::size_t k = 0; k < again.size(); ++k)
        if (again[k].unit)
            jobs[again_of[k]] = std::move(again[k]);
    // A header with a kernel that no parsed file includes is parsed on its own.
    if (r.targets.empty()) {
        std::set<std::string> reached;
        for (const auto& j : jobs)
            if (j.unit)
                reached.insert(j.unit->files.begin(), j.unit->files.end());
        std::vector<ParseJob> alone;
        for (const SourceFile* h : sources.headers())
            if (!reached.contains(h->name) && h->text.find("__global__") != std::string::npos)
                alone.push_back({h, {}, {}, instantiations(h)});
        parse_all(r, alone);
        jobs.insert(jobs.end(), std::make_move_iterator(alone.begin()),
                    std::make_move_iterator(alone.end()));
    }

    SignatureReport report;
    // Each translation unit is its own program: two .cu files may each define an `extern "C"`
    // kernel of one name, and both are listed. A kernel is one definition (a header's kernel
    // is listed once however many units include it); a declaration is listed only where no
    // unit defines that symbol.
    std::set<std::string> seen, defined;
    for (const auto& job : jobs)
        if (job.unit)
            for (const auto& e : job.unit->entries)
                if (e.is_definition && !e.mangled.empty())
                    defined.insert(e.mangled);
    std::map<std::string, std::string> failed_instantiations; // expression -> first reason
    std::set<std::string> resolved_instantiations;
    for (const auto& job : jobs) {
        if (job.file->is_kernel())
            report.units.push_back(job.file->name);
        if (!job.unit) {
            report.notes.push_back(job.file->path + ": not parsed: " + job.error);
            continue;
        }
        const Macros macros = unit_macros(*job.unit, r.options.defines);
        const auto& own = job.own_instantiations;
        for (const auto& e : job.unit->entries) {
            if (!e.error.empty()) {
                if (std::find(own.begin(), own.end(), e.instantiation) == own.end())
                    failed_instantiations.try_emplace(e.instantiation, e.error);
                continue;
            }
            if (!e.instantiation.empty())
                resolved_instantiations.insert(e.instantiation);
            if (!e.is_definition && defined.contains(e.mangled))
                continue;
            const std::string key = e.mangled + "@" + e.pos.file + ":" +
                                    std::to_string(e.pos.line) + ":" +
                                    std::to_string(e.pos.column) + ":" + e.instantiation;
            if (!seen.insert(key).second)
                continue;
            KernelSignature k;
            k.entry = e;
            // A kernel of the set is shown by its path; one in a header found through -I or
            // the toolkit by that header's path on disk (never the unit's, with the header's line).
            const SourceFile* where = sources.find(e.pos.file);
            k.path = where                      ? where->path
                     : !e.pos.disk_path.empty() ? e.pos.disk_path
                                                : job.file->path;
            k.unit = job.file->name;
            k.offsets = param_offsets(e.params);
            k.bytes = e.params.empty()       ? 0
                      : k.offsets.back() < 0 ? -1
                                             : k.offsets.back() + e.params.back().size;
            if (std::any_of(e.params.begin(), e.params.end(),
                            [](const KernelParam& p) { return p.dependent; }))
                k.bytes = -1;
            k.launch_bounds = launch_bounds(e, macros);
            for (const auto& p : e.params)
                if (!p.error.empty())
                    k.diagnostics.push_back(at(sources, p.pos, Severity::error, p.error));
            if (e.is_template)
                k.diagnostics.push_back(
                    at(sources, e.pos, Severity::note,
                       e.name +
                           " is a template: its parameter layout depends on the template "
                           "arguments; list an instantiation with --instantiate '" +
                           e.qualified + "<...>'"));
            report.kernels.push_back(std::move(k));
        }
    }
    // A template listed with an instantiation needs no note asking for one.
    std::set<std::tuple<std::string, int, int>> instantiated;
    for (const auto& k : report.kernels)
        if (!k.entry.instantiation.empty())
            instantiated.emplace(k.entry.pos.file, k.entry.pos.line, k.entry.pos.column);
    for (auto& k : report.kernels)
        if (k.entry.is_template &&
            instantiated.contains({k.entry.pos.file, k.entry.pos.line, k.entry.pos.column}))
            std::erase_if(k.diagnostics,
                          [](const Diagnostic& d) { return d.severity == Severity::note; });
    for (const auto& [expr, why] : failed_instantiations)
        if (!resolved_instantiations.contains(expr)) {
            KernelSignature k;
            k.entry.name = k.entry.instantiation = expr;
            k.diagnostics.push_back({"--instantiate", 0, 0, Severity::error, why, ""});
            report.kernels.push_back(std::move(k));
        }
    return report;
}

std::string format_signatures(const SignatureReport& report, bool json) {
    std::string out;
    std::size_t errors = 0;
    for (const auto& k : report.kernels)
        for (const auto& d : k.diagnostics)
            errors += d.severity == Severity::error;
    if (json) {
        out = "[";
        for (std::size_t n = 0; n < report.kernels.size(); ++n) {
            const KernelSignature& k = report.kernels[n];
            const EntryPoint& e = k.entry;
            out += std::string(n ? ",\n " : "\n ") + "{\"path\": " + json_string(k.path) +
                   ", \"line\": " + std::to_string(e.pos.line) +
                   ", \"column\": " + std::to_string(e.pos.column) +
                   ", \"name\": " + json_string(e.name) +
                   ", \"qualified\": " + json_string(e.qualified) +
                   ", \"symbol\": " + (e.mangled.empty() ? "null" : json_string(e.mangled)) +
                   ", \"template\": " + (e.is_template ? "true" : "false") +
                   ", \"instantiation\": " +
                   (e.instantiation.empty() ? "null" : json_string(e.instantiation)) +
                   ", \"bytes\": " + json_number(k.bytes) + ", \"launch_bounds\": [";
            for (std::size_t i = 0; i < k.launch_bounds.size(); ++i)
                out += std::string(i ? ", " : "") +
                       "{\"text\": " + json_string(k.launch_bounds[i].text) + ", \"value\": " +
                       (k.launch_bounds[i].value ? std::to_string(*k.launch_bounds[i].value)
                                                 : "null") +
                       "}";
            out += "], \"params\": [";
            for (std::size_t i = 0; i < e.params.size(); ++i) {
                const auto& p = e.params[i];
                out += std::string(i ? ", " : "") + "{\"name\": " + json_string(p.name) +
                       ", \"type\": " + json_string(p.type) + ", \"size\": " + json_number(p.size) +
                       ", \"align\": " + json_number(p.align) +
                       ", \"offset\": " + json_number(k.offsets[i]) + "}";
            }
            out += "], \"diagnostics\": [";
            for (std::size_t i = 0; i < k.diagnostics.size(); ++i) {
                const Diagnostic& d = k.diagnostics[i];
                out += std::string(i ? ", " : "") + "{\"path\": " + json_string(d.path) +
                       ", \"line\": " + std::to_string(d.line) +
                       ", \"column\": " + std::to_string(d.column) + ", \"severity\": \"" +
                       std::string(severity_name(d.severity)) +
                       "\", \"message\": " + json_string(d.message) + "}";
            }
            out += "]}";
        }
        return out + (report.kernels.empty() ? "]\n" : "\n]\n");
    }
    for (const auto& k : report.kernels) {
        const EntryPoint& e = k.entry;
        if (!k.path.empty() || e.pos.line > 0) {
            std::string lb = "no __launch_bounds__";
            if (!k.launch_bounds.empty()) {
                lb = "__launch_bounds__(";
                for (std::size_t i = 0; i < k.launch_bounds.size(); ++i) {
                    const LaunchBound& b = k.launch_bounds[i];
                    lb += (i ? ", " : "") + b.text;
                    if (b.value && b.text != std::to_string(*b.value))
                        lb += "=" + std::to_string(*b.value);
                }
                lb += ")";
            }
            // As a contract's step names it: with its namespaces.
            const std::string name = !e.instantiation.empty() ? e.instantiation
                                     : !e.qualified.empty()   ? e.qualified
                                                              : e.name;
            out += k.path + ":" + std::to_string(e.pos.line) + ":" + std::to_string(e.pos.column) +
                   ": " + name + (e.is_template ? " (template)" : "") + "  " + lb + "  " +
                   std::to_string(e.params.size()) + " parameter(s), " + number(k.bytes) +
                   " bytes\n";
            std::size_t w_name = 4, w_type = 4;
            for (const auto& p : e.params) {
                w_name = std::max(w_name, p.name.size());
                w_type = std::max(w_type, p.type.size());
            }
            auto row = [&](const std::string& i, const std::string& name, const std::string& type,
                           const std::string& size, const std::string& align,
                           const std::string& offset) {
                out += "  " + pad(i, 2, true) + "  " + pad(name, w_name) + "  " +
                       pad(type, w_type) + "  " + pad(size, 4, true) + "  " + pad(align, 5, true) +
                       "  " + pad(offset, 6, true) + "\n";
            };
            if (!e.params.empty())
                row("#", "name", "type", "size", "align", "offset");
            for (std::size_t i = 0; i < e.params.size(); ++i) {
                const auto& p = e.params[i];
                row(std::to_string(i + 1), p.name, p.type, number(p.size), number(p.align),
                    number(k.offsets[i]));
            }
        }
        for (const auto& d : k.diagnostics)
            out += d.format() + "\n";
    }
    return out + "sig: " + std::to_string(report.kernels.size()) + " entry point(s), " +
           std::to_string(errors) + " error(s)\n";
}

} // namespace kjit::lint
