// shape_app: specializes its kernels for the model shape at start-up, then launches them.
// Without a GPU it still compiles (and caches) every kernel, and says why it cannot launch.
#include <kjit/runtime/buffer.hpp>
#include <kjit/runtime/engine.hpp>

#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

int main() try {
    // The shape is known at start-up; kernels take its values as compile-time defines.
    const kjit::ModelShape shape{{{"d_model", 7168}, {"block", 256}}};
    const std::vector<kjit::KernelSpec> specs{
        {.name = "saxpy", .source = "saxpy", .defines = {{"SAXPY_BLOCK", "${block}"}}},
    };

    std::string no_gpu;
    std::optional<kjit::Context> context;
    if (kjit::device_available(&no_gpu))
        context.emplace(kjit::Device::get(0));

    // A null context: compile and cache only, load nothing.
    kjit::Engine engine(context ? &*context : nullptr);
    int failed = 0;
    for (const auto& row : engine.prepare(shape, specs)) {
        std::printf("%-8s %-9s %s  %.1f ms\n", row.name.c_str(),
                    kjit::prepared_name(row.origin), row.defines.c_str(), row.compile_ms);
        if (row.error) {
            ++failed;
            try {
                std::rethrow_exception(row.error);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "shape_app: %s\n", e.what());
            }
        }
    }
    if (failed)
        return 1;
    if (!context) {
        std::printf("shape_app: cannot launch: %s\n", no_gpu.c_str());
        return 0;
    }

    const int n = static_cast<int>(shape.values.at("d_model"));
    const unsigned block = static_cast<unsigned>(shape.values.at("block"));
    const std::vector<float> x(n, 2.0f), y(n, 1.0f);
    auto d_x = kjit::DeviceBuffer::from<float>(x);
    auto d_y = kjit::DeviceBuffer::from<float>(y);
    const kjit::LaunchConfig config{.grid = {(n + block - 1) / block}, .block = {block}};
    engine.function("saxpy", "saxpy").launch(config, 3.0f, d_x.ptr(), d_y.ptr(), n);
    context->synchronize();

    const auto out = d_y.to_vector<float>();
    for (float v : out)
        if (v != 7.0f) {
            std::fprintf(stderr, "shape_app: saxpy gave %g, expected 7\n", v);
            return 1;
        }
    std::printf("shape_app: saxpy on %s: %d elements ok\n", context->device().name().c_str(), n);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "shape_app: %s\n", e.what());
    return 1;
}
