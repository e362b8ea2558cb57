#include "tools/verbs.hpp"

#include "jit/compiler.hpp"

#include <cstdio>
#include <iostream>
#include <memory>

namespace kjit::cli {

namespace {
struct AuditArgs {
    SourceOptions sources;
    std::vector<std::string> archs{"sm_90"};
};

} // namespace

int run_audit(const SourceOptions& sources, const std::vector<std::string>& archs) {
    const SourceSet set = sources.load();
    const auto kernels = set.kernels();
    std::printf("kjit audit: %zu kernel(s) %s, NVRTC %d.%d, arch %s\n", kernels.size(),
                sources.describe().c_str(), nvrtc_version() / 1000,
                nvrtc_version() % 1000 / 10, [&] {
                    std::string s;
                    for (const auto& a : archs)
                        s += (s.empty() ? "" : ",") + a;
                    return s;
                }().c_str());
    int failed = 0, total = 0;
    for (const auto* k : kernels) {
        for (const auto& arch : archs) {
            ++total;
            CompileOptions options;
            options.arch = arch;
            try {
                const CompiledKernel c = compile(set, k->kernel_name(), options);
                std::printf("  ok    %-16s %-7s %8.1f ms  cubin %6.1f KiB  hash %.12s\n",
                            c.kernel.c_str(), arch.c_str(), c.compile_ms, c.cubin.size() / 1024.0,
                            c.source_hash.hex().c_str());
            } catch (const CompileError& e) {
                ++failed;
                std::printf("  FAIL  %-16s %-7s\n", k->kernel_name().c_str(), arch.c_str());
                std::fflush(stdout);
                if (e.diagnostics.empty())
                    std::cerr << e.log << '\n';
                for (const auto& d : e.diagnostics)
                    std::cerr << d.format() << '\n';
                std::cerr << "  defines: " << options.defines_text() << '\n';
            }
        }
    }
    std::printf("audit: %d compiled, %d failed\n", total - failed, failed);
    return failed ? kFindings : kOk;
}

Action add_audit(CLI::App& app) {
    auto args = std::make_shared<AuditArgs>();
    auto* sub = app.add_subcommand("audit", "compile every kernel for each target arch (no GPU needed)");
    args->sources.add_to(*sub);
    sub->add_option("--arch", args->archs, "target architectures")->capture_default_str();
    return [args] { return run_audit(args->sources, args->archs); };
}

} // namespace kjit::cli
