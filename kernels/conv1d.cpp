// conv1d (kernel_src/conv1d.cu): its contract and its float64 reference.
#include "kernels/builtin.hpp"
#include "kernels/reference.hpp"
#include "kernels/references.hpp"

#include <cmath>

namespace kjit {

void conv1d_reference(std::span<const double> x, std::span<const double> w,
                      std::span<const double> bias, std::span<const double> state_in,
                      std::span<double> y, std::span<double> state_out, int batch, int channels,
                      int steps, bool silu, bool channel_last) {
    for (long long row = 0; row < static_cast<long long>(batch) * channels; ++row) {
        const long long b = row / channels;
        const int c = static_cast<int>(row % channels);
        // Element t of the row in x and y, element k of its state.
        const auto at = [&](int t) {
            return channel_last ? (b * steps + t) * channels + c : row * steps + t;
        };
        const auto state_at = [&](int k) {
            return channel_last ? (b * 3 + k) * channels + c : row * 3 + k;
        };
        const auto xx = [&](int t) {
            if (t >= 0)
                return x[at(t)];
            return state_in.empty() ? 0.0 : state_in[state_at(3 + t)];
        };
        for (int t = 0; t < steps; ++t) {
            double z = bias.empty() ? 0.0 : bias[c];
            for (int k = 0; k < 4; ++k)
                z += w[c * 4 + k] * xx(t - 3 + k);
            y[at(t)] = silu ? z / (1.0 + std::exp(-z)) : z;
        }
        for (int k = 0; k < 3; ++k)
            state_out[state_at(k)] = xx(steps - 3 + k);
    }
}

namespace detail {

namespace {

void sequence_reference_io(ReferenceIo& io, bool channel_last) {
    conv1d_reference(io.input("x"), io.input("w"), io.input("bias"), io.input("state_in"),
                     io.output("y"), io.output("state_out"), static_cast<int>(io.shape("b")),
                     static_cast<int>(io.shape("c")), static_cast<int>(io.shape("t")),
                     io.define("CONV_SILU") != 0, channel_last);
}

} // namespace

void conv1d_reference_io(ReferenceIo& io) {
    sequence_reference_io(io, false);
}

void conv1d_cl_reference_io(ReferenceIo& io) {
    sequence_reference_io(io, true);
}

KernelContract conv1d_contract() {
    KernelContract c;
    c.name = "conv1d";
    c.shape_keys = {"b", "c", "t"};
    c.dtypes = {DType::f32, DType::bf16};
    c.defines = {{"CONV_TILE", "16"},
                 {"CONV_BLOCK", "64"},
                 {"CONV_SEGS", "0"},
                 {"CONV_SILU", "1"},
                 {"CONV_FLAT", "0"}};
    c.args = {
        input_arg("x", "b * c * t"),
        input_arg("w", "c * 4"),
        input_arg("bias", "c"),
        input_arg("state_in", "b * c * 3"),
        output_arg("y", "b * c * t"),
        output_arg("state_out", "b * c * 3"),
        scalar_arg("batch", ArgType::i32, "b"),
        scalar_arg("channels", ArgType::i32, "c"),
        scalar_arg("steps", ArgType::i32, "t"),
    };
    // Step indices are 32-bit in the kernel, and a warp's last chunk may start a tile past t.
    c.preconditions = {{"t <= 2147483647 - 32 * CONV_TILE",
                        "t={t} is past the kernel's 32-bit step indices: at most 2147483647 - 32 * "
                        "CONV_TILE with CONV_TILE={CONV_TILE}"}};
    // One warp per S consecutive segments of 32 * CONV_TILE time steps, the rows' segments
    // taken row after row: S is CONV_SEGS, or for 0 the source's rule by element size (4 for
    // bf16, 1 for fp32). With CONV_FLAT and rows of whole chunks (t a multiple of the chunk's
    // E steps, 16 bytes or 4 steps), the segments are cut from the rows laid end to end. (Where
    // the tensors turn out misaligned the kernel walks the rows with this grid, striding.)
    c.pipeline = {launch_step(
        {{DType::f32, "conv1d_f32"}, {DType::bf16, "conv1d_bf16"}},
        {"ceil_div(ceil_div(CONV_FLAT && t % (CONV_TILE % (16 / dtype_size) == 0 ? 16 / "
         "dtype_size : 4) == 0 ? ceil_div(b * c * t, 32 * CONV_TILE) : b * c * ceil_div(t, 32 "
         "* CONV_TILE), CONV_SEGS > 0 ? CONV_SEGS : (dtype_size == 2 ? 4 : 1)) * 32, "
         "CONV_BLOCK)"},
        {"CONV_BLOCK"})};
    // Read x, w, bias and the carry-in, write y and the carry-out; four FMAs per output (the
    // activation is not counted).
    c.bytes = "(2 * b * c * t + 5 * c + 2 * b * c * 3) * dtype_size";
    c.flops = "8 * b * c * t";
    c.reference = "conv1d";
    c.bench_shape = "b=8,c=4096,t=1300";
    // Production, then a length no tile divides over an odd channel count (the scalar path).
    for (DType d : {DType::f32, DType::bf16}) {
        c.check_shapes.push_back({"b=8,c=4096,t=1300", {d}, {}});
        c.check_shapes.push_back({"b=3,c=5,t=37", {d}, {}});
    }
    // The reference must follow the activation knob.
    c.check_shapes.push_back({"b=3,c=5,t=37", {DType::f32}, {"CONV_SILU=0"}});
    // One tile, a length that is no multiple of the tile (the element-by-element path), and
    // the production length at fewer channels.
    c.digest_shapes = {"b=1,c=4,t=8", "b=2,c=64,t=37", "b=2,c=256,t=1300"};
    return c;
}

KernelContract conv1d_cl_contract() {
    // conv1d's arguments, bytes, FLOPs and shapes, channel-last: x and y [B, T, C], the states
    // [B, 3, C] (causal-conv1d's channel-last layout, and Mamba2's xBC), the same counts.
    KernelContract c = conv1d_contract();
    c.name = "conv1d_cl";
    c.source = "conv1d"; // one chain of FMAs for every layout
    c.defines = {{"CONV_CL_STEPS", "16"}, {"CONV_CL_SEGS", "1"}, {"CONV_CL_CH", "4"},
                 {"CONV_CL_EAGER", "1"},  {"CONV_BLOCK", "64"},  {"CONV_SILU", "1"}};
    // The first tile's loads one use at a time (CONV_CL_EAGER=0, kernel_src/conv1d.cu), which
    // tuned entries may pick, checked too, on a whole-vector shape with partial tiles and on the
    // sweep's shape.
    for (const char* shape : {"b=8,c=4096,t=1300", "b=2,c=64,t=37"})
        c.check_shapes.push_back({shape, {}, {"CONV_CL_EAGER=0"}});
    // A thread per CONV_CL_CH channels and CONV_CL_SEGS tiles of CONV_CL_STEPS steps; a step's
    // index is 32-bit in the kernel.
    c.preconditions = {{"t <= 2147483647 - CONV_CL_STEPS * CONV_CL_SEGS",
                        "t={t} is past the kernel's 32-bit step indices: at most 2147483647 - "
                        "CONV_CL_STEPS * CONV_CL_SEGS with CONV_CL_STEPS={CONV_CL_STEPS}, "
                        "CONV_CL_SEGS={CONV_CL_SEGS}"}};
    c.pipeline = {launch_step({{DType::f32, "conv1d_cl_f32"}, {DType::bf16, "conv1d_cl_bf16"}},
                              {"ceil_div(b * ceil_div(t, CONV_CL_STEPS * CONV_CL_SEGS) * "
                               "ceil_div(c, CONV_CL_CH), CONV_BLOCK)"},
                              {"CONV_BLOCK"})};
    c.reference = "conv1d_cl";
    return c;
}

void conv1d_update_reference_io(ReferenceIo& io) {
    // One step of the sequence reference: the state before the step (the in-out buffer's input,
    // held apart from its output) is its carry-in.
    conv1d_reference(io.input("x"), io.input("w"), io.input("bias"), io.input("state"),
                     io.output("y"), io.output("state"), static_cast<int>(io.shape("b")),
                     static_cast<int>(io.shape("c")), 1, io.define("CONV_SILU") != 0);
}

KernelContract conv1d_update_contract() {
    KernelContract c;
    c.name = "conv1d_update";
    c.source = "conv1d"; // the sequence kernel's file: one chain of FMAs for both
    c.shape_keys = {"b", "c"};
    c.dtypes = {DType::f32, DType::bf16};
    c.defines = {{"CONV_BLOCK", "64"}, {"CONV_SILU", "1"}};
    ContractArg state = input_arg("state", "b * c * 3");
    state.role = ArgRole::in_out; // rolled in place, as a decode chain keeps it
    c.args = {
        input_arg("x", "b * c"),
        input_arg("w", "c * 4"),
        input_arg("bias", "c"),
        state,
        output_arg("y", "b * c"),
        scalar_arg("batch", ArgType::i32, "b"),
        scalar_arg("channels", ArgType::i32, "c"),
    };
    // A thread per (batch, channel).
    c.pipeline = {
        launch_step({{DType::f32, "conv1d_update_f32"}, {DType::bf16, "conv1d_update_bf16"}},
                    {"ceil_div(b * c, CONV_BLOCK)"}, {"CONV_BLOCK"})};
    // Read x, w, bias and the state, write y and the state; four FMAs per output.
    c.bytes = "(2 * b * c + 5 * c + 2 * b * c * 3) * dtype_size";
    c.flops = "8 * b * c";
    c.reference = "conv1d_update";
    c.bench_shape = "b=1,c=8192";
    // Batch-1 decode, then an odd channel count no block divides, without the activation.
    for (DType d : {DType::f32, DType::bf16}) {
        c.check_shapes.push_back({"b=1,c=8192", {d}, {}});
        c.check_shapes.push_back({"b=3,c=37", {d}, {}});
    }
    c.check_shapes.push_back({"b=3,c=37", {DType::f32}, {"CONV_SILU=0"}});
    c.digest_shapes = {"b=1,c=8192", "b=3,c=37", "b=32,c=4096"};
    return c;
}

} // namespace detail
} // namespace kjit
