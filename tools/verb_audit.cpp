#include "tools/verbs.hpp"

#include <cstdio>
#include <iostream>
#include <memory>

namespace kjit::cli {

namespace {
struct AuditArgs {
    SourceOptions sources;
    CacheOptions cache;
    std::vector<std::string> archs{"sm_90"};
};
} // namespace

int run_audit(const SourceOptions& sources, const std::vector<std::string>& archs,
              const CacheOptions& cache_options) {
    const SourceSet set = sources.load();
    std::vector<CompileRequest> requests;
    for (const auto* k : set.kernels())
        for (const auto& arch : archs) {
            CompileRequest r{k->kernel_name(), {}};
            r.options.arch = arch;
            requests.push_back(std::move(r));
        }
    std::string arch_list;
    for (const auto& a : archs)
        arch_list += (arch_list.empty() ? "" : ",") + a;
    std::printf("kjit audit: %zu kernel(s) %s, NVRTC %d.%d, arch %s\n", set.kernels().size(),
                sources.describe().c_str(), nvrtc_version() / 1000, nvrtc_version() % 1000 / 10,
                arch_list.c_str());
    std::fflush(stdout);
    CompileCache cache(cache_options.settings());
    const auto results = cache.get_all(set, requests, progress_line("compiling"));
    int failed = 0;
    for (std::size_t i = 0; i < results.size(); ++i) {
        const auto& r = results[i];
        const std::string& arch = requests[i].options.arch;
        if (r.compiled) {
            std::printf("  ok    %-16s %-7s %8.1f ms  cubin %6.1f KiB  hash %.12s  %s\n",
                        r.compiled->kernel.c_str(), arch.c_str(), r.compiled->compile_ms,
                        r.compiled->cubin.size() / 1024.0, r.compiled->source_hash.hex().c_str(),
                        r.origin == Origin::disk ? "(cached)" : "");
            continue;
        }
        ++failed;
        std::printf("  FAIL  %-16s %-7s\n", requests[i].kernel.c_str(), arch.c_str());
        std::fflush(stdout);
        try {
            std::rethrow_exception(r.error);
        } catch (const CompileError& e) {
            if (e.diagnostics.empty())
                std::cerr << e.log << '\n';
            for (const auto& d : e.diagnostics)
                std::cerr << d.format() << '\n';
            std::cerr << "  defines: " << requests[i].options.defines_text() << '\n';
        } catch (const std::exception& e) {
            std::cerr << "  " << e.what() << '\n';
        }
    }
    std::printf("audit: %zu compiled, %d failed\n", results.size() - failed, failed);
    return failed ? kFindings : kOk;
}

Action add_audit(CLI::App& app) {
    auto args = std::make_shared<AuditArgs>();
    auto* sub = app.add_subcommand("audit", "compile every kernel for each target arch (no GPU needed)");
    args->sources.add_to(*sub);
    args->cache.add_to(*sub);
    sub->add_option("--arch", args->archs, "target architectures")->capture_default_str();
    return [args] { return run_audit(args->sources, args->archs, args->cache); };
}

} // namespace kjit::cli
