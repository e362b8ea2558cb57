#pragma once

#include "core/toml.hpp"
#include "jit/project.hpp"
#include "kernels/contract.hpp"
#include "kernels/expr.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kjit {

/// What an inline contract is read against: the names its file declares around it.
struct InlineContractScope {
    std::string kernel; ///< the kernel source, and the contract's name
    std::vector<std::string> shape_keys;
    std::string shape;                      ///< the file's shape as text: the bench shape
    Defines defines;                        ///< fixed defines and each swept define's first value
    std::vector<LaunchParam> launch_params; ///< swept launch values, each first value the default
    Scope names;                            ///< every name an expression may read
};

/// Reads the contract of a kernel that has none registered, declared inline in a sweep file
/// (`root`, its top-level table): [launch] (entry, grid, block, smem), [[args]] (name; type
/// f32*, bf16*, i32 or f32; count; value; init random, zeros or value; output) and [bench]
/// bytes and flops. Every mistake is a ConfigError at its file:line:col.
KernelContract read_inline_contract(const TomlTable& root, const InlineContractScope& scope);

/// Reads a contract file (docs/contracts.md): the kernel's name and source, shape keys, dtypes,
/// defines, launch parameters, preconditions, [[args]], the pipeline as [[step]] tables (a
/// launch: entry, grid, block, smem, args; or a copy: from, to), bytes and flops, and what
/// `kjit check`, `kjit bench` and `kjit digest` run (check shapes with a float64 reference
/// or reference defines, the bench shape, digest shapes). Validated as register_contract
/// validates; every mistake is a ConfigError at its file:line:col.
KernelContract parse_contract(std::string_view text, const std::string& file);
/// parse_contract() of the file at `path` (ConfigError when it cannot be read).
KernelContract load_contract(const std::filesystem::path& path);

/// Registers the contracts of `project`'s contract files that this process has not registered
/// yet (a second call registers nothing); their names, in the project's order. ConfigError at
/// the project file's line for a name another contract has.
std::vector<std::string> register_project_contracts(const Project& project);

} // namespace kjit
