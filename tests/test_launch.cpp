#include "runtime/buffer.hpp"
#include "runtime/context.hpp"
#include "runtime/geometry.hpp"
#include "runtime/graph.hpp"
#include "runtime/launch.hpp"
#include "runtime/module.hpp"
#include "runtime/stream.hpp"
#include "tests/launch_kernels.hpp"
#include "tests/support.hpp"

#include "tests/doctest.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <numeric>
#include <sstream>

using namespace kjit;
using kjit::test::launch_error;
using kjit::test::load_test_kernels;

namespace {

/// Whether `device`'s primary context is active (retained by someone in this process).
bool primary_context_active(const Device& device) {
    unsigned flags = 0;
    int active = 0;
    check(driver().cuDevicePrimaryCtxGetState(device.handle(), &flags, &active),
          "cuDevicePrimaryCtxGetState");
    return active != 0;
}

/// What `f` writes to this process's stderr (kjit's warnings go there).
std::string stderr_of(const std::function<void()>& f) {
    test::TempDir dir;
    const std::string path = (dir.path() / "stderr.txt").string();
    std::fflush(stderr);
    const int saved = ::dup(2);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(saved >= 0);
    REQUIRE(fd >= 0);
    ::dup2(fd, 2);
    ::close(fd);
    f();
    std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

} // namespace

TEST_SUITE("gpu") {

TEST_CASE("programmatic dependent launches keep producer-consumer order") {
    KJIT_REQUIRE_DEVICE();
    const Context ctx(Device::get(0));
    const Module m = load_test_kernels(ctx);
    const Function produce = m.function("produce"), consume = m.function("consume");
    const int n = 1 << 20;
    DeviceBuffer buf(n * 4), out(n * 4);
    Stream s;
    LaunchConfig c{{n / 256, 1, 1}, {256, 1, 1}, 0, s.handle()};
    c.pdl = true;
    for (int salt = 0; salt < 50; ++salt) {
        produce.launch(c, buf.ptr(), n, salt);
        consume.launch(c, buf.ptr(), out.ptr(), n);
    }
    s.synchronize();
    const auto got = out.to_vector<int>();
    int bad = 0;
    for (int i = 0; i < n; ++i)
        bad += got[i] != i * 3 + 49 + 1;
    CHECK(bad == 0);
}

TEST_CASE("cluster launches give each block its rank and refuse a partial cluster") {
    KJIT_REQUIRE_DEVICE();
    const Context ctx(Device::get(0));
    const Module m = load_test_kernels(ctx);
    const Function f = m.function("cluster_rank");
    DeviceBuffer out(16 * 4);
    Stream s;
    LaunchConfig c{{16, 1, 1}, {32, 1, 1}, 0, s.handle()};
    c.cluster = {4, 1, 1};
    f.launch(c, out.ptr());
    s.synchronize();
    const auto ranks = out.to_vector<unsigned>();
    for (unsigned i = 0; i < 16; ++i)
        CHECK(ranks[i] == i % 4);
    c.grid.x = 10;
    CHECK(launch_error([&] { f.launch(c, out.ptr()); }).find("not a whole number of clusters") !=
          std::string::npos);
}

TEST_CASE("a cooperative launch runs when the grid fits and is refused with the numbers when not") {
    KJIT_REQUIRE_DEVICE();
    const Context ctx(Device::get(0));
    const Module m = load_test_kernels(ctx);
    const Function f = m.function("empty");
    Stream s;
    LaunchConfig c{{static_cast<unsigned>(ctx.device().sm_count()), 1, 1}, {128, 1, 1}, 0, s.handle()};
    c.cooperative = true;
    f.launch(c);
    s.synchronize();
    c.grid.x = 1u << 20;
    const std::string err = launch_error([&] { f.launch(c); });
    CHECK(err.find("a cooperative grid of 1048576 blocks exceeds the") != std::string::npos);
}

TEST_CASE("cooperative limits are kept per block and shared memory and stay exact on later launches") {
    KJIT_REQUIRE_DEVICE();
    const Context ctx(Device::get(0));
    const Module m = load_test_kernels(ctx);
    const Function f = m.function("empty");
    const long long sms = ctx.device().sm_count();
    Stream s;
    // 12 pairs: more than a function keeps, so the second round also re-asks evicted ones.
    for (int round = 0; round < 2; ++round)
        for (const unsigned block : {32u, 64u, 128u, 256u, 512u, 1024u})
            for (const unsigned smem : {0u, 8u * 1024}) {
                int per_sm = 0;
                check(driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(
                          &per_sm, f.handle(), static_cast<int>(block), smem),
                      "cuOccupancyMaxActiveBlocksPerMultiprocessor");
                REQUIRE(per_sm > 0);
                const auto fit = static_cast<unsigned>(per_sm * sms);
                INFO("round " << round << " block " << block << " smem " << smem);
                LaunchConfig c{{fit, 1, 1}, {block, 1, 1}, smem, s.handle()};
                c.cooperative = true;
                f.launch(c);
                c.grid.x = fit + 1;
                const std::string err = launch_error([&] { f.launch(c); });
                CHECK(err.find("a cooperative grid of " + std::to_string(fit + 1) +
                               " blocks exceeds the " + std::to_string(fit) +
                               " that can be co-resident (" + std::to_string(per_sm) +
                               " per SM)") != std::string::npos);
            }
    s.synchronize();
}

TEST_CASE("dynamic shared memory beside static opts in past 48 KiB and is refused past the device maximum") {
    KJIT_REQUIRE_DEVICE();
    const Context ctx(Device::get(0));
    const Module m = load_test_kernels(ctx);
    const Function f = m.function("smem_edges");
    const int optin = ctx.device().attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    const int fixed = f.attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    REQUIRE(fixed >= 256);
    DeviceBuffer out(4);
    Stream s;
    // Exactly 48 KiB dynamic: within the default for dynamic memory alone, past it with the
    // static 256 B, so the launch needs the opt-in; then the largest the device allows.
    for (const unsigned dynamic : {48u * 1024, static_cast<unsigned>(optin - fixed)}) {
        INFO("dynamic " << dynamic << " static " << fixed);
        out.fill_bytes(0);
        LaunchConfig c{{1, 1, 1}, {64, 1, 1}, dynamic, s.handle()};
        f.launch(c, out.ptr(), dynamic);
        s.synchronize();
        CHECK(out.to_vector<unsigned>() == std::vector<unsigned>{0x5a + 1});
    }
    LaunchConfig c{{1, 1, 1}, {64, 1, 1}, static_cast<unsigned>(optin - fixed + 1), s.handle()};
    const std::string err = launch_error([&] { f.launch(c, out.ptr(), c.smem_bytes); });
    CHECK(err.find("exceeds the device maximum of " + std::to_string(optin)) != std::string::npos);
}

TEST_CASE("launches are capturable into a graph") {
    KJIT_REQUIRE_DEVICE();
    const Context ctx(Device::get(0));
    const Module m = load_test_kernels(ctx);
    const Function produce = m.function("produce");
    const int n = 4096;
    DeviceBuffer buf(n * 4);
    buf.fill_bytes(0);
    Stream s;
    const LaunchConfig c{{n / 128, 1, 1}, {128, 1, 1}, 0, s.handle()};
    check(driver().cuStreamBeginCapture(s.handle(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
          "cuStreamBeginCapture");
    for (int salt = 1; salt <= 100; ++salt)
        produce.launch(c, buf.ptr(), n, salt);
    CUgraph graph = nullptr;
    check(driver().cuStreamEndCapture(s.handle(), &graph), "cuStreamEndCapture");
    CUgraphExec exec = nullptr;
    check(driver().cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiateWithFlags");
    CHECK(buf.to_vector<int>()[5] == 0); // captured, not run
    check(driver().cuGraphLaunch(exec, s.handle()), "cuGraphLaunch");
    s.synchronize();
    CHECK(buf.to_vector<int>()[5] == 15 + 100);
    driver().cuGraphExecDestroy(exec);
    driver().cuGraphDestroy(graph);
}

TEST_CASE("a Graph replays what it captured and a capture that throws leaves the stream usable") {
    KJIT_REQUIRE_DEVICE();
    const Context ctx(Device::get(0));
    const Module m = load_test_kernels(ctx);
    const Function produce = m.function("produce");
    const int n = 4096;
    DeviceBuffer buf(n * 4);
    buf.fill_bytes(0);
    Stream s;
    const auto config = [&](CUstream stream) {
        return LaunchConfig{{n / 128, 1, 1}, {128, 1, 1}, 0, stream};
    };
    Graph g = Graph::capture(
        [&](CUstream stream) {
            for (int salt = 1; salt <= 3; ++salt)
                produce.launch(config(stream), buf.ptr(), n, salt);
        },
        s.handle());
    REQUIRE(g.exec() != nullptr);
    s.synchronize();
    CHECK(buf.to_vector<int>()[5] == 0); // captured, not run
    const Graph moved = std::move(g);
    CHECK(g.exec() == nullptr);
    moved.launch(s.handle());
    s.synchronize();
    CHECK(buf.to_vector<int>()[5] == 15 + 3);

    // A refused launch inside the capture: the LaunchError comes out, the capture is ended.
    CHECK_THROWS_AS(Graph::capture(
                        [&](CUstream stream) {
                            produce.launch(config(stream), buf.ptr(), n, 9);
                            produce.launch({{1, 1, 1}, {2048, 1, 1}, 0, stream}, buf.ptr(), n, 9);
                        },
                        s.handle()),
                    LaunchError);
    produce.launch(config(s.handle()), buf.ptr(), n, 11);
    s.synchronize();
    CHECK(buf.to_vector<int>()[5] == 15 + 11); // the stream runs work again; 9 never ran
    moved.launch(s.handle());
    s.synchronize();
    CHECK(buf.to_vector<int>()[5] == 15 + 3);
}

TEST_CASE("a module keeps its context alive after the Context is gone and releases it when unloaded") {
    KJIT_REQUIRE_DEVICE();
    const Device dev = Device::get(0);
    REQUIRE_FALSE(primary_context_active(dev)); // nothing else in this process holds it
    auto ctx = std::make_unique<Context>(dev);
    auto m = std::make_unique<Module>(load_test_kernels(*ctx));
    ctx.reset();
    CHECK(primary_context_active(dev)); // the module's share keeps it
    {
        const Function produce = m->function("produce");
        const int n = 1000;
        DeviceBuffer buf(n * 4);
        Stream s;
        produce.launch({{8, 1, 1}, {128, 1, 1}, 0, s.handle()}, buf.ptr(), n, 4);
        s.synchronize();
        CHECK(buf.to_vector<int>()[999] == 999 * 3 + 4);
    }
    const std::string warnings = stderr_of([&] { m.reset(); });
    CHECK(warnings.empty()); // the unload and the release both succeeded
    CHECK_FALSE(primary_context_active(dev));

    // A context opened afterwards is a fresh one and works.
    const Context again(dev);
    const Module m2 = load_test_kernels(again);
    const Function empty = m2.function("empty");
    Stream s;
    empty.launch({{1, 1, 1}, {32, 1, 1}, 0, s.handle()});
    s.synchronize();
}

TEST_CASE("a launch on a destroyed stream is an error and a correct launch still works after it") {
    KJIT_REQUIRE_DEVICE();
    const Context ctx(Device::get(0));
    const Module m = load_test_kernels(ctx);
    const Function f = m.function("empty");
    CUstream dead = nullptr;
    {
        Stream s;
        dead = s.handle();
    }
    const std::string err = launch_error([&] { f.launch({{1, 1, 1}, {32, 1, 1}, 0, dead}); });
    MESSAGE(err);
    CHECK(err.find("the stream was destroyed") != std::string::npos);
    Stream s;
    f.launch({{1, 1, 1}, {32, 1, 1}, 0, s.handle()});
    s.synchronize();
}

TEST_CASE("geometry reports blocks per SM and waves and SM share and derives a grid") {
    KJIT_REQUIRE_DEVICE();
    const Context ctx(Device::get(0));
    const Module m = load_test_kernels(ctx);
    const Function f = m.function("empty");
    const int sms = ctx.device().sm_count();
    LaunchGeometry g = launch_geometry(f, {{1, 1, 1}, {128, 1, 1}});
    CHECK(g.sm_count == sms);
    CHECK(g.blocks_per_sm == 16); // 2048 threads per SM / 128 (Hopper); block limit 32
    CHECK(g.sm_share == doctest::Approx(1.0 / sms));
    const unsigned grid = grid_for_occupancy(f, {128, 1, 1}, 0);
    CHECK(grid == static_cast<unsigned>(16 * sms));
    g = launch_geometry(f, {{grid, 1, 1}, {128, 1, 1}});
    CHECK(g.waves == doctest::Approx(1.0));
    CHECK(g.sm_share == 1.0);
    CHECK(grid_for_occupancy(f, {128, 1, 1}, 0, 2) == static_cast<unsigned>(2 * sms));
    MESSAGE(g.str());
}

TEST_CASE("a kernel launches on every device of the host") {
    KJIT_REQUIRE_DEVICE();
    const int devices = Device::count();
    MESSAGE(devices << " device(s)");
    for (int d = 0; d < devices; ++d) {
        const Context ctx(Device::get(d));
        const Module m = load_test_kernels(ctx);
        const Function produce = m.function("produce");
        const int n = 1000;
        DeviceBuffer buf(n * 4);
        Stream s;
        produce.launch({{8, 1, 1}, {128, 1, 1}, 0, s.handle()}, buf.ptr(), n, d);
        s.synchronize();
        const auto got = buf.to_vector<int>();
        CHECK(got[999] == 999 * 3 + d);
    }
}

} // TEST_SUITE
