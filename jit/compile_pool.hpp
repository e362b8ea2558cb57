#pragma once

#include "core/flags.hpp"
#include "jit/compiler.hpp"

#include <exception>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kjit {

/// One compile to run: `sources` must outlive the call.
struct CompileJob {
    const SourceSet* sources = nullptr;
    std::string kernel;
    CompileOptions options;
};

/// A compile's result: the kernel, or the exception it threw (CompileError for a bad source).
struct CompileOutcome {
    std::optional<CompiledKernel> compiled;
    std::exception_ptr error;
};

/// Called after each finished job: (done, total, kernel).
using CompileProgress = std::function<void(std::size_t, std::size_t, const std::string&)>;

/// KJIT_COMPILE_JOBS of `flags` when positive, else the number of cores.
int default_compile_jobs(const ResolvedFlags& flags = process_flags());

/// Compiles every job with up to `parallelism` at a time. With a `worker` executable (one
/// that runs serve_compile_worker(), e.g. `kjit compile-worker`) each runs in its own
/// process: NVRTC holds a process-wide lock for much of a compile, so threads barely scale.
/// Without one, or if a worker dies, jobs are compiled on threads of this process.
std::vector<CompileOutcome> compile_all(std::span<const CompileJob> jobs, int parallelism,
                                        const std::filesystem::path& worker,
                                        const CompileProgress& progress = {});

/// The worker's side of compile_all: reads jobs from `in_fd` and writes outcomes to `out_fd`
/// until end of input; returns the process exit code.
int serve_compile_worker(int in_fd, int out_fd);

} // namespace kjit
