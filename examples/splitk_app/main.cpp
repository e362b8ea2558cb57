// splitk_app: specializes its kernels at start-up for the model shape of a shape file, then
// runs a split-K GEMV (partial + reduce launches) and a row softmax and checks both against a
// float64 reference computed here. Without a GPU it still compiles (and caches) every kernel
// and says why it cannot launch.
// Usage: splitk_app [SHAPE.toml]   (default kernels/model.toml, run from the project directory)
#include <kjit/jit/shape_file.hpp>
#include <kjit/runtime/buffer.hpp>
#include <kjit/runtime/engine.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// Deterministic inputs in [-0.5, 0.5): a hash of the index, the same on every run.
std::vector<float> inputs(std::size_t n, std::uint32_t salt) {
    std::vector<float> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        std::uint32_t h = static_cast<std::uint32_t>(i) * 2654435761u ^ salt;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        out[i] = static_cast<float>(h >> 8) / 16777216.0f - 0.5f;
    }
    return out;
}

// Relative L2 error of `got` against the float64 reference.
double rel_l2(std::span<const float> got, std::span<const double> want) {
    double err = 0, norm = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        err += (got[i] - want[i]) * (got[i] - want[i]);
        norm += want[i] * want[i];
    }
    return std::sqrt(err / norm);
}

struct App {
    kjit::ShapeFile file;
    // A shape value, which every size here must be: a positive int.
    int value(const char* key) const {
        const auto it = file.shape.values.find(key);
        if (it == file.shape.values.end())
            throw std::runtime_error(std::string("the shape has no '") + key + "'");
        if (it->second < 1 || it->second > INT32_MAX)
            throw std::runtime_error(std::string("shape value ") + key + " = " +
                                     std::to_string(it->second) + " is not a positive int");
        return static_cast<int>(it->second);
    }
    // A define a kernel is compiled with, as the launch geometry must follow it: a positive
    // integer.
    unsigned define(const char* kernel, const char* name) const {
        for (const auto& spec : file.kernels) {
            if (spec.name != kernel)
                continue;
            const auto defines = kjit::resolve_defines(spec, file.shape);
            const auto it = defines.find(name);
            if (it == defines.end())
                throw std::runtime_error(std::string("kernel '") + kernel + "' injects no " + name);
            std::size_t used = 0;
            long long v = 0;
            try {
                v = std::stoll(it->second, &used);
            } catch (const std::exception&) {
            }
            if (used != it->second.size() || v < 1 || v > 65536)
                throw std::runtime_error(std::string("kernel '") + kernel + "': " + name + " = " +
                                         it->second + " is not a positive integer");
            return static_cast<unsigned>(v);
        }
        throw std::runtime_error(std::string("the shape file has no kernel '") + kernel + "'");
    }
};

bool report(const char* what, double err, double tolerance) {
    const bool ok = err <= tolerance;
    std::printf("splitk_app: %s: rel L2 error %.2e (tolerance %.0e) %s\n", what, err, tolerance,
                ok ? "ok" : "FAILED");
    return ok;
}

} // namespace

int main(int argc, char** argv) try {
    const App app{kjit::ShapeFile::load(argc > 1 ? argv[1] : "kernels/model.toml")};
    const int rows = app.value("d_model");
    const int cols = app.value("d_ff");
    const int heads = app.value("heads");
    const int seq = app.value("seq");
    const unsigned split_k = app.define("splitk_gemv", "SPLIT_K");
    const unsigned gemv_block = app.define("splitk_gemv", "GEMV_BLOCK");
    const unsigned softmax_block = app.define("row_softmax", "SOFTMAX_BLOCK");
    const unsigned max_cols = app.define("row_softmax", "MAX_COLS");
    // The kernels' contracts, checked before anything is launched.
    if (cols % (split_k * 4) != 0)
        throw std::runtime_error("d_ff = " + std::to_string(cols) +
                                 " is not a multiple of 4 x SPLIT_K = " + std::to_string(4 * split_k));
    if (static_cast<unsigned>(seq) > max_cols)
        throw std::runtime_error("seq = " + std::to_string(seq) + " exceeds MAX_COLS = " +
                                 std::to_string(max_cols) + " row_softmax was compiled for");

    std::string no_gpu;
    std::optional<kjit::Context> context;
    if (kjit::device_available(&no_gpu))
        context.emplace(kjit::Device::get(0));
    // A null context: compile and cache only, load nothing.
    kjit::Engine engine(context ? &*context : nullptr);
    int failed = 0;
    for (const auto& row : engine.prepare(app.file.shape, app.file.kernels)) {
        std::printf("%-12s %-9s %s  %.1f ms\n", row.name.c_str(),
                    kjit::prepared_name(row.origin), row.defines.c_str(), row.compile_ms);
        if (row.error) {
            ++failed;
            try {
                std::rethrow_exception(row.error);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "splitk_app: %s\n", e.what());
            }
        }
    }
    if (failed)
        return 1;
    if (!context) {
        std::printf("splitk_app: cannot launch: %s\n", no_gpu.c_str());
        return 0;
    }

    // y = W x in two launches through a workspace of SPLIT_K partial sums per row.
    const std::vector<float> w = inputs(static_cast<std::size_t>(rows) * cols, 1);
    const std::vector<float> x = inputs(static_cast<std::size_t>(cols), 2);
    auto d_w = kjit::DeviceBuffer::from<float>(w);
    auto d_x = kjit::DeviceBuffer::from<float>(x);
    kjit::DeviceBuffer d_partial(sizeof(float) * split_k * rows);
    kjit::DeviceBuffer d_y(sizeof(float) * rows);
    const unsigned rows_per_block = gemv_block / 32;
    engine.function("splitk_gemv", "splitk_partial")
        .launch({.grid = {(rows + rows_per_block - 1) / rows_per_block, split_k},
                 .block = {gemv_block}},
                d_partial.ptr(), d_w.ptr(), d_x.ptr(), rows, cols);
    engine.function("splitk_gemv", "splitk_reduce")
        .launch({.grid = {(rows + gemv_block - 1) / gemv_block}, .block = {gemv_block}}, d_y.ptr(),
                d_partial.ptr(), rows);

    // softmax over heads rows of seq attention scores.
    const std::vector<float> scores = inputs(static_cast<std::size_t>(heads) * seq, 3);
    auto d_scores = kjit::DeviceBuffer::from<float>(scores);
    kjit::DeviceBuffer d_probs(sizeof(float) * heads * seq);
    engine.function("row_softmax", "row_softmax")
        .launch({.grid = {static_cast<unsigned>(heads)}, .block = {softmax_block}}, d_probs.ptr(),
                d_scores.ptr(), seq);
    context->synchronize();

    std::vector<double> y_ref(rows);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            y_ref[r] += static_cast<double>(w[static_cast<std::size_t>(r) * cols + c]) * x[c];
    std::vector<double> p_ref(static_cast<std::size_t>(heads) * seq);
    for (int h = 0; h < heads; ++h) {
        const float* s = scores.data() + static_cast<std::size_t>(h) * seq;
        double m = s[0], sum = 0;
        for (int c = 0; c < seq; ++c)
            m = std::max(m, static_cast<double>(s[c]));
        for (int c = 0; c < seq; ++c)
            sum += std::exp(s[c] - m);
        for (int c = 0; c < seq; ++c)
            p_ref[static_cast<std::size_t>(h) * seq + c] = std::exp(s[c] - m) / sum;
    }
    const std::string gemv = "splitk_gemv y = W x, " + std::to_string(rows) + " x " +
                             std::to_string(cols) + ", SPLIT_K=" + std::to_string(split_k);
    const std::string softmax = "row_softmax, " + std::to_string(heads) + " rows x " +
                                std::to_string(seq) + " columns";
    const bool ok = report(gemv.c_str(), rel_l2(d_y.to_vector<float>(), y_ref), 1e-5) &
                    report(softmax.c_str(), rel_l2(d_probs.to_vector<float>(), p_ref), 1e-5);
    std::printf("splitk_app on %s: %s\n", context->device().name().c_str(),
                ok ? "every output matches its float64 reference" : "FAILED");
    return ok ? 0 : 1;
} catch (const std::exception& e) {
    std::fprintf(stderr, "splitk_app: %s\n", e.what());
    return 1;
}
