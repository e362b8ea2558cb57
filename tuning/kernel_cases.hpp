#pragma once

#include "runtime/engine.hpp"
#include "tuning/bench.hpp"
#include "tuning/digest.hpp"
#include "tuning/roofline.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kjit {

/// Defines by name, as injected into a compile.
using Defines = std::map<std::string, std::string>;

/// A case's shape: named integers ("rows" -> 8192).
using ShapeValues = std::map<std::string, std::int64_t>;

/// One buffer a kernel reads or writes.
struct BufferSpec {
    std::string name;
    DType dtype = DType::f32;
    std::size_t count = 0;
};

/// What one launch of a kernel at a shape reads, writes and costs.
struct CaseLayout {
    std::string entry; ///< the entry point: "rms_norm_f32"
    std::vector<BufferSpec> inputs;
    std::vector<BufferSpec> outputs;
    Work work; ///< bytes moved and FLOPs of one launch
};

/// Launches `fn` on the given buffers (in the layout's order) at `shape`, reading launch
/// geometry from `defines`; enqueues only.
using CaseLaunch = std::function<void(const Function& fn, const Defines& defines,
                                      const ShapeValues& shape, std::span<const CUdeviceptr> inputs,
                                      std::span<const CUdeviceptr> outputs, CUstream stream)>;

/// One row of the table `kjit bench` and `kjit digest` work from: how to build inputs, launch
/// and name the outputs of one kernel family. A new kernel adds a row in kernel_cases.cpp.
struct KernelCase {
    std::string kernel;                  ///< kernel_src/<kernel>.cu
    std::vector<std::string> shape_keys; ///< every shape needs exactly these, in this order
    std::vector<DType> dtypes;           ///< the first is the default
    Defines defines;         ///< always injected unless overridden: every knob the launch reads
    std::string bench_shape; ///< `kjit bench` without --shape
    std::vector<std::string> digest_shapes; ///< `kjit digest record` without --shapes
    std::function<CaseLayout(const ShapeValues&, DType)> layout;
    CaseLaunch launch;
};

/// Every kernel bench and digest know, in table order.
const std::vector<KernelCase>& kernel_cases();
/// The row of `kernel`; NotFoundError naming the known ones otherwise.
const KernelCase& kernel_case(std::string_view kernel);

/// Parses "rows=8192,n=7168" against the row's keys; ConfigError on an unknown, missing or
/// repeated key, or a value that is not a positive integer.
ShapeValues parse_shape(const KernelCase& kc, std::string_view text);
/// "rows=8192,n=7168", keys in the row's order: the form baselines store.
std::string shape_text(const KernelCase& kc, const ShapeValues& shape);
/// Splits "rows=1,n=7168;rows=4096,n=7168" at ';' (empty parts dropped).
std::vector<std::string> split_shapes(std::string_view text);

/// `base` with every NAME=VALUE of `overrides` set; ConfigError on a bad assignment.
Defines merge_defines(Defines base, std::span<const std::string> overrides);
/// "NAME=VALUE NAME=VALUE" or "(none)".
std::string defines_text(const Defines& defines);

/// A kernel prepared through an engine with one define set; valid while the engine lives.
struct PreparedArm {
    Engine* engine = nullptr;
    std::string spec_name; ///< the engine's name for it: "rms_norm/RMS_BLOCK=256"
    Defines defines;       ///< what the launch reads (the row's defaults overridden)
    Provenance provenance;
    /// The entry point `entry` of the prepared module.
    [[nodiscard]] const Function& function(std::string_view entry) const {
        return engine->function(spec_name, entry);
    }
};

/// Prepares `kc` for each define set through `engine` (parallel compiles, cached); rethrows
/// the first compile or load error.
std::vector<PreparedArm> prepare_arms(Engine& engine, const KernelCase& kc,
                                      const std::vector<Defines>& define_sets,
                                      const Device& device);

/// Device buffers of one case: generator inputs (input k of set s filled from seed
/// `seed + s * inputs + k`) and outputs; the same bits on every GPU and every run.
class CaseBuffers {
  public:
    CaseBuffers(const CaseLayout& layout, std::uint64_t seed, int input_sets = 1);
    /// Makes input set `set` the one inputs() returns.
    void select(int set) { selected_ = set; }
    [[nodiscard]] std::span<const CUdeviceptr> inputs() const { return input_ptrs_[selected_]; }
    [[nodiscard]] std::span<const CUdeviceptr> outputs() const { return output_ptrs_; }
    /// Writes the canary into every output (synchronous).
    void fill_canary();
    /// Every output, copied to the host.
    [[nodiscard]] std::vector<HostBuffer> download() const;
    [[nodiscard]] const CaseLayout& layout() const { return layout_; }

  private:
    CaseLayout layout_;
    std::vector<std::vector<DeviceBuffer>> inputs_;
    std::vector<std::vector<CUdeviceptr>> input_ptrs_;
    std::vector<DeviceBuffer> outputs_;
    std::vector<CUdeviceptr> output_ptrs_;
    int selected_ = 0;
};

/// The launch sequence of `arm` on `buffers` (the selected input set at each call).
LaunchSequence case_launch(const KernelCase& kc, const PreparedArm& arm, const ShapeValues& shape,
                           const CaseBuffers& buffers);

/// Fills the outputs with the canary, launches once on input set 0, waits, and returns every
/// output.
std::vector<HostBuffer> run_case_once(const KernelCase& kc, const PreparedArm& arm,
                                      const ShapeValues& shape, CaseBuffers& buffers);

/// The epsilon every rms_norm launch of the bench, digest and check tools uses.
inline constexpr float kRmsNormEps = 1e-6f;

/// Launches rms_norm's `fn` (rms_norm_f32 or rms_norm_bf16) with `block` threads, one block
/// per row; returns the configuration it launched with.
LaunchConfig launch_rms_norm(const Function& fn, unsigned block, CUdeviceptr x, CUdeviceptr w,
                             CUdeviceptr y, int rows, int n, float eps, CUstream stream);

} // namespace kjit
