#include "tools/verbs.hpp"

#include "jit/compile_options.hpp"
#include "lint/evaluate.hpp"
#include "lint/libclang.hpp"
#include "lint/report.hpp"
#include "lint/scanner.hpp"
#include "lint/sources.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>

namespace kjit::cli {

namespace {
struct SigArgs {
    SourceOptions sources;
    std::vector<std::string> files;
    std::vector<std::string> defines;
    std::string libclang;
    bool embedded = false;
    bool json = false;
};

// One launch-bounds argument as written and, when it is a constant, its value.
struct Bound {
    std::string text;
    std::optional<long long> value;
};

// A parameter's offset in the argument buffer, as cuFuncGetParamInfo reports it.
std::vector<long long> offsets(const std::vector<lint::KernelParam>& params) {
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

std::string number(long long v) {
    return v < 0 ? "?" : std::to_string(v);
}

int run_sig(SigArgs& args) {
    // FILES or --embedded name the sources; otherwise --src, KJIT_KERNEL_DIR or the project.
    args.sources.quiet = args.json;
    std::filesystem::path default_dir;
    if (args.files.empty() && !args.embedded)
        default_dir = args.sources.on_disk("kjit sig").dir;
    else if (!args.json)
        std::fprintf(stderr, "sources: %s\n",
                     args.embedded ? "embedded" : files_text(args.files).c_str());
    std::string why_not;
    const auto clang = lint::Libclang::open(args.libclang, &why_not);
    if (!clang)
        throw ConfigError("kjit sig needs libclang: " + why_not);
    std::map<std::string, std::string> defines;
    for (const auto& d : args.defines)
        add_define(defines, d);
    std::string json = "[";
    std::size_t count = 0;
    for (const auto& g : lint::source_groups(args.files, args.embedded, default_dir)) {
        std::vector<const SourceFile*> files;
        if (g.targets.empty())
            files = g.sources.kernels();
        for (const auto& t : g.targets)
            files.push_back(g.sources.find(t));
        for (const SourceFile* f : files) {
            const lint::ParsedUnit unit = clang->parse(g.sources, *f, defines);
            lint::MacroTable macros;
            for (const auto& m : unit.macros)
                if (!m.function_like)
                    macros[m.name] = m.body;
            for (const auto& [name, value] : defines)
                macros[name] = lint::tokenize(value);
            for (const auto& e : unit.entries) {
                const SourceFile* where = g.sources.find(e.pos.file);
                const std::string path = where ? where->path : f->path;
                std::vector<Bound> bounds;
                for (const auto& arg : e.launch_bounds) {
                    Bound b;
                    for (const auto& t : arg)
                        b.text += t;
                    b.value = lint::evaluate(arg, macros);
                    bounds.push_back(std::move(b));
                }
                const auto offs = offsets(e.params);
                const long long bytes = e.params.empty()  ? 0
                                        : offs.back() < 0 ? -1
                                                          : offs.back() + e.params.back().size;
                if (args.json) {
                    json += std::string(count ? ",\n " : "\n ") +
                            "{\"path\": " + lint::json_string(path) +
                            ", \"line\": " + std::to_string(e.pos.line) +
                            ", \"column\": " + std::to_string(e.pos.column) +
                            ", \"name\": " + lint::json_string(e.name) +
                            ", \"template\": " + (e.is_template ? "true" : "false") +
                            ", \"launch_bounds\": [";
                    for (std::size_t i = 0; i < bounds.size(); ++i)
                        json += std::string(i ? ", " : "") +
                                "{\"text\": " + lint::json_string(bounds[i].text) +
                                ", \"value\": " +
                                (bounds[i].value ? std::to_string(*bounds[i].value) : "null") + "}";
                    json += "], \"params\": [";
                    for (std::size_t i = 0; i < e.params.size(); ++i) {
                        const auto& p = e.params[i];
                        json += std::string(i ? ", " : "") +
                                "{\"name\": " + lint::json_string(p.name) +
                                ", \"type\": " + lint::json_string(p.type) +
                                ", \"size\": " + std::to_string(p.size) +
                                ", \"align\": " + std::to_string(p.align) +
                                ", \"offset\": " + std::to_string(offs[i]) + "}";
                    }
                    json += "]}";
                    ++count;
                    continue;
                }
                std::string lb = "no __launch_bounds__";
                if (!bounds.empty()) {
                    lb = "__launch_bounds__(";
                    for (std::size_t i = 0; i < bounds.size(); ++i) {
                        const Bound& b = bounds[i];
                        lb += i ? ", " : "";
                        lb += b.text;
                        if (b.value && b.text != std::to_string(*b.value))
                            lb += "=" + std::to_string(*b.value);
                    }
                    lb += ")";
                }
                std::printf("%s:%d:%d: %s%s  %s  %zu parameter(s), %s bytes\n", path.c_str(),
                            e.pos.line, e.pos.column, e.name.c_str(),
                            e.is_template ? " (template)" : "", lb.c_str(), e.params.size(),
                            number(bytes).c_str());
                std::size_t w_name = 4, w_type = 4;
                for (const auto& p : e.params) {
                    w_name = std::max(w_name, p.name.size());
                    w_type = std::max(w_type, p.type.size());
                }
                if (!e.params.empty())
                    std::printf("  %2s  %-*s  %-*s  %4s  %5s  %6s\n", "#", static_cast<int>(w_name),
                                "name", static_cast<int>(w_type), "type", "size", "align",
                                "offset");
                for (std::size_t i = 0; i < e.params.size(); ++i) {
                    const auto& p = e.params[i];
                    std::printf("  %2zu  %-*s  %-*s  %4s  %5s  %6s\n", i, static_cast<int>(w_name),
                                p.name.c_str(), static_cast<int>(w_type), p.type.c_str(),
                                number(p.size).c_str(), number(p.align).c_str(),
                                number(offs[i]).c_str());
                }
                ++count;
            }
        }
    }
    if (args.json)
        std::printf("%s\n", (json + (count ? "\n]" : "]")).c_str());
    else
        std::printf("sig: %zu entry point(s)\n", count);
    return kOk;
}
} // namespace

Action add_sig(CLI::App& app) {
    auto args = std::make_shared<SigArgs>();
    auto* sub = app.add_subcommand(
        "sig", "list each __global__ entry point: parameters (name, type, size) and launch bounds");
    sub->add_option("files", args->files,
                    "kernel sources or directories (default: --src, KJIT_KERNEL_DIR or the "
                    "project file's kernels)");
    args->sources.add_to(*sub);
    sub->add_flag("--embedded", args->embedded, "read the copies embedded in this binary");
    sub->add_option("-D,--define", args->defines, "NAME=VALUE injected as the engine would");
    sub->add_flag("--json", args->json, "print the entry points as a JSON array");
    sub->add_option("--libclang", args->libclang, "the libclang library to open (default: search)");
    return [args] { return run_sig(*args); };
}

} // namespace kjit::cli
