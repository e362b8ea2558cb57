#include "jit/compiler.hpp"
#include "runtime/buffer.hpp"
#include "runtime/context.hpp"
#include "runtime/geometry.hpp"
#include "runtime/graph.hpp"
#include "runtime/hooks.hpp"
#include "runtime/launch.hpp"
#include "runtime/ledger.hpp"
#include "runtime/module.hpp"
#include "runtime/stream.hpp"
#include "tests/support.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <numeric>
#include <sstream>
#include <thread>

using namespace kjit;
using kjit::test::launch_error;

namespace {

constexpr const char* kKernels = R"(#include "pdl.cuh"
extern "C" __global__ void produce(int* buf, int n, int salt) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    pdl_wait();
    if (i < n) buf[i] = i * 3 + salt;
    pdl_launch_dependents();
}
extern "C" __global__ void consume(const int* buf, int* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    pdl_wait();
    if (i < n) out[i] = buf[i] + 1;
}
extern "C" __global__ void cluster_rank(unsigned* out) {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    if (threadIdx.x == 0) out[blockIdx.x] = r;
}
extern "C" __global__ void empty() {}
)";

/// The test kernels (with kjit's pdl.cuh) loaded into `ctx`.
Module load_test_kernels(const Context& ctx) {
    SourceSet set;
    set.add({"launch_tests.cu", "tests/launch_tests.cu", kKernels, hash128(kKernels), 0});
    set.add(*SourceSet::embedded().find("pdl.cuh"));
    CompileOptions o;
    o.arch = ctx.device().arch();
    return Module::load(ctx, compile(set, "launch_tests", o).cubin, "launch_tests");
}

/// What a launch hook saw: one row per enter or exit.
struct LaunchLog final : LaunchObserver {
    struct Seen {
        bool exit;
        std::string kernel;
        Dim3 grid, block;
        unsigned smem;
        CUstream stream;
    };
    std::mutex mutex;
    std::vector<Seen> seen;
    std::vector<CUcontext> released;

    void launch_enter(const Function& f, const LaunchConfig& c) override { add(false, f, c); }
    void launch_exit(const Function& f, const LaunchConfig& c) override { add(true, f, c); }
    void context_release(CUcontext context) noexcept override {
        std::lock_guard lock(mutex);
        released.push_back(context);
    }

  private:
    void add(bool exit, const Function& f, const LaunchConfig& c) {
        std::lock_guard lock(mutex);
        seen.push_back({exit, f.name(), c.grid, c.block, c.smem_bytes, c.stream});
    }
};

bool same(const Dim3& a, const Dim3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

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

TEST_SUITE("launch") {

TEST_CASE("the ledger table ranks by recoverable SM-time and flags starved launches") {
    std::vector<LedgerRecord> records;
    for (int i = 0; i < 3; ++i)
        records.push_back({"rms_norm_f32", "rms_norm#1", {1, 1, 1}, {128, 1, 1}, 0, 24, 8,
                           0.001, 1.0 / 132, 2.0});
    records.push_back({"conv1d", "conv1d#2", {4096, 1, 1}, {256, 1, 1}, 0, 32, 8, 3.9, 1.0, 9.0});
    records.push_back({"scan", "scan#3", {48, 1, 1}, {256, 1, 1}, 0, 64, 2, 0.18, 48.0 / 132, 1.0});
    test::TempDir dir;
    write_records(dir.path() / "l.csv", records);
    const auto back = read_ledger_csv(dir.path() / "l.csv");
    REQUIRE(back.size() == records.size());
    CHECK(back[0].grid.x == 1);
    CHECK(back[4].sm_share == doctest::Approx(48.0 / 132));
    const std::string table = ledger_table(back);
    INFO(table);
    // rms_norm: 6 ms at 0.8% of SMs -> 5.95 ms recoverable, first; conv1d (all SMs) last.
    const auto rms = table.find("rms_norm_f32"), scan = table.find("scan"),
               conv = table.find("conv1d");
    CHECK(rms < scan);
    CHECK(scan < conv);
    CHECK(table.find("0.8%") != std::string::npos);
    CHECK(table.find("<< under 50% of SMs") < conv);
    std::ofstream(dir.path() / "bad.csv") << "header\nk,v,1x1x1,1x1x1,0,1\n";
    CHECK_THROWS_WITH_AS((void)read_ledger_csv(dir.path() / "bad.csv"),
                         doctest::Contains("bad.csv:2: error: malformed ledger row"), ConfigError);
}

TEST_CASE("launch hooks count registrations, end with their handle and reach observers of a context release") {
    const std::size_t before = launch_observer_count();
    const auto log = std::make_shared<LaunchLog>();
    const auto fake = reinterpret_cast<CUcontext>(std::uintptr_t{0x1234});
    {
        LaunchHook a(log);
        CHECK(a.registered());
        CHECK(launch_observer_count() == before + 1);
        CHECK(detail::launch_hooks_armed());
        LaunchHook b(log);
        CHECK(launch_observer_count() == before + 2);
        LaunchHook moved(std::move(b));
        CHECK_FALSE(b.registered());
        CHECK(moved.registered());
        CHECK(launch_observer_count() == before + 2);
        moved.reset();
        moved.reset(); // a second reset is harmless
        CHECK_FALSE(moved.registered());
        CHECK(launch_observer_count() == before + 1);
        detail::context_release(fake);
        CHECK(log->released == std::vector<CUcontext>{fake}); // once: `a` alone is registered
        LaunchHook assigned;
        CHECK_FALSE(assigned.registered());
        assigned = std::move(a);
        CHECK(launch_observer_count() == before + 1);
    }
    CHECK(launch_observer_count() == before);
    detail::context_release(fake);
    CHECK(log->released.size() == 1); // unregistered: not told
    CHECK(log.use_count() == 1);      // and no longer held by the registry
    CHECK_THROWS_AS(LaunchHook(nullptr), Error);
}

TEST_CASE("launch hooks register and unregister from many threads while context releases are reported") {
    const std::size_t before = launch_observer_count();
    const auto log = std::make_shared<LaunchLog>();
    const auto fake = reinterpret_cast<CUcontext>(std::uintptr_t{0x5678});
    LaunchHook steady(log);
    std::atomic<int> unregistered{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 500; ++i) {
                LaunchHook h(std::make_shared<LaunchLog>());
                unregistered += h.registered() ? 0 : 1;
            }
        });
    threads.emplace_back([&] {
        for (int i = 0; i < 500; ++i)
            detail::context_release(fake);
    });
    for (auto& t : threads)
        t.join();
    CHECK(unregistered == 0);
    CHECK(launch_observer_count() == before + 1);
    CHECK(log->released.size() == 500); // `steady` was registered throughout
}

} // TEST_SUITE

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

TEST_CASE("the ledger records every launch with geometry and event time") {
    KJIT_REQUIRE_DEVICE();
    const Context ctx(Device::get(0));
    const Module m = load_test_kernels(ctx);
    const Function f = m.function("empty");
    Ledger& ledger = Ledger::instance();
    ledger.enable(true);
    Stream s;
    for (int i = 0; i < 5; ++i)
        f.launch({{1, 1, 1}, {64, 1, 1}, 0, s.handle()});
    f.launch({{1000, 1, 1}, {256, 1, 1}, 0, s.handle()});
    ledger.disable();
    f.launch({{1, 1, 1}, {64, 1, 1}, 0, s.handle()}); // not recorded
    const auto records = ledger.records();
    REQUIRE(records.size() == 6);
    CHECK(records[0].kernel == "empty");
    CHECK(records[0].variant == "launch_tests");
    CHECK(records[0].sm_share == doctest::Approx(1.0 / ctx.device().sm_count()));
    CHECK(records[5].sm_share == 1.0);
    for (const auto& r : records)
        CHECK(r.ms > 0);
    MESSAGE(ledger_table(records));
}

TEST_CASE("the ledger resolves its event times before the context is released") {
    KJIT_REQUIRE_DEVICE();
    Ledger& ledger = Ledger::instance();
    const std::size_t before = ledger.records().size();
    {
        const Context ctx(Device::get(0));
        const Module m = load_test_kernels(ctx);
        const Function f = m.function("empty");
        Stream s;
        ledger.enable(true);
        CHECK(ledger.recording());
        f.launch({{2, 1, 1}, {64, 1, 1}, 0, s.handle()});
        ledger.disable();
        CHECK_FALSE(ledger.recording());
    } // the context goes here: its events with it, after the ledger has read them
    const auto records = ledger.records();
    REQUIRE(records.size() == before + 1);
    CHECK(records.back().kernel == "empty");
    CHECK(records.back().ms > 0);
}

TEST_CASE("a launch hook sees enter and exit with the kernel and geometry and nothing once unregistered") {
    KJIT_REQUIRE_DEVICE();
    const Context ctx(Device::get(0));
    const Module m = load_test_kernels(ctx);
    const Function produce = m.function("produce"), empty = m.function("empty");
    const int n = 4096;
    DeviceBuffer buf(n * 4);
    Stream s;
    const auto log = std::make_shared<LaunchLog>(), idle = std::make_shared<LaunchLog>();
    { LaunchHook gone(idle); } // registered and unregistered before any launch
    LaunchHook hook(log);
    produce.launch({{n / 128, 1, 1}, {128, 1, 1}, 256, s.handle()}, buf.ptr(), n, 7);
    empty.launch({{3, 2, 1}, {32, 2, 1}, 0, s.handle()});
    // Refused by kjit's checks: the driver never sees it, and neither do the observers.
    CHECK(launch_error([&] { empty.launch({{1, 1, 1}, {2048, 1, 1}, 0, s.handle()}); })
              .find("block of 2048 threads exceeds") != std::string::npos);
    hook.reset();
    empty.launch({{1, 1, 1}, {32, 1, 1}, 0, s.handle()});
    s.synchronize();
    CHECK(buf.to_vector<int>()[5] == 5 * 3 + 7);
    CHECK(idle->seen.empty());
    REQUIRE(log->seen.size() == 4);
    for (std::size_t i = 0; i < 4; ++i) {
        const auto& e = log->seen[i];
        INFO("row " << i << ": " << e.kernel << " grid=" << e.grid.str() << " block=" << e.block.str());
        CHECK(e.exit == (i % 2 == 1));
        CHECK(e.stream == s.handle());
        CHECK(e.kernel == (i < 2 ? "produce" : "empty"));
        CHECK(same(e.grid, i < 2 ? Dim3{n / 128, 1, 1} : Dim3{3, 2, 1}));
        CHECK(same(e.block, i < 2 ? Dim3{128, 1, 1} : Dim3{32, 2, 1}));
        CHECK(e.smem == (i < 2 ? 256u : 0u));
    }
}

TEST_CASE("KJIT_LEDGER records a process's launches through the hooks and writes them at exit") {
    KJIT_REQUIRE_DEVICE();
    test::TempDir dir;
    const auto file = dir.path() / "ledger.csv";
    const test::Run r =
        test::run_kjit("check", "KJIT_LEDGER=1 KJIT_LEDGER_TIMING=1 KJIT_LEDGER_FILE=" + file.string());
    INFO(r.out);
    REQUIRE(r.code == 0);
    const auto records = read_ledger_csv(file);
    REQUIRE_FALSE(records.empty());
    for (const auto& rec : records) {
        INFO(rec.kernel << " " << rec.variant);
        CHECK(rec.ms > 0); // resolved when kjit's context was released
        CHECK(rec.blocks_per_sm > 0);
    }
}

} // TEST_SUITE
