// Launch plans (runtime/plan.hpp): a chain recorded once and replayed as a CUDA graph, with and
// without programmatic edges, its arguments and geometry updated in place; every output compared
// bit for bit with the same launches issued one by one.
#include "runtime/buffer.hpp"
#include "runtime/context.hpp"
#include "runtime/plan.hpp"
#include "runtime/stream.hpp"
#include "tests/launch_kernels.hpp"
#include "tests/support.hpp"

#include <doctest/doctest.h>

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
} // namespace

TEST_SUITE("gpu") {
TEST_CASE("a plan replays its chain bit for bit as the launches one by one with and without PDL") {
    KJIT_REQUIRE_DEVICE();
    const Context ctx(Device::get(0));
    const Module m = load_test_kernels(ctx);
    const Function produce = m.function("produce"), consume = m.function("consume");
    Stream s;
    for (const bool pdl : {false, true}) {
        CAPTURE(pdl);
        DeviceBuffer a(kN * 4), b(kN * 4), pa(kN * 4), pb(kN * 4);
        for (DeviceBuffer* x : {&a, &b, &pa, &pb})
            x->fill_bytes(0);
        chain(produce, consume, a, b, 64, pdl, nullptr, s.handle());
        Plan plan;
        chain(produce, consume, pa, pb, 64, pdl, &plan, nullptr);
        CHECK(plan.size() == 64);
        plan.record(s.handle());
        REQUIRE(plan.nodes().size() == 64);
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
    const CUgraphNode first = plan.nodes()[0];
    plan.set_args(0, a.ptr(), kN, 9);
    plan.set_args(1, a.ptr(), c.ptr(), kN);
    plan.launch(s.handle());
    s.synchronize();
    CHECK(plan.nodes()[0] == first);
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
    // Other argument types: refused, naming the step.
    CHECK(message([&] { plan.set_args(0, a.ptr(), kN); }).find("step 0 of 2 (produce)") !=
          std::string::npos);
    // PDL is part of the recording.
    CHECK(message([&] { plan.set_config(1, geometry(false)); }).find("record again") !=
          std::string::npos);
    // A block over the kernel's limit.
    LaunchConfig wide = geometry(true);
    wide.block.x = 4096;
    CHECK(message([&] { plan.set_config(1, wide); }).find("does not fit") != std::string::npos);
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
} // TEST_SUITE
