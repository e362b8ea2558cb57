#pragma once

#include "runtime/engine.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace kjit {

/// One rms_norm configuration to launch and compare with the float64 reference.
struct RmsNormCase {
    bool bf16 = false;
    int rows = 1;
    int n = 1;
    int block = 256; ///< injected as RMS_BLOCK
    float eps = 1e-6f;
    [[nodiscard]] std::string entry() const { return bf16 ? "rms_norm_bf16" : "rms_norm_f32"; }
    /// Relative L2 error allowed against the float64 reference.
    [[nodiscard]] double tolerance() const { return bf16 ? 1e-2 : 1e-6; }
};

/// The outcome of one launch-and-compare.
struct CheckResult {
    std::string kernel;  ///< "rms_norm"
    std::string entry;   ///< "rms_norm_f32"
    std::string shape;   ///< "rows=4096 n=7168"
    std::string defines; ///< "RMS_BLOCK=256"
    std::string grid, block;
    std::string source_hash;
    double error = 0;    ///< relative L2 against the reference
    double tolerance = 0;
    [[nodiscard]] bool passed() const { return error <= tolerance; }
};

/// The shapes kjit's own check runs by default: decode (rows=1, a full-width block) and
/// prefill-sized batches, a width that is no multiple of the block, fp32 and bf16.
std::vector<RmsNormCase> default_rms_norm_cases();

/// The engine's spec for a case: rms_norm with RMS_BLOCK injected.
KernelSpec rms_norm_spec(const RmsNormCase& c);

/// Launches the case's kernel (prepared by `engine` from rms_norm_spec) on inputs filled from
/// `seed`, output poisoned first, and compares with the float64 reference.
CheckResult check_rms_norm(Engine& engine, const RmsNormCase& c, std::uint64_t seed);

} // namespace kjit
