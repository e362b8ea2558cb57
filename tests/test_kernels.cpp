// The shipped kernels against their float64 references on fresh random inputs (outputs
// poisoned first), and the bit-identity each one claims, checked as bytes.
#include "runtime/buffer.hpp"
#include "runtime/engine.hpp"
#include "runtime/stream.hpp"
#include "tests/support.hpp"
#include "tuning/numeric.hpp"
#include "tuning/reference.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <random>

using namespace kjit;

namespace {

std::uint64_t fresh_seed() {
    const std::uint64_t seed = std::random_device{}();
    MESSAGE("seed " << seed);
    return seed;
}

/// Values of a generator stream as the kernel will see them: rounded to bf16 when `bf16`.
std::vector<double> values(std::size_t n, std::uint64_t seed, bool bf16, double scale = 1.0) {
    std::vector<double> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        const float v = static_cast<float>(uniform(seed, i) * scale);
        out[i] = bf16 ? from_bf16(to_bf16(v)) : v;
    }
    return out;
}

DeviceBuffer upload(const std::vector<double>& v, bool bf16) {
    if (bf16) {
        std::vector<std::uint16_t> b(v.size());
        for (std::size_t i = 0; i < v.size(); ++i)
            b[i] = to_bf16(static_cast<float>(v[i]));
        return DeviceBuffer::from<std::uint16_t>(b);
    }
    std::vector<float> f(v.begin(), v.end());
    return DeviceBuffer::from<float>(f);
}

std::vector<double> download(const DeviceBuffer& d, bool bf16) {
    std::vector<double> out;
    if (bf16)
        for (auto b : d.to_vector<std::uint16_t>())
            out.push_back(from_bf16(b));
    else
        for (float f : d.to_vector<float>())
            out.push_back(f);
    return out;
}

DeviceBuffer poisoned(std::size_t bytes) {
    DeviceBuffer b(bytes);
    b.fill_bytes(0xff); // NaN in fp32 and bf16: an unwritten element fails every comparison
    return b;
}

/// test::GpuEngine that prepares one specialization and returns an entry point.
struct Fixture : test::GpuEngine {
    const Function& prepare(const std::string& source, const std::map<std::string, std::string>& defines,
                            const std::string& entry) {
        std::string name = source;
        for (const auto& [k, v] : defines)
            name += "/" + k + "=" + v;
        const std::vector<KernelSpec> specs = {{name, source, defines, ""}};
        const auto row = engine.prepare({}, specs)[0];
        if (row.error)
            std::rethrow_exception(row.error);
        return engine.function(name, entry);
    }
};

} // namespace

TEST_SUITE("kernels") {

TEST_CASE("the conv1d reference on a worked example") {
    // One row: state [1 2 3], x [4 5], w [1 10 100 1000], bias 0.5.
    const std::vector<double> x{4, 5}, w{1, 10, 100, 1000}, bias{0.5}, state{1, 2, 3};
    std::vector<double> y(2), out(3);
    conv1d_reference(x, w, bias, state, y, out, 1, 1, 2, false);
    CHECK(y[0] == 0.5 + 1 * 1 + 10 * 2 + 100 * 3 + 1000 * 4);
    CHECK(y[1] == 0.5 + 1 * 2 + 10 * 3 + 100 * 4 + 1000 * 5);
    CHECK(out == std::vector<double>{3, 4, 5});
    conv1d_reference(x, w, bias, state, y, out, 1, 1, 2, true);
    const double z = 0.5 + 2 + 30 + 400 + 5000;
    CHECK(y[1] == doctest::Approx(z / (1 + std::exp(-z))));
}

TEST_CASE("the delta-rule reference on a worked example") {
    // Zero state: u = beta v, S = k u^T, o = u (k . q) scale.
    const std::vector<double> q{1, 2}, k{3, 4}, v{5, 6, 7}, g{0.3}, beta{0.5};
    std::vector<double> s(6, 0.0), o(3);
    delta_rule_reference(q, k, v, g, beta, s, o, 1, 2, 3, 0.25);
    for (int j = 0; j < 3; ++j) {
        const double u = 0.5 * v[j];
        CHECK(s[0 * 3 + j] == doctest::Approx(3 * u));
        CHECK(s[1 * 3 + j] == doctest::Approx(4 * u));
        CHECK(o[j] == doctest::Approx(u * (3 * 1 + 4 * 2) * 0.25));
    }
}

} // TEST_SUITE

TEST_SUITE("gpu") {

TEST_CASE("conv1d matches the float64 reference in fp32 and bf16 on both load paths") {
    KJIT_REQUIRE_DEVICE();
    Fixture f;
    const std::uint64_t seed = fresh_seed();
    struct Shape {
        int b, c, t;
    };
    for (bool bf16 : {false, true})
        for (const Shape s : {Shape{2, 64, 1304}, Shape{3, 5, 37}, Shape{1, 8, 2}}) {
            INFO((bf16 ? "bf16 " : "f32 ") << s.b << "x" << s.c << "x" << s.t);
            const Function& fn = f.prepare("conv1d", {}, bf16 ? "conv1d_bf16" : "conv1d_f32");
            const std::size_t n = static_cast<std::size_t>(s.b) * s.c * s.t;
            const auto x = values(n, seed, bf16), w = values(s.c * 4, seed + 1, bf16, 0.5),
                       bias = values(s.c, seed + 2, bf16), st = values(s.b * s.c * 3, seed + 3, bf16);
            const std::size_t es = bf16 ? 2 : 4;
            DeviceBuffer dx = upload(x, bf16), dw = upload(w, bf16), db = upload(bias, bf16),
                         ds = upload(st, bf16), dy = poisoned(n * es), dso = poisoned(s.b * s.c * 3 * es);
            Stream stream;
            const long long tiles = (s.t + 7) / 8;
            const unsigned grid = static_cast<unsigned>((s.b * s.c * tiles + 255) / 256);
            fn.launch({{grid, 1, 1}, {256, 1, 1}, 0, stream.handle()}, dx.ptr(), dw.ptr(),
                      db.ptr(), ds.ptr(), dy.ptr(), dso.ptr(), s.b, s.c, s.t);
            stream.synchronize();
            std::vector<double> want(n), want_state(s.b * s.c * 3);
            conv1d_reference(x, w, bias, st, want, want_state, s.b, s.c, s.t, true);
            CHECK(relative_l2(download(dy, bf16), want) < (bf16 ? 1e-2 : 1e-6));
            CHECK(download(dso, bf16) == want_state); // the carry-out is copied, exactly
        }
}

TEST_CASE("delta-rule decode matches the reference and is bit-identical across BV") {
    KJIT_REQUIRE_DEVICE();
    Fixture f;
    const std::uint64_t seed = fresh_seed();
    struct Shape {
        int heads, dk, dv;
    };
    for (const Shape s : {Shape{32, 128, 128}, Shape{6, 64, 100}}) {
        INFO("heads " << s.heads << " dk " << s.dk << " dv " << s.dv);
        const auto q = values(s.heads * s.dk, seed, false), k = values(s.heads * s.dk, seed + 1, false, 0.2),
                   v = values(s.heads * s.dv, seed + 2, false), g = values(s.heads, seed + 3, false, 0.1),
                   beta = values(s.heads, seed + 4, false, 0.5),
                   state = values(static_cast<std::size_t>(s.heads) * s.dk * s.dv, seed + 5, false);
        const double scale = 1.0 / std::sqrt(static_cast<double>(s.dk));
        std::vector<double> want_state = state, want_o(s.heads * s.dv);
        delta_rule_reference(q, k, v, g, beta, want_state, want_o, s.heads, s.dk, s.dv, scale);
        std::vector<std::vector<float>> first;
        for (int bv : {16, 32, 64}) {
            const Function& fn =
                f.prepare("delta_rule", {{"DR_BV", std::to_string(bv)}}, "delta_rule_decode");
            DeviceBuffer dq = upload(q, false), dk = upload(k, false), dv = upload(v, false),
                         dg = upload(g, false), db = upload(beta, false), ds = upload(state, false),
                         dout = poisoned(s.heads * s.dv * 4);
            Stream stream;
            const LaunchConfig c{{static_cast<unsigned>((s.dv + bv - 1) / bv),
                                  static_cast<unsigned>(s.heads), 1},
                                 {static_cast<unsigned>(bv), 4, 1}, 0, stream.handle()};
            fn.launch(c, dq.ptr(), dk.ptr(), dv.ptr(), dg.ptr(), db.ptr(), ds.ptr(), dout.ptr(),
                      s.dk, s.dv, static_cast<float>(scale));
            stream.synchronize();
            CHECK(relative_l2(download(dout, false), want_o) < 1e-5);
            CHECK(relative_l2(download(ds, false), want_state) < 1e-6);
            std::vector<std::vector<float>> got = {dout.to_vector<float>(), ds.to_vector<float>()};
            if (first.empty())
                first = got;
            else
                CHECK_MESSAGE(got == first, "BV=" << bv << " differs from BV=16 in the bytes");
        }
    }
}

TEST_CASE("rms_norm is bit-identical across block widths and load paths and not across widths") {
    KJIT_REQUIRE_DEVICE();
    Fixture f;
    const std::uint64_t seed = fresh_seed();
    const int rows = 64, n = 7168;
    for (bool bf16 : {false, true}) {
        const std::size_t es = bf16 ? 2 : 4;
        const auto x = values(static_cast<std::size_t>(rows + 1) * n, seed, bf16),
                   w = values(n + 8, seed + 1, bf16);
        const auto run = [&](std::map<std::string, std::string> defines, bool misaligned) {
            const Function& fn = f.prepare("rms_norm", defines, bf16 ? "rms_norm_bf16" : "rms_norm_f32");
            // One element of padding in front: the same values, no longer 16-byte aligned, so
            // the element-by-element path runs.
            auto xs = x, ws = w;
            if (misaligned) {
                xs.insert(xs.begin(), 0.0);
                ws.insert(ws.begin(), 0.0);
            }
            DeviceBuffer dx = upload(xs, bf16), dw = upload(ws, bf16),
                         dy = poisoned((rows + 2) * n * es);
            const CUdeviceptr off = misaligned ? es : 0;
            Stream stream;
            fn.launch({{rows, 1, 1}, {static_cast<unsigned>(std::stoi(defines["RMS_BLOCK"])), 1, 1}, 0,
                       stream.handle()},
                      dx.ptr() + off, dw.ptr() + off, dy.ptr() + off, rows, n, 1e-6f);
            stream.synchronize();
            std::vector<unsigned char> bytes((rows + 2) * n * es);
            dy.download(bytes.data(), bytes.size());
            return std::vector<unsigned char>(bytes.begin() + off, bytes.begin() + off + rows * n * es);
        };
        const auto base = run({{"RMS_BLOCK", "256"}}, false);
        CHECK(run({{"RMS_BLOCK", "64"}}, false) == base);
        CHECK(run({{"RMS_BLOCK", "1024"}}, false) == base);
        CHECK(run({{"RMS_BLOCK", "256"}}, true) == base);
        // A narrower reduction regroups the sum. In fp32 that moves bits; bf16 inputs square
        // to 16 significant bits, and their sums are often exact in any grouping.
        if (!bf16)
            CHECK(run({{"RMS_BLOCK", "128"}, {"RMS_WIDTH", "512"}}, false) != base);
    }
}

} // TEST_SUITE
