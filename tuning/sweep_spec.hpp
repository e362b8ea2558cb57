#pragma once

#include "kernels/contract.hpp"
#include "core/toml.hpp"
#include "kernels/expr.hpp"
#include "tuning/sweep_space.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace kjit {

/// A sweep file (`kjit sweep FILE.toml`); the README documents the schema. The file names a
/// kernel's contract and states only the space, the constraints, the check and the bench
/// settings; a kernel with no registered contract declares one inline ([launch], [[args]]).
struct SweepSpec {
    std::string file;
    std::string kernel;      ///< the kernel source: SOURCE.cu
    KernelContract contract; ///< the registered contract the file names, or its inline one
    bool inline_contract = false;
    DType dtype = DType::f32;
    std::map<std::string, long long> shape;
    Defines defines; ///< fixed production caps, over the contract's defaults
    std::vector<SweepParam> params;
    /// A [sweep] list with values written as expressions of the shape (`RMS_N = [0, "n"]`): its
    /// items in order, numbers and parsed expressions. set_shape() resolves them into the
    /// parameter's values.
    struct ShapeList {
        std::string param;
        std::vector<std::variant<long long, Expr>> items;
    };
    std::vector<ShapeList> shape_lists;
    std::vector<Expr> constraints;
    enum class Check { digest, tolerance, none } check = Check::digest;
    double rtol = 1e-5; ///< tolerance mode: the most relative L2 error allowed
    double atol = -1;   ///< tolerance mode: the most absolute error of any element (< 0: none)
    std::string reference;                     ///< tolerance mode: the registered float64 reference
    /// Tolerance mode without a float64 reference: the variant every variant is compared
    /// with, as values over the baseline variant's (defines or launch parameters, swept or not:
    /// `{ SPLIT_K = 1 }`); empty: the baseline variant itself.
    std::map<std::string, long long> reference_variant;
    std::map<std::string, long long> baseline; ///< parameter values of the baseline variant
    /// [search]: how the space is explored. exhaustive: every point (at most the variant
    /// cap); random: `budget` distinct valid points drawn with `seed`, the space never
    /// expanded; local: a greedy descent that evaluates every unevaluated neighbour (one value
    /// step in one parameter) of the fastest point so far and moves while one is faster,
    /// restarting from a random point at a local minimum, `budget` evaluations in all.
    enum class Strategy { exhaustive, random, local } strategy = Strategy::exhaustive;
    std::uint64_t budget = 0; ///< random and local: the variants evaluated
    std::uint64_t seed = 1;   ///< random and local: the draws
    int warmup = 3, reps = 20;
    bool flush_l2 = false;
    bool graph = false; ///< time each repetition as a CUDA graph launch (tiny kernels)
    int calls = 1;      ///< launches per repetition; medians are per call (BenchOptions::calls)
    std::string text;   ///< the file's text (part of the results-cache key)
    /// Where each define and swept parameter is named in the file: (line, column); also
    /// "kernel", "[check] baseline" and "[check] reference_variant".
    std::map<std::string, std::pair<int, int>> positions;

    /// ConfigError(message) at the file's `key` (positions), else at the file.
    [[nodiscard]] ConfigError error_at(const std::string& key, const std::string& message) const {
        const auto at = positions.find(key);
        return at == positions.end()
                   ? ConfigError(message, file)
                   : ConfigError(message, file, at->second.first, at->second.second);
    }

    /// Reads and checks `path`: every mistake (not a regular file, TOML syntax, unknown key,
    /// wrong type, bad expression, empty sweep, a name the contract does not know, a setting
    /// out of range) is a ConfigError at file:line:col.
    static SweepSpec load(const std::filesystem::path& path);
    /// load() of `text` as the file named `file`.
    static SweepSpec parse(std::string text, const std::string& file);
    /// Sets the shape and resolves the lists' shape expressions at it (kjit tune's shapes); a
    /// value the shape makes equal to an earlier one of its list is dropped.
    void set_shape(std::map<std::string, long long> values);
    /// The scope of shape values, numeric defines, launch values and one variant's parameters.
    [[nodiscard]] Scope scope(const std::map<std::string, long long>& params) const;
};

} // namespace kjit
