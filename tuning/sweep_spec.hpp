#pragma once

#include "runtime/module.hpp"
#include "tuning/digest.hpp"
#include "kernels/expr.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kjit {

/// One kernel argument of a sweep: a buffer (`f32*`, `bf16*`) or a scalar (`i32`, `f32`).
struct SweepArg {
    std::string name;
    bool pointer = false;
    DType dtype = DType::f32; ///< element type of a buffer; f32 or (for i32) unused
    bool is_int = false;      ///< a scalar i32
    std::optional<Expr> count; ///< buffers: number of elements
    std::optional<Expr> value; ///< scalars: the value; buffers with init "value": the fill value
    enum class Init { random, zeros, value } init = Init::random;
    bool output = false;
    bool in_out = false; ///< an output given an init: read and written (a state updated in place)
    int line = 0;
};

/// One swept parameter: its values in order. A define unless it is a launch parameter.
struct SweepParam {
    std::string name;
    std::vector<long long> values;
    bool define = true;
};

/// A sweep file (`kjit sweep FILE.toml`); the README documents the schema.
struct SweepSpec {
    std::string file;
    std::string kernel; ///< kernel_src/<kernel>.cu
    std::map<std::string, long long> shape;
    std::map<std::string, std::string> defines; ///< fixed production caps
    std::vector<SweepParam> params;
    std::vector<Expr> constraints;
    std::string entry;
    std::vector<Expr> grid, block; ///< 1 to 3 expressions each
    std::optional<Expr> smem;
    std::vector<SweepArg> args;
    enum class Check { digest, tolerance, none } check = Check::digest;
    double rtol = 1e-5;
    std::string reference; ///< tolerance mode: the registered float64 reference
    std::map<std::string, long long> baseline; ///< parameter values of the baseline variant
    int warmup = 3, reps = 20;
    bool flush_l2 = false;
    bool graph = false; ///< time each repetition as a CUDA graph launch (tiny kernels)
    std::optional<Expr> bytes, flops;
    std::string text; ///< the file's text (part of the results-cache key)
    /// Where each define and swept parameter is named in the file: (line, column).
    std::map<std::string, std::pair<int, int>> positions;

    /// Reads and checks `path`: every mistake (TOML syntax, unknown key, wrong type, bad
    /// expression, empty sweep) is a ConfigError at file:line:col.
    static SweepSpec load(const std::filesystem::path& path);
    /// The scope of shape values and one variant's parameters.
    [[nodiscard]] Scope scope(const std::map<std::string, long long>& params) const;
};

/// One point of the sweep.
struct SweepVariant {
    std::map<std::string, long long> params;
    std::map<std::string, std::string> defines; ///< fixed + swept defines
    Dim3 grid, block;
    unsigned smem = 0;
    bool baseline = false;
    [[nodiscard]] std::string label() const; ///< "RMS_BLOCK=256 GRID_PER_SM=2"
};

/// Every combination of the parameters that satisfies the constraints, in file order (the
/// last parameter varies fastest); `rejected` counts the others.
std::vector<SweepVariant> expand(const SweepSpec& spec, std::size_t* rejected = nullptr);

} // namespace kjit
