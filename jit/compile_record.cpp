#include "jit/compile_record.hpp"

#include "jit/cache_entry.hpp"

#include <cstdlib>

namespace kjit {

namespace {

void line(std::string& out, std::string_view name, std::string_view value) {
    out.append(name);
    out += '=';
    out += escape_meta(value);
    out += '\n';
}

std::vector<std::string> split_lines(std::string_view s) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    for (std::size_t end; (end = s.find('\n', pos)) != std::string_view::npos; pos = end + 1)
        out.emplace_back(s.substr(pos, end - pos));
    out.emplace_back(s.substr(pos));
    return out;
}

// A diagnostic is one value: its fields escaped and joined by newlines (escaped again with the
// value), so a field may hold any text.
std::string diagnostic_value(const Diagnostic& d) {
    std::string v;
    for (const std::string& field : {d.path, std::to_string(d.line), std::to_string(d.column),
                                     std::string(severity_name(d.severity)), d.message, d.rule})
        v += (v.empty() ? "" : "\n") + escape_meta(field);
    return v;
}

Diagnostic diagnostic_of(std::string_view value) {
    const std::vector<std::string> f = split_lines(value);
    Diagnostic d;
    if (f.size() != 6)
        return d;
    d.path = unescape_meta(f[0]);
    d.line = std::atoi(f[1].c_str());
    d.column = std::atoi(f[2].c_str());
    for (Severity s : {Severity::note, Severity::warning, Severity::error})
        if (severity_name(s) == f[3])
            d.severity = s;
    d.message = unescape_meta(f[4]);
    d.rule = unescape_meta(f[5]);
    return d;
}

} // namespace

std::string escape_meta(std::string_view value) {
    std::string out;
    for (char c : value) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
    return out;
}

std::string unescape_meta(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 1 < s.size()) {
            out += s[i + 1] == 'n' ? '\n' : s[i + 1];
            ++i;
        } else {
            out += s[i];
        }
    }
    return out;
}

std::vector<std::string> meta_values(std::string_view meta, std::string_view name) {
    std::vector<std::string> out;
    for (const std::string& l : split_lines(meta))
        if (l.size() > name.size() && l.compare(0, name.size(), name) == 0 &&
            l[name.size()] == '=')
            out.push_back(unescape_meta(std::string_view(l).substr(name.size() + 1)));
    return out;
}

std::string kernel_meta(const CompiledKernel& c) {
    std::string out;
    line(out, "kernel", c.kernel);
    line(out, "path", c.path);
    line(out, "arch", c.options.arch);
    line(out, "defines", c.options.defines_text());
    line(out, "source_hash", c.source_hash.hex());
    line(out, "nvrtc", std::to_string(nvrtc_version()));
    line(out, "compile_ms", std::to_string(c.compile_ms));
    line(out, "log", c.log);
    for (const EntryParams& e : c.entries)
        line(out, "entry", encode_entry_params(e));
    for (const auto& [expression, lowered] : c.lowered_names)
        line(out, "lowered", lowered + " " + expression);
    return out;
}

CompiledKernel kernel_from_meta(std::string_view meta, std::string cubin, std::string ptx,
                                const CompileOptions& options) {
    CompiledKernel c;
    c.kernel = unescape_meta(meta_value(meta, "kernel"));
    c.path = unescape_meta(meta_value(meta, "path"));
    if (const auto h = Hash128::parse(meta_value(meta, "source_hash")))
        c.source_hash = *h;
    c.options = options;
    c.cubin = std::move(cubin);
    c.ptx = std::move(ptx);
    c.log = unescape_meta(meta_value(meta, "log"));
    c.compile_ms = std::strtod(meta_value(meta, "compile_ms").c_str(), nullptr);
    for (const std::string& e : meta_values(meta, "entry"))
        if (auto params = decode_entry_params(e))
            c.entries.push_back(std::move(*params));
    // "LOWERED EXPRESSION": a lowered name has no space, an expression may.
    for (const std::string& l : meta_values(meta, "lowered"))
        if (const auto space = l.find(' '); space != std::string::npos)
            c.lowered_names[l.substr(space + 1)] = l.substr(0, space);
    return c;
}

std::string compile_error_meta(const CompileError& e) {
    std::string out;
    line(out, "kernel", e.kernel);
    line(out, "path", e.path);
    for (const auto& o : e.options)
        line(out, "option", o);
    for (const auto& [name, value] : e.defines)
        line(out, "define", name + "=" + value);
    line(out, "source_hash", e.source_hash);
    for (const auto& d : e.diagnostics)
        line(out, "diagnostic", diagnostic_value(d));
    line(out, "log", e.log);
    return out;
}

CompileError compile_error_from_meta(std::string_view meta) {
    std::map<std::string, std::string> defines;
    for (const std::string& d : meta_values(meta, "define")) {
        const auto eq = d.find('=');
        defines[d.substr(0, eq)] = eq == std::string::npos ? "" : d.substr(eq + 1);
    }
    std::vector<Diagnostic> diagnostics;
    for (const std::string& d : meta_values(meta, "diagnostic"))
        diagnostics.push_back(diagnostic_of(d));
    return CompileError(unescape_meta(meta_value(meta, "kernel")),
                        unescape_meta(meta_value(meta, "path")), meta_values(meta, "option"),
                        std::move(defines), unescape_meta(meta_value(meta, "log")),
                        std::move(diagnostics), unescape_meta(meta_value(meta, "source_hash")));
}

} // namespace kjit
