#include "tools/verbs.hpp"

#include "jit/shape_check.hpp"
#include "runtime/engine.hpp"

#include <chrono>
#include <cstdio>
#include <memory>

namespace kjit::cli {

namespace {
struct SpecializeArgs {
    std::string shape_file;
    ShapeOptions shapes;
    SourceOptions sources;
    CacheOptions cache;
    std::string arch;
    int device = 0;
};

/// The shape file to specialize: the argument, else --shape-file, else the project file's
/// only shape file; ConfigError when that leaves none or several.
std::string shape_file_of(const SpecializeArgs& args) {
    if (!args.shape_file.empty())
        return args.shape_file;
    const auto files = args.shapes.choose(args.sources);
    if (files.size() != 1)
        throw ConfigError(files.empty()
                              ? "kjit specialize needs a shape file: SHAPE.toml, --shape-file or "
                                "the project file's shape_files"
                              : "kjit specialize takes one shape file and " +
                                    std::to_string(files.size()) +
                                    " were found: name one (SHAPE.toml or --shape-file)");
    return files.front().string();
}

int run_specialize(const SpecializeArgs& args) {
    const std::string shape_file = shape_file_of(args);
    // The shape file is read against the sources first: a kernel they lack or a `${}` the shape
    // lacks is an error at its file:line:col, before anything compiles.
    const SourceSet& sources = args.sources.load();
    const ShapeFile file = load_checked_shape_file(shape_file, sources);
    std::string reason;
    std::unique_ptr<Context> context;
    if (device_available(&reason))
        context = std::make_unique<Context>(Device::get(args.device));
    EngineOptions options;
    options.cache = args.cache.settings();
    options.arch = args.arch;
    const auto start = std::chrono::steady_clock::now();
    Engine engine(context.get(), options, args.sources.provider());
    const auto rows = engine.prepare(file.shape, file.kernels, progress_line("specializing"));
    const double total =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("kjit specialize %s: %zu kernel(s) for %s, sources %s\n", shape_file.c_str(),
                rows.size(), engine.arch().c_str(), engine.sources().describe().c_str());
    if (!context)
        std::printf("  (%s: compiled and cached, not loaded)\n", reason.c_str());
    std::printf("  %-24s %-7s %10s %9s %9s  %s\n", "kernel", "cache", "compile ms", "read ms",
                "load ms", "defines");
    int failed = 0;
    for (const auto& r : rows) {
        std::printf("  %-24s %-7s %10.1f %9.3f %9.3f  %s\n", r.name.c_str(), prepared_name(r.origin),
                    r.compile_ms, r.read_ms, r.load_ms, r.defines.c_str());
        // Where each define came from: the shape file's line, the tuned table's, a flag.
        if (!r.tuned.empty())
            std::printf("    tuned: %s\n", r.tuned.c_str());
        for (const auto& [name, origin] : r.define_origins)
            std::printf("    %-22s %s\n", name.c_str(), origin.c_str());
        if (r.error) {
            ++failed;
            try {
                std::rethrow_exception(r.error);
            } catch (const std::exception& e) {
                // Under the kernel's row, every line of it (one per unread define).
                std::string text = e.what();
                for (std::size_t p = 0; (p = text.find('\n', p)) != std::string::npos; p += 5)
                    text.insert(p + 1, "    ");
                std::printf("    %s\n", text.c_str());
            }
        }
    }
    std::printf("specialize: %zu prepared, %d failed, %.1f ms\n", rows.size() - failed, failed,
                total);
    return failed ? kFindings : kOk;
}
} // namespace

Action add_specialize(CLI::App& app) {
    auto args = std::make_shared<SpecializeArgs>();
    auto* sub = app.add_subcommand(
        "specialize", "compile (or load from the cache) every kernel of a shape file");
    sub->add_option("shape", args->shape_file,
                    "shape TOML: [shape] and [[kernel]] tables (default: --shape-file, else the "
                    "project file's one shape file)");
    args->shapes.add_to(*sub);
    args->sources.add_to(*sub);
    args->cache.add_to(*sub);
    sub->add_option("--arch", args->arch, "target architecture (default: the device's, or sm_90)")
        ->check(arch_check());
    sub->add_option("--device", args->device, "device ordinal")->capture_default_str();
    return [args] { return run_specialize(*args); };
}

} // namespace kjit::cli
