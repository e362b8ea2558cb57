// rms_norm (kernel_src/rms_norm.cu): its contract and its float64 reference.
#include "kernels/builtin.hpp"
#include "kernels/reference.hpp"
#include "kernels/references.hpp"

#include <cmath>
#include <string>

namespace kjit {

void rms_norm_reference(std::span<const double> x, std::span<const double> w, std::span<double> y,
                        int rows, int n, double eps) {
    for (int r = 0; r < rows; ++r) {
        const double* xr = x.data() + static_cast<std::size_t>(r) * n;
        double sum = 0;
        for (int i = 0; i < n; ++i)
            sum += xr[i] * xr[i];
        const double inv = 1.0 / std::sqrt(sum / n + eps);
        for (int i = 0; i < n; ++i)
            y[static_cast<std::size_t>(r) * n + i] = xr[i] * inv * w[i];
    }
}

namespace detail {

void rms_norm_reference_io(ReferenceIo& io) {
    rms_norm_reference(io.input("x"), io.input("w"), io.output("y"),
                       static_cast<int>(io.shape("rows")), static_cast<int>(io.shape("n")),
                       io.scalar("eps"));
}

KernelContract rms_norm_contract() {
    KernelContract c;
    c.name = "rms_norm";
    c.shape_keys = {"rows", "n"};
    c.dtypes = {DType::f32, DType::bf16};
    c.defines = {{"RMS_BLOCK", "256"}, {"RMS_WARP_ROWS", "0"}};
    // One block per row by default (RMS_WARP_ROWS=k: a warp per k rows, RMS_BLOCK / 32 * k rows
    // per block); ROWS_PER_LAUNCH caps the blocks (named when a block was a row), and a smaller
    // grid strides over the rows.
    c.launch_params = {{"ROWS_PER_LAUNCH", "rows"}};
    c.args = {
        input_arg("x", "rows * n"),               // rows x n, row-major
        input_arg("w", "n"),                      // the weight, per column
        output_arg("y", "rows * n"),              // like x
        scalar_arg("rows", ArgType::i32, "rows"), // rows to normalize
        scalar_arg("n", ArgType::i32, "n"),       // the row width
        scalar_arg("eps", ArgType::f32, "1e-6"),  // the fp32 1e-6f the reference reads back
    };
    // Rows a block takes: one, or RMS_WARP_ROWS per warp.
    const std::string per_block = "(RMS_WARP_ROWS ? RMS_BLOCK / 32 * RMS_WARP_ROWS : 1)";
    // The kernel counts rows and columns in 32-bit ints: a row index plus the grid's stride
    // reaches 2 rows + (rows per block) - 2, a column index n + RMS_BLOCK - 1.
    c.preconditions = {
        {"2 * rows + " + per_block + " <= 2147483649",
         "rows={rows} is past the kernel's 32-bit row counter: a row index plus the grid's "
         "stride must fit an int (rows <= 1073741824 for a block per row)"},
        {"n <= 2147483648 - RMS_BLOCK", "n={n} is past the kernel's 32-bit column counter: at "
                                        "most 2147483648 - RMS_BLOCK={RMS_BLOCK}"}};
    c.pipeline = {
        launch_step({{DType::f32, "rms_norm_f32"}, {DType::bf16, "rms_norm_bf16"}},
                    {"min(ceil_div(rows, " + per_block + "), ROWS_PER_LAUNCH)"},
                    {"RMS_BLOCK"})};
    // Read x and w, write y; per element one FMA for the sum of squares and two multiplies.
    c.bytes = "(2 * rows * n + n) * dtype_size";
    c.flops = "4 * rows * n";
    c.reference = "rms_norm";
    c.bench_shape = "rows=8192,n=7168";
    // Prefill, decode with a full-width block, and a width that is no multiple of the block.
    for (DType d : {DType::f32, DType::bf16}) {
        c.check_shapes.push_back({"rows=4096,n=7168", {d}, {"RMS_BLOCK=256"}});
        c.check_shapes.push_back({"rows=1,n=7168", {d}, {"RMS_BLOCK=1024"}});
        c.check_shapes.push_back({"rows=333,n=1000", {d}, {"RMS_BLOCK=128"}});
        c.check_shapes.push_back({"rows=333,n=1000", {d}, {"RMS_BLOCK=128", "RMS_WARP_ROWS=1"}});
        c.check_shapes.push_back({"rows=333,n=1000", {d}, {"RMS_BLOCK=64", "RMS_WARP_ROWS=2"}});
    }
    // Decode (one row), a width that is no multiple of any block, and a prefill batch.
    c.digest_shapes = {"rows=1,n=7168", "rows=333,n=1000", "rows=4096,n=7168"};
    return c;
}

} // namespace detail
} // namespace kjit
