// Launch plans (runtime/plan.hpp): a chain recorded once and replayed as a CUDA graph, with and
// without programmatic edges, its arguments and geometry updated in place; every output compared
// bit for bit with the same launches issued one by one.
#include "bench/decode_chain.hpp"
#include "runtime/buffer.hpp"
#include "runtime/context.hpp"
#include "runtime/hooks.hpp"
#include "runtime/ledger.hpp"
#include "runtime/plan.hpp"
#include "runtime/stream.hpp"
#include "tuning/bench.hpp"
#include "tests/launch_kernels.hpp"
#include "tests/support.hpp"

#include "tests/doctest.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <vector>

using namespace kjit;
using kjit::test::load_test_kernels;

namespace {
constexpr int kN = 4096;

LaunchConfig geometry(bool pdl) {
    LaunchConfig c{{kN / 128, 1, 1}, {128, 1, 1}, 0, nullptr};
    c.pdl = pdl;
    return c;
}

/// `steps` launches alternating produce(a, salt) and consume(a -> b), then b -> a, ...
/// issued one by one on `s`, or added to `plan` when there is one.
void chain(const Function& produce, const Function& consume, DeviceBuffer& a, DeviceBuffer& b,
           int steps, bool pdl, Plan* plan, CUstream s) {
    for (int i = 0; i < steps; ++i) {
        LaunchConfig c = geometry(pdl);
        c.stream = s;
        DeviceBuffer& from = (i / 2) % 2 ? b : a;
        DeviceBuffer& to = (i / 2) % 2 ? a : b;
        if (i % 2 == 0) {
            if (plan)
                plan->add(produce, c, from.ptr(), kN, i);
            else
                produce.launch(c, from.ptr(), kN, i);
        } else if (plan) {
            plan->add(consume, c, from.ptr(), to.ptr(), kN);
        } else {
            consume.launch(c, from.ptr(), to.ptr(), kN);
        }
    }
}
/// How many edges of the plan's recorded graph are programmatic (a PDL step's).
std::size_t programmatic_edges(const Plan& plan) {
    std::size_t n = 0;
    check(driver().cuGraphGetEdges(plan.graph().handle(), nullptr, nullptr, nullptr, &n),
          "cuGraphGetEdges");
    std::vector<CUgraphNode> from(n), to(n);
    std::vector<CUgraphEdgeData> data(n);
    check(driver().cuGraphGetEdges(plan.graph().handle(), from.data(), to.data(), data.data(), &n),
          "cuGraphGetEdges");
    return static_cast<std::size_t>(
        std::count_if(data.begin(), data.end(), [](const CUgraphEdgeData& d) {
            return d.type == CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
        }));
}
} // namespace

TEST_SUITE("gpu") {
TEST_CASE("a plan replays its chain bit for bit as the launches one by one with and without PDL") {
    KJIT_REQUIRE_DEVICE();
    const Context ctx(Device::get(0));
    const Module m = load_test_kernels(ctx);
    const Function produce = m.function("produce"), consume = m.function("consume");
    Stream s;
    // The launches one by one without PDL: what every form must give.
    DeviceBuffer a(kN * 4), b(kN * 4);
    a.fill_bytes(0);
    b.fill_bytes(0);
    chain(produce, consume, a, b, 64, false, nullptr, s.handle());
    for (const bool pdl : {false, true}) {
        CAPTURE(pdl);
        DeviceBuffer pa(kN * 4), pb(kN * 4);
        pa.fill_bytes(0);
        pb.fill_bytes(0);
        Plan plan;
        chain(produce, consume, pa, pb, 64, pdl, &plan, nullptr);
        CHECK(plan.size() == 64);
        plan.record(s.handle());
        REQUIRE(plan.nodes().size() == 64);
        CHECK(programmatic_edges(plan) == (pdl ? 63u : 0u)); // step 0 has no predecessor
        s.synchronize();
        CHECK(pa.to_vector<int>() == std::vector<int>(kN, 0)); // recorded, not run
        plan.launch(s.handle());
        s.synchronize();
        CHECK(pa.to_vector<int>() == a.to_vector<int>());
        CHECK(pb.to_vector<int>() == b.to_vector<int>());
        CHECK(a.to_vector<int>()[7] != 0);
    }
}

TEST_CASE("a plan's arguments and geometry change in place and its mistakes name the step") {
    KJIT_REQUIRE_DEVICE();
    const Context ctx(Device::get(0));
    const Module m = load_test_kernels(ctx);
    const Function produce = m.function("produce"), consume = m.function("consume");
    Stream s;
    DeviceBuffer a(kN * 4), b(kN * 4), c(kN * 4);
    a.fill_bytes(0);
    b.fill_bytes(0);
    c.fill_bytes(0);
    Plan plan;
    plan.add(produce, geometry(false), a.ptr(), kN, 5);
    plan.add(consume, geometry(true), a.ptr(), b.ptr(), kN);
    plan.record(s.handle());
    plan.launch(s.handle());
    s.synchronize();
    CHECK(b.to_vector<int>()[10] == 10 * 3 + 5 + 1);

    // The salt and the consumer's output buffer move; the graph is not recorded again.
    plan.set_args(0, a.ptr(), kN, 9);
    plan.set_args(1, a.ptr(), c.ptr(), kN);
    plan.launch(s.handle());
    s.synchronize();
    CHECK(c.to_vector<int>()[10] == 10 * 3 + 9 + 1);
    CHECK(b.to_vector<int>()[10] == 10 * 3 + 5 + 1); // untouched by the second replay

    // Half the grid: only the first half of the outputs is written.
    c.fill_bytes(0);
    LaunchConfig half = geometry(true);
    half.grid.x /= 2;
    plan.set_config(1, half);
    plan.launch(s.handle());
    s.synchronize();
    const std::vector<int> out = c.to_vector<int>();
    CHECK(out[10] == 10 * 3 + 9 + 1);
    CHECK(out[kN - 1] == 0);

    const auto message = [](const auto& f) {
        try {
            f();
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    // Other argument types: refused, naming the step, and the step keeps its arguments.
    CHECK(message([&] { plan.set_args(0, a.ptr(), kN); }).find("step 0 of 2 (produce)") !=
          std::string::npos);
    c.fill_bytes(0);
    plan.launch(s.handle());
    s.synchronize();
    CHECK(c.to_vector<int>()[10] == 10 * 3 + 9 + 1);
    // More dynamic shared memory than recorded needs a new recording.
    LaunchConfig more = half;
    more.smem_bytes = 1024;
    CHECK(message([&] { plan.set_config(1, more); }).find("needs a new recording") !=
          std::string::npos);
    // PDL is part of the recording.
    CHECK(message([&] { plan.set_config(1, geometry(false)); }).find("record again") !=
          std::string::npos);
    // A block over the kernel's limit.
    LaunchConfig wide = geometry(true);
    wide.block.x = 4096;
    CHECK(message([&] { plan.set_config(1, wide); }).find("exceeds the kernel's limit") !=
          std::string::npos);
    CHECK_THROWS_AS(plan.set_args(7, a.ptr(), kN, 1), ConfigError);

    // A step whose arguments do not fit the kernel: the recording fails naming it, and the
    // stream is usable after.
    Plan bad;
    bad.add(produce, geometry(false), a.ptr(), kN, 1);
    bad.add(consume, geometry(false), a.ptr(), kN);
    const std::string why = message([&] { bad.record(s.handle()); });
    CHECK(why.find("step 1 of 2 (consume)") != std::string::npos);
    CHECK(why.find("parameters") != std::string::npos);
    CHECK_FALSE(bad.recorded());
    CHECK_THROWS_AS(bad.launch(s.handle()), ConfigError);
    plan.launch(s.handle());
    s.synchronize();
}

TEST_CASE("the decode chain of kjit's kernels replays bit for bit as its launches one by one") {
    KJIT_REQUIRE_DEVICE();
    const Context ctx(Device::get(0));
    Stream s;
    for (const int kernels : {8, 16, 32, 64}) {
        bench::DecodeChain chain(ctx, kernels);
        CAPTURE(kernels);
        // Two decode steps launched one by one without PDL (states carry over between them):
        // what the plans and the PDL launches must give, bit for bit.
        chain.reset();
        for (int step = 0; step < 2; ++step)
            chain.issue(false, s.handle(), nullptr);
        s.synchronize();
        const auto one_by_one = chain.results();
        const auto same = [&](const std::vector<std::vector<float>>& got) {
            REQUIRE(got.size() == one_by_one.size());
            for (std::size_t i = 0; i < got.size(); ++i) {
                CAPTURE(i);
                REQUIRE(got[i].size() == one_by_one[i].size());
                CHECK(std::memcmp(got[i].data(), one_by_one[i].data(),
                                  got[i].size() * sizeof(float)) == 0);
            }
        };
        chain.reset();
        for (int step = 0; step < 2; ++step)
            chain.issue(true, s.handle(), nullptr);
        s.synchronize();
        same(chain.results());
        for (const bool pdl : {false, true}) {
            CAPTURE(pdl);
            chain.reset();
            Plan plan;
            chain.issue(pdl, nullptr, &plan);
            REQUIRE(plan.size() == std::size_t(kernels));
            plan.record(s.handle());
            CHECK(programmatic_edges(plan) == (pdl ? std::size_t(kernels - 1) : 0u));
            for (int step = 0; step < 2; ++step)
                plan.launch(s.handle());
            s.synchronize();
            const auto replayed = chain.results();
            same(replayed);
            // The step computed something: a finite output that is not all zero.
            bool finite = true, nonzero = false;
            for (const float v : replayed.back()) {
                finite = finite && std::isfinite(v);
                nonzero = nonzero || v != 0;
            }
            CHECK(finite);
            CHECK(nonzero);
        }
    }
}

namespace {
/// Counts what the hooks report.
struct Counter final : LaunchObserver {
    std::atomic<int> enters{0}, exits{0};
    void launch_enter(const Function&, const LaunchConfig&) override { ++enters; }
    void launch_exit(const Function&, const LaunchConfig&) override { ++exits; }
};
/// Counts plan replays and leaves the steps to the default (each a launch_enter/exit).
struct PlanCounter final : LaunchObserver {
    std::atomic<int> enters{0}, plans{0};
    CUstream stream = nullptr;
    void launch_enter(const Function&, const LaunchConfig& c) override {
        ++enters;
        stream = c.stream;
    }
    void launch_exit(const Function&, const LaunchConfig&) override {}
    void plan_enter(std::span<const PlannedLaunch> steps) override {
        ++plans;
        LaunchObserver::plan_enter(steps);
    }
};
} // namespace

TEST_CASE("launch hooks and the ledger see every step of a plan at each replay and none at its "
          "recording") {
    KJIT_REQUIRE_DEVICE();
    const Context ctx(Device::get(0));
    const Module m = load_test_kernels(ctx);
    const Function produce = m.function("produce"), consume = m.function("consume");
    Stream s;
    DeviceBuffer a(kN * 4), b(kN * 4);
    Plan plan;
    chain(produce, consume, a, b, 6, true, &plan, nullptr);
    auto counter = std::make_shared<Counter>();
    auto plans = std::make_shared<PlanCounter>();
    LaunchHook hook(counter), plan_hook(plans);
    plan.record(s.handle());
    CHECK(counter->enters == 0); // recorded, not launched
    plan.launch(s.handle());
    plan.launch(s.handle());
    s.synchronize();
    CHECK(counter->enters == 12);
    CHECK(counter->exits == 12);
    CHECK(plans->plans == 2);
    CHECK(plans->enters == 12);
    CHECK(plans->stream == s.handle()); // the replay's stream, not the one the steps were added with

    // The ledger records each step, untimed (a graph runs them as one), and times a launch.
    Ledger& ledger = Ledger::instance();
    const std::size_t before = ledger.records().size();
    ledger.enable(true);
    plan.launch(s.handle());
    produce.launch(geometry(false) /* legacy stream */, a.ptr(), kN, 1);
    s.synchronize();
    ledger.disable();
    const auto records = ledger.records();
    REQUIRE(records.size() == before + 7);
    for (std::size_t i = before; i < before + 6; ++i) {
        CHECK(records[i].kernel == (i % 2 == before % 2 ? "produce" : "consume"));
        CHECK(records[i].ms == -1);
        CHECK(records[i].grid.x == kN / 128);
    }
    CHECK(records.back().kernel == "produce");
    CHECK(records.back().ms >= 0);
}

TEST_CASE("a plan's step block changes what every replay reads with one copy") {
    KJIT_REQUIRE_DEVICE();
    const Context ctx(Device::get(0));
    const Module m = load_test_kernels(ctx);
    const Function pick = m.function("pick");
    Stream s;
    const std::vector<int> av(kN, 100), bv(kN, 200);
    const DeviceBuffer a = DeviceBuffer::from<int>(av), b = DeviceBuffer::from<int>(bv);
    DeviceBuffer out(kN * 4);
    Plan plan;
    const CUdeviceptr block = plan.step_block(ctx, 2 * sizeof(int));
    CHECK(plan.step_block(ctx, 2 * sizeof(int)) == block); // the same block, once allocated
    CHECK_THROWS_AS(plan.step_block(ctx, 16), ConfigError);
    CHECK_THROWS_WITH_AS(Plan().step_block(ctx, 12), doctest::Contains("a multiple of 8 bytes"),
                         ConfigError);
    plan.add(pick, geometry(false), block, a.ptr(), b.ptr(), out.ptr(), kN);
    plan.record(s.handle());
    CHECK(plan.nodes().size() == 1); // the block's writer is the plan's, not a step
    for (const auto& [which, add] : std::vector<std::array<int, 2>>{{0, 1}, {1, 5}, {0, 7}}) {
        out.fill_bytes(0);
        const std::array<int, 2> host{which, add};
        plan.launch(s.handle(), std::as_bytes(std::span(host)));
        s.synchronize();
        CHECK(out.to_vector<int>()[kN - 1] == (which ? 200 : 100) + add);
    }
    // Replays queued back to back each read their own block (a node update leaves the
    // replays already queued as they were): the accumulated output is the sum of all three.
    out.fill_bytes(0);
    for (int i = 0; i < 3; ++i) {
        const std::array<int, 2> host{i % 2, i};
        plan.launch(s.handle(), std::as_bytes(std::span(host)));
    }
    s.synchronize();
    CHECK(out.to_vector<int>()[3] == (100 + 0) + (200 + 1) + (100 + 2));
    const std::array<int, 3> wrong{};
    CHECK_THROWS_AS(plan.launch(s.handle(), std::as_bytes(std::span(wrong))), ConfigError);
    Plan none;
    none.add(pick, geometry(false), block, a.ptr(), b.ptr(), out.ptr(), kN);
    none.record(s.handle());
    CHECK_THROWS_WITH_AS(none.launch(s.handle(), std::as_bytes(std::span(wrong))),
                         doctest::Contains("no step block"), ConfigError);
    CHECK_THROWS_WITH_AS(none.launch(s.handle(), std::span<const std::byte>()),
                         doctest::Contains("no step block"), ConfigError);

    // The largest block: every word written.
    Plan large;
    CHECK_THROWS_AS(Plan().step_block(ctx, Plan::kMaxStepBlock + 8), ConfigError);
    const CUdeviceptr big = large.step_block(ctx, Plan::kMaxStepBlock);
    large.add(pick, geometry(false), big, a.ptr(), b.ptr(), out.ptr(), kN);
    large.record(s.handle());
    std::vector<int> words(Plan::kMaxStepBlock / sizeof(int));
    for (std::size_t i = 0; i < words.size(); ++i)
        words[i] = static_cast<int>(i) * 7;
    words[0] = 1;
    out.fill_bytes(0);
    large.launch(s.handle(), std::as_bytes(std::span(words)));
    s.synchronize();
    CHECK(out.to_vector<int>()[0] == 200 + 7);
    std::vector<int> back(words.size());
    check(driver().cuMemcpyDtoH(back.data(), big, Plan::kMaxStepBlock), "cuMemcpyDtoH");
    CHECK(back == words);
}

TEST_CASE("kjit's bench times a plan's replays as it times launches") {
    KJIT_REQUIRE_DEVICE();
    const Context ctx(Device::get(0));
    bench::DecodeChain chain(ctx, 8);
    Plan plan;
    chain.issue(true, nullptr, &plan);
    BenchOptions options;
    options.warmup = 2;
    options.reps = 7;
    options.flush_l2 = true; // a decode step's weights and states cold, as between steps
    Bench b(ctx.device(), options);
    plan.record(b.stream());
    chain.reset();
    const Stats replay = b.run([&](CUstream s) { plan.launch(s); });
    CHECK(replay.samples.size() == 7);
    CHECK(replay.min > 0);
    // Each warm-up and repetition was one decode step: the states are those of 9 steps.
    check(driver().cuStreamSynchronize(b.stream()), "cuStreamSynchronize");
    const auto benched = chain.results();
    chain.reset();
    Stream s;
    for (int i = 0; i < 9; ++i)
        chain.issue(false, s.handle(), nullptr);
    s.synchronize();
    const auto stepped = chain.results();
    REQUIRE(benched.size() == stepped.size());
    for (std::size_t i = 0; i < benched.size(); ++i)
        CHECK(std::memcmp(benched[i].data(), stepped[i].data(),
                          benched[i].size() * sizeof(float)) == 0);
    // The same launches one by one, on the bench's stream.
    const Stats stream = b.run([&](CUstream s) { chain.issue(true, s, nullptr); });
    CHECK(stream.samples.size() == 7);
    CHECK(stream.min > 0);
    MESSAGE("8-kernel decode step, cold L2: plan " << replay.median * 1000 << " us, stream "
                                                   << stream.median * 1000 << " us");
}
} // TEST_SUITE
