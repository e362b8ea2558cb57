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
    /// Inputs: element i is uniform(seed, i) * scale + offset in fp32, rounded to the dtype.
    float scale = 1.0f;
    float offset = 0.0f;  ///< with scale, the range the math needs (a decay below zero)
    double tolerance = 0; ///< outputs: relative L2 `kjit check` allows; 0: output_tolerance's
};

/// The relative L2 error `kjit check` allows an output: its tolerance when set, else 1e-6 for
/// f32 and 1e-2 for bf16.
double output_tolerance(const BufferSpec& output);

/// What one launch of a kernel at a shape reads, writes and costs.
struct CaseLayout {
    std::string entry; ///< the entry point: "rms_norm_f32"
    std::vector<BufferSpec> inputs;
    std::vector<BufferSpec> outputs;
    Work work; ///< bytes moved and FLOPs of one launch
};

/// Launches `fn` on the given buffers (in the layout's order) at `shape`, reading launch
/// geometry from `defines`; enqueues only, and returns the kernel's launch configuration.
using CaseLaunch = std::function<LaunchConfig(
    const Function& fn, const Defines& defines, const ShapeValues& shape,
    std::span<const CUdeviceptr> inputs, std::span<const CUdeviceptr> outputs, CUstream stream)>;

/// The float64 reference of one launch: `inputs` in the layout's order holding the values the
/// kernel reads (bf16-rounded where bf16); fills `outputs`, each already sized as its buffer.
using CaseReference = std::function<void(const ShapeValues& shape, const Defines& defines,
                                         std::span<const std::vector<double>> inputs,
                                         std::span<std::vector<double>> outputs)>;

/// One row of the table `kjit bench`, `kjit digest` and `kjit check` work from: how to build
/// inputs, launch, name the outputs of one kernel family and compute them in float64. A new
/// kernel adds a row in kernel_cases.cpp.
struct KernelCase {
    std::string kernel;                  ///< kernel_src/<kernel>.cu
    std::vector<std::string> shape_keys; ///< every shape needs exactly these, in this order
    std::vector<DType> dtypes;           ///< the first is the default
    Defines defines; ///< always injected unless overridden: every knob launch and reference read
    std::string bench_shape;                ///< `kjit bench` without --shape
    std::vector<std::string> digest_shapes; ///< `kjit digest record` without --shapes
    std::function<CaseLayout(const ShapeValues&, DType)> layout;
    CaseLaunch launch;
    CaseReference reference;
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

/// The engine's spec of `kc` compiled with `defines`, named "conv1d/CONV_BLOCK=256/...": equal
/// define sets share one name.
KernelSpec case_spec(const KernelCase& kc, const Defines& defines);

/// Prepares `kc` for each define set through `engine` (parallel compiles, cached); rethrows
/// the first compile or load error.
std::vector<PreparedArm> prepare_arms(Engine& engine, const KernelCase& kc,
                                      const std::vector<Defines>& define_sets,
                                      const Device& device);

/// The generator values of input `spec` (see BufferSpec::scale) from `seed`; with scale 1 and
/// offset 0 exactly generated_buffer's.
HostBuffer generated_input(const BufferSpec& spec, std::uint64_t seed);
/// Input set `set` of `layout`: input k filled from seed `seed + set * inputs + k`; the same
/// bits on every machine and every run.
std::vector<HostBuffer> generated_inputs(const CaseLayout& layout, std::uint64_t seed, int set = 0);
/// Every element of `buffer` as a double (exact: f32 and bf16 values are doubles).
std::vector<double> element_values(const HostBuffer& buffer);

/// Runs `kc.reference` on host `inputs` (in the layout's order); one vector per output.
std::vector<std::vector<double>> reference_outputs(const KernelCase& kc, const ShapeValues& shape,
                                                   const Defines& defines, const CaseLayout& layout,
                                                   std::span<const HostBuffer> inputs);

/// Device buffers of one case: generator inputs and outputs.
class CaseBuffers {
  public:
    /// `input_sets` sets of generated_inputs from `seed`.
    CaseBuffers(const CaseLayout& layout, std::uint64_t seed, int input_sets = 1);
    /// One input set uploaded from `inputs` (in the layout's order).
    CaseBuffers(const CaseLayout& layout, std::span<const HostBuffer> inputs);
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
    void add_input_set(std::span<const HostBuffer> inputs);
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
/// output; `launched`, when given, receives the kernel's launch configuration.
std::vector<HostBuffer> run_case_once(const KernelCase& kc, const PreparedArm& arm,
                                      const ShapeValues& shape, CaseBuffers& buffers,
                                      LaunchConfig* launched = nullptr);

/// The epsilon every rms_norm launch of the bench, digest and check tools uses.
inline constexpr float kRmsNormEps = 1e-6f;

} // namespace kjit
