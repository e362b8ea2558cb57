#include "jit/compiler.hpp"
#include "runtime/buffer.hpp"
#include "runtime/context.hpp"
#include "runtime/engine.hpp"
#include "runtime/launch.hpp"
#include "runtime/module.hpp"
#include "runtime/stream.hpp"
#include "tests/support.hpp"

#include <cstdint>
#include <fstream>
#include <functional>
#include <sstream>

#include "tests/doctest.hpp"

using namespace kjit;
using kjit::test::launch_error;

namespace {
/// rms_norm compiled for the device with RMS_BLOCK=block, loaded into `ctx`.
Module load_rms_norm(const Context& ctx, int block) {
    CompileOptions o;
    o.arch = ctx.device().arch();
    o.defines["RMS_BLOCK"] = std::to_string(block);
    return Module::load(ctx, compile(SourceSet::embedded(), "rms_norm", o).cubin, "rms_norm");
}

} // namespace

TEST_SUITE("runtime") {

TEST_CASE("without a usable GPU the driver reports a typed NoDeviceError that is the same each time") {
    std::string reason;
    if (device_available(&reason)) {
        CHECK(driver().version >= 12040);
        CHECK((driver().cuLaunchKernel != nullptr));
        return;
    }
    CHECK((reason.rfind("no CUDA driver: ", 0) == 0 || reason.rfind("no CUDA device: ", 0) == 0));
    for (int i = 0; i < 2; ++i) {
        try {
            (void)driver();
            FAIL("expected NoDeviceError");
        } catch (const NoDeviceError& e) {
            CHECK(e.what() == reason);
        }
    }
    CHECK_THROWS_AS((void)Device::count(), NoDeviceError);
}

TEST_CASE("check builds its error context only when the call failed") {
    int built = 0;
    const auto context = [&] {
        ++built;
        return std::string("ordinal=3 of 1");
    };
    check(CUDA_SUCCESS, "cuDeviceGet", context);
    CHECK(built == 0);
    try {
        check(CUDA_ERROR_INVALID_DEVICE, "cuDeviceGet", context);
        FAIL("expected CudaError");
    } catch (const CudaError& e) {
        CHECK(built == 1);
        CHECK(e.call == "cuDeviceGet");
        CHECK(e.code == CUDA_ERROR_INVALID_DEVICE);
        CHECK(e.context == "ordinal=3 of 1");
        CHECK(std::string(e.what()).find("cuDeviceGet: ") == 0);
        CHECK(std::string(e.what()).find(" [ordinal=3 of 1]") != std::string::npos);
    }
}

TEST_CASE("the destroyed-stream memory keeps the last additions up to its capacity") {
    const auto h = [](std::uintptr_t i) { return reinterpret_cast<const void*>(i * 16); };
    detail::RecentHandles set(3);
    CHECK(set.capacity() == 3);
    set.add(nullptr);
    CHECK(set.size() == 0);
    for (std::uintptr_t i = 1; i <= 3; ++i)
        set.add(h(i));
    CHECK((set.contains(h(1)) && set.contains(h(2)) && set.contains(h(3))));
    set.add(h(4)); // full: the oldest (1) goes
    CHECK_FALSE(set.contains(h(1)));
    CHECK(set.size() == 3);
    set.remove(h(2)); // handed out again
    CHECK_FALSE(set.contains(h(2)));
    CHECK(set.size() == 2);
    set.add(h(5)); // takes 2's old slot: nothing else is forgotten
    CHECK((set.contains(h(3)) && set.contains(h(4)) && set.contains(h(5))));
    set.add(h(6)); // the oldest now is 3
    CHECK_FALSE(set.contains(h(3)));
    set.add(h(4)); // re-added when it was the oldest: it becomes the newest, nothing goes
    CHECK((set.contains(h(4)) && set.contains(h(5)) && set.contains(h(6))));
    set.add(h(7));
    set.add(h(8)); // 5, then 6 go, in the order they came
    CHECK_FALSE(set.contains(h(5)));
    CHECK_FALSE(set.contains(h(6)));
    CHECK((set.contains(h(4)) && set.contains(h(7)) && set.contains(h(8))));
    set.add(h(9)); // and then the re-added 4
    CHECK_FALSE(set.contains(h(4)));
    CHECK(set.size() == 3);

    // A process that destroys streams forever keeps only the most recent ones.
    detail::RecentHandles big(kDestroyedStreamsRemembered);
    for (std::uintptr_t i = 1; i <= 10 * kDestroyedStreamsRemembered; ++i)
        big.add(h(i));
    CHECK(big.size() == kDestroyedStreamsRemembered);
    CHECK(big.contains(h(10 * kDestroyedStreamsRemembered)));
    CHECK(big.contains(h(9 * kDestroyedStreamsRemembered + 1)));
    CHECK_FALSE(big.contains(h(9 * kDestroyedStreamsRemembered)));
}

TEST_CASE("the engine refuses a misspelled flag and injects a flag's define into the key") {
    test::TempDir cache_dir;
    EngineOptions options;
    options.cache.dir = cache_dir.path();
    ::setenv("KJIT_NO_CAHCE", "1", 1);
    CHECK_THROWS_WITH_AS(Engine(nullptr, options, SourceProvider()),
                         doctest::Contains("did you mean KJIT_NO_CACHE?"), FlagError);
    ::unsetenv("KJIT_NO_CAHCE");

    FlagRegistry flags = builtin_flags();
    flags.add_prefix("DEMO_");
    FlagSpec wide;
    wide.name = "DEMO_WIDE";
    wide.type = FlagType::boolean;
    wide.default_value = "false";
    wide.doc = "use the wide block";
    wide.define = "DEMO_WIDE";
    flags.declare(wide);
    flags.add_tier_rule({"DEMO_WIDE", "", "wide"});
    options.flags = flags;
    const std::vector<KernelSpec> specs = {{"norm", "rms_norm", {}}};
    Engine off(nullptr, options, SourceProvider());
    const PrepareRow a = off.prepare({}, specs)[0];
    ::setenv("DEMO_WIDE", "1", 1);
    Engine on(nullptr, options, SourceProvider());
    const PrepareRow b = on.prepare({}, specs)[0];
    ::unsetenv("DEMO_WIDE");
    REQUIRE_FALSE(a.error);
    REQUIRE_FALSE(b.error);
    CHECK(a.defines == "DEMO_WIDE=0");
    CHECK(b.defines == "DEMO_WIDE=1");
    CHECK(a.key != b.key);
    CHECK(off.flags().tier() == "base");
    CHECK(on.flags().tier() == "wide");
    CHECK(b.origin == Prepared::compiled); // compiled and cached, not loaded: no context
}

} // TEST_SUITE

TEST_SUITE("gpu") {

TEST_CASE("device and context and buffers and events work") {
    KJIT_REQUIRE_DEVICE();
    const Device d = Device::get(0);
    MESSAGE(d.name() << " " << d.arch() << " " << d.sm_count() << " SMs");
    CHECK(Device::count() >= 1);
    CHECK(d.sm_count() > 0);
    CHECK(d.arch().rfind("sm_", 0) == 0);
    const Context ctx(d);
    std::vector<int> host(1000);
    for (int i = 0; i < 1000; ++i)
        host[i] = i * 7;
    DeviceBuffer b = DeviceBuffer::from<int>(host);
    CHECK(b.to_vector<int>() == host);
    b.fill_bytes(0);
    CHECK(b.to_vector<int>() == std::vector<int>(1000, 0));
    CHECK_THROWS_AS(b.upload(host.data(), 4), Error);
    Stream s;
    Event e0, e1;
    e0.record(s.handle());
    e1.record(s.handle());
    e1.synchronize();
    CHECK(Event::elapsed_ms(e0, e1) >= 0.0f);
    CHECK_THROWS_AS((void)Device::get(1000), CudaError);
}

TEST_CASE("a loaded module names a missing entry point") {
    KJIT_REQUIRE_DEVICE();
    const Context ctx(Device::get(0));
    const Module m = load_rms_norm(ctx, 256);
    CHECK(m.function("rms_norm_f32").max_threads_per_block() == 256);
    CHECK_THROWS_WITH_AS((void)m.function("rms_norm_f64"),
                         doctest::Contains("no entry point 'rms_norm_f64'"), NotFoundError);
    CHECK_THROWS_AS(Module::load(ctx, "not a cubin", "junk"), CudaError);
}

TEST_CASE("first-launch checks refuse bad launches with named causes and a good launch still works after them") {
    KJIT_REQUIRE_DEVICE();
    const Context ctx(Device::get(0));
    const Module m = load_rms_norm(ctx, 128);
    const Function f = m.function("rms_norm_f32");
    const int rows = 4, n = 300;
    DeviceBuffer x(rows * n * 4), w(n * 4), y(rows * n * 4);
    x.fill_bytes(0);
    w.fill_bytes(0);
    Stream s;
    LaunchConfig c{{rows, 1, 1}, {128, 1, 1}, 0, s.handle()};

    // Too few arguments: the count and each size are named.
    std::string err = launch_error([&] { f.launch(c, x.ptr(), w.ptr(), y.ptr(), rows, n); });
    CHECK(err.find("the kernel takes 6 parameters") != std::string::npos);
    CHECK(err.find("but 5 arguments were passed") != std::string::npos);
    CHECK(err.find("kernel=rms_norm_f32") != std::string::npos);
    // An int where a pointer is expected.
    err = launch_error([&] { f.launch(c, 0, w.ptr(), y.ptr(), rows, n, 1e-6f); });
    CHECK(err.find("argument 1 is 4 bytes at offset 0 but the kernel's parameter 1 is 8 bytes at "
                   "offset 0") != std::string::npos);
    // A block over __launch_bounds__(128).
    c.block.x = 256;
    err = launch_error([&] { f.launch(c, x.ptr(), w.ptr(), y.ptr(), rows, n, 1e-6f); });
    CHECK(err.find("block of 256 threads exceeds the kernel's limit of 128") != std::string::npos);
    c.block.x = 2048;
    err = launch_error([&] { f.launch(c, x.ptr(), w.ptr(), y.ptr(), rows, n, 1e-6f); });
    CHECK(err.find("block of 2048 threads") != std::string::npos);
    // Dynamic shared memory over the device maximum.
    c.block.x = 128;
    c.smem_bytes = 1u << 20;
    err = launch_error([&] { f.launch(c, x.ptr(), w.ptr(), y.ptr(), rows, n, 1e-6f); });
    CHECK(err.find("exceeds the device maximum") != std::string::npos);
    // grid.y over 65535.
    c.smem_bytes = 0;
    c.grid.y = 70000;
    err = launch_error([&] { f.launch(c, x.ptr(), w.ptr(), y.ptr(), rows, n, 1e-6f); });
    CHECK(err.find("65535") != std::string::npos);

    c.grid.y = 1;
    y.fill_bytes(0xff);
    f.launch(c, x.ptr(), w.ptr(), y.ptr(), rows, n, 1e-6f);
    s.synchronize();
    // x = 0 and w = 0: every output is 0 * inv * 0 = 0, every element written.
    CHECK(y.to_vector<float>() == std::vector<float>(rows * n, 0.0f));
}

} // TEST_SUITE

TEST_SUITE("gpu") {

TEST_CASE("the engine prepares from compile then memory then disk and launches") {
    KJIT_REQUIRE_DEVICE();
    const Context ctx(Device::get(0));
    test::TempDir cache_dir;
    EngineOptions options;
    options.cache.dir = cache_dir.path();
    const std::vector<KernelSpec> specs = {{"norm", "rms_norm", {{"RMS_BLOCK", "${block}"}}}};
    const ModelShape shape{{{"block", 512}}};
    Engine engine(&ctx, options, SourceProvider());
    auto rows = engine.prepare(shape, specs);
    REQUIRE(rows.size() == 1);
    REQUIRE_FALSE(rows[0].error);
    CHECK(rows[0].origin == Prepared::compiled);
    CHECK(rows[0].defines == "RMS_BLOCK=512");
    CHECK(rows[0].load_ms > 0);
    CHECK(engine.function("norm", "rms_norm_f32").max_threads_per_block() == 512);
    CHECK(engine.prepare(shape, specs)[0].origin == Prepared::memory);
    Engine second(&ctx, options, SourceProvider());
    CHECK(second.prepare(shape, specs)[0].origin == Prepared::disk);
    CHECK_THROWS_WITH_AS((void)engine.function("nrom", "rms_norm_f32"),
                         doctest::Contains("no prepared kernel named 'nrom'"), NotFoundError);
    CHECK_THROWS_WITH_AS((void)engine.function("norm", "rms_norm_f64"),
                         doctest::Contains("has no entry point 'rms_norm_f64'"), NotFoundError);
    // ... and lists the ones it has.
    CHECK_THROWS_WITH_AS((void)engine.function("norm", "rms_norm_f64"),
                         doctest::Contains("(entry points: "), NotFoundError);
}

TEST_CASE("a launch that does not fit a kernel's tier takes its declared fallback tier") {
    KJIT_REQUIRE_DEVICE();
    const Context ctx(Device::get(0));
    test::TempDir cache_dir;
    EngineOptions options;
    options.cache.dir = cache_dir.path();
    Engine engine(&ctx, options, SourceProvider());
    const std::vector<KernelSpec> specs = {
        {"narrow", "rms_norm", {{"RMS_BLOCK", "256"}}, "wide"},
        {"wide", "rms_norm", {{"RMS_BLOCK", "1024"}}, ""}};
    for (const auto& row : engine.prepare({}, specs))
        REQUIRE_FALSE(row.error);
    LaunchConfig c{{1, 1, 1}, {256, 1, 1}};
    CHECK(engine.function_for("narrow", "rms_norm_f32", c).max_threads_per_block() == 256);
    c.block.x = 1024; // over narrow's __launch_bounds__: its fallback launches instead
    CHECK(engine.function_for("narrow", "rms_norm_f32", c).max_threads_per_block() == 1024);
    c.smem_bytes = 1u << 22; // fits no tier: the last one is returned and its launch says why
    CHECK(engine.function_for("narrow", "rms_norm_f32", c).max_threads_per_block() == 1024);
}

TEST_CASE("with a source override an edited kernel is picked up without a rebuild") {
    KJIT_REQUIRE_DEVICE();
    const Context ctx(Device::get(0));
    test::TempDir src, cache_dir;
    std::filesystem::copy(KJIT_SOURCE_DIR "/kernel_src", src.path());
    EngineOptions options;
    options.cache.dir = cache_dir.path();
    Engine engine(&ctx, options, SourceProvider(src.path()));
    const std::vector<KernelSpec> specs = {{"norm", "rms_norm", {}}};
    REQUIRE_FALSE(engine.prepare({}, specs)[0].error);
    CHECK(engine.function("norm", "rms_norm_f32").max_threads_per_block() == 256);
    // Change the default block width in the file: the next request sees it.
    std::ifstream in(src.path() / "rms_norm.cu");
    std::stringstream text;
    text << in.rdbuf();
    std::string body = text.str();
    const auto at = body.find("#define RMS_BLOCK 256");
    REQUIRE(at != std::string::npos);
    body.replace(at, 21, "#define RMS_BLOCK 128");
    std::ofstream(src.path() / "rms_norm.cu") << body;
    CHECK(engine.function("norm", "rms_norm_f32").max_threads_per_block() == 128);
}

} // TEST_SUITE
