#pragma once

#include "jit/kernel_params.hpp"
#include "runtime/driver.hpp"

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kjit {

/// Grid or block dimensions.
struct Dim3 {
    unsigned x = 1, y = 1, z = 1;
    [[nodiscard]] std::string str() const;
    [[nodiscard]] unsigned long long volume() const {
        return static_cast<unsigned long long>(x) * y * z;
    }
};

/// Where and how wide one launch runs, and with which launch attributes.
struct LaunchConfig {
    Dim3 grid;
    Dim3 block;
    unsigned smem_bytes = 0; ///< dynamic shared memory
    CUstream stream = nullptr;
    /// Programmatic dependent launch: the kernel may start while the previous kernel on the
    /// stream still runs; it must `griddepcontrol.wait` (pdl_wait(), kernel_src/pdl.cuh)
    /// before any global memory access that kernel's work could touch.
    bool pdl = false;
    Dim3 cluster{0, 0, 0}; ///< thread block cluster dimensions; x == 0: no cluster
    bool cooperative = false; ///< all blocks co-resident (grid-wide sync); the grid must fit
    [[nodiscard]] bool needs_ex() const { return pdl || cluster.x != 0 || cooperative; }
};

/// A launch was refused, by kjit's first-launch checks (code 0) or by the driver.
class LaunchError : public Error {
  public:
    LaunchError(const std::string& call, CUresult code, std::string kernel,
                const std::string& context, const std::string& detail);
    CUresult code; ///< CUDA_SUCCESS when kjit refused the launch before the driver saw it
    std::string kernel;
};

/// What a host argument is, for the first-launch check against the kernel's parameter types.
enum class ArgKind : unsigned char { integer, floating, pointer, other };

/// "4-byte float", "8-byte integer", "pointer", "16-byte object".
std::string describe_arg(ArgKind kind, std::size_t size);

/// `what` after "a" or "an" ("an 8-byte float", "a 4-byte integer").
std::string with_article(const std::string& what);

/// What is wrong with passing arguments of `sizes` and `kinds` to a kernel whose parameters
/// are `params` (their count, each size and kind); "" when they fit. The first launch refuses
/// a mismatch with this text; a dry run finds it without a GPU.
std::string param_mismatch(std::span<const ParamType> params, std::span<const std::size_t> sizes,
                           std::span<const ArgKind> kinds);

namespace detail {
/// The address of signature_tag<Args...> identifies an argument-type list.
template <class... Args> inline constexpr char signature_tag = 0;
struct FunctionState;

/// The kind of a host argument type: enums and bool count as integers; a class type (a
/// CUdeviceptr wrapper, __half) is `other` and checked by size alone.
template <class T> constexpr ArgKind arg_kind() {
    if constexpr (std::is_floating_point_v<T>)
        return ArgKind::floating;
    else if constexpr (std::is_integral_v<T> || std::is_enum_v<T>)
        return ArgKind::integer;
    else if constexpr (std::is_pointer_v<T> || std::is_null_pointer_v<T>)
        return ArgKind::pointer;
    else
        return ArgKind::other;
}
} // namespace detail

/// A kernel entry point of a loaded Module; valid while the Module lives.
class Function {
  public:
    /// `variant` names the specialization (module label) in errors and the launch ledger.
    Function(CUfunction handle, std::string name, int device_ordinal, std::string arch,
             std::string variant = {});

    [[nodiscard]] CUfunction handle() const { return handle_; }
    [[nodiscard]] const std::string& name() const;
    [[nodiscard]] const std::string& variant() const;
    [[nodiscard]] int device_ordinal() const;
    /// Registers per thread.
    [[nodiscard]] int registers() const;
    [[nodiscard]] int attribute(CUfunction_attribute attr) const;
    /// The launch-bounds / register limit on threads per block.
    [[nodiscard]] int max_threads_per_block() const;
    /// True when `config`'s block and shared memory are within this kernel's and its
    /// device's limits (what a fallback tier is chosen by).
    [[nodiscard]] bool fits(const LaunchConfig& config) const;
    /// Parameter (offset, size) pairs in bytes, from cuFuncGetParamInfo.
    [[nodiscard]] std::vector<std::pair<std::size_t, std::size_t>> param_layout() const;
    /// The kernel's parameter types, from the PTX of its compile (CompiledKernel::entries);
    /// empty when the function was loaded without them (a bare Module).
    [[nodiscard]] const std::vector<ParamType>& param_types() const;
    /// Gives the function its parameter types (and names where known): the first launch of
    /// each argument-type list then refuses an argument of another kind (a float for an int).
    void set_param_types(std::vector<ParamType> params);

    /// Launches with `args` as the kernel's parameters. The first launch with a given list of
    /// argument types checks it against the kernel's parameter layout; every launch checks
    /// block, grid and shared memory against the kernel's and device's limits.
    template <class... Args> void launch(const LaunchConfig& config, const Args&... args) const {
        static_assert((std::is_trivially_copyable_v<Args> && ...),
                      "kernel arguments must be trivially copyable");
        void* params[sizeof...(Args) + 1] = {const_cast<void*>(static_cast<const void*>(&args))...,
                                             nullptr};
        static constexpr std::size_t sizes[sizeof...(Args) + 1] = {sizeof(Args)..., 0};
        static constexpr std::size_t aligns[sizeof...(Args) + 1] = {alignof(Args)..., 1};
        static constexpr ArgKind kinds[sizeof...(Args) + 1] = {detail::arg_kind<Args>()...,
                                                               ArgKind::other};
        launch_packed(config, params, std::span<const std::size_t>(sizes, sizeof...(Args)),
                      std::span<const std::size_t>(aligns, sizeof...(Args)),
                      &detail::signature_tag<Args...>,
                      std::span<const ArgKind>(kinds, sizeof...(Args)));
    }

    /// The untyped form of launch(): one pointer per parameter, their sizes and alignments,
    /// a token that identifies the argument-type list (checked once per token), and the kind
    /// of each argument (empty: checked by size alone).
    void launch_packed(const LaunchConfig& config, void** params,
                       std::span<const std::size_t> sizes, std::span<const std::size_t> aligns,
                       const void* signature, std::span<const ArgKind> kinds = {}) const;

    /// "kernel=NAME grid=(..) block=(..) smem=N dev=D sm_XX", the context of every error.
    [[nodiscard]] std::string context(const LaunchConfig& config) const;

  private:
    friend class Plan; // records checked launches, reported to the hooks at each replay
    /// launch_packed's checks: the argument types once per signature, the configuration always.
    void check_packed(const LaunchConfig& config, std::span<const std::size_t> sizes,
                      std::span<const std::size_t> aligns, const void* signature,
                      std::span<const ArgKind> kinds) const;
    /// Hands the launch to the driver.
    void queue(const LaunchConfig& config, void** params) const;
    void check_config(const LaunchConfig& config) const;
    /// Blocks per SM that can be co-resident at `config`'s block and shared memory, queried
    /// once per pair and then read from the function's cache.
    [[nodiscard]] int coresident_per_sm(const LaunchConfig& config) const;
    void check_arguments(const LaunchConfig& config, std::span<const std::size_t> sizes,
                         std::span<const std::size_t> aligns) const;
    void check_kinds(const LaunchConfig& config, std::span<const std::size_t> sizes,
                     std::span<const ArgKind> kinds) const;
    CUfunction handle_;
    std::shared_ptr<detail::FunctionState> state_;
};

} // namespace kjit
