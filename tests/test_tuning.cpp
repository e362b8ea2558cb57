#include "tests/support.hpp"
#include "kernels/numeric.hpp"
#include "kernels/references.hpp"
#include "tuning/numeric.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace kjit;

TEST_SUITE("tuning") {

TEST_CASE("the input generator is a pure function of seed and index with pinned values") {
    CHECK(uniform(1, 0) == 0.53260350227355957f);
    CHECK(uniform(1, 1) == -0.74793803691864014f);
    CHECK(uniform(1, 1) != uniform(2, 1));
    std::vector<float> a(4096), b(4096);
    fill_uniform(a, 7);
    fill_uniform(b, 7);
    CHECK(a == b);
    double mean = 0;
    for (float v : a) {
        CHECK(v >= -1.0f);
        CHECK(v < 1.0f);
        mean += v;
    }
    CHECK(std::abs(mean / a.size()) < 0.05);
}

TEST_CASE("bf16 conversion rounds to nearest even and keeps NaN quiet") {
    CHECK(to_bf16(1.0f) == 0x3f80);
    CHECK(from_bf16(0x3f80) == 1.0f);
    // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even (1.0) wins; 1 + 3*2^-8 rounds up.
    CHECK(to_bf16(1.0f + 1.0f / 256) == 0x3f80);
    CHECK(to_bf16(1.0f + 3.0f / 256) == 0x3f82);
    CHECK(std::isnan(from_bf16(to_bf16(std::nanf("")))));
    CHECK(to_bf16(-2.0f) == 0xc000);
}

TEST_CASE("relative L2 error and the rms_norm reference") {
    const std::vector<double> want{3, 4}, same{3, 4}, off{3, 4.5};
    CHECK(relative_l2(same, want) == 0.0);
    CHECK(relative_l2(off, want) == doctest::Approx(0.1));
    const std::vector<double> nan{3, NAN};
    CHECK(std::isinf(relative_l2(nan, want)));
    // One row [3, 4], w = [1, 2]: mean square 12.5, y = x / sqrt(12.5) * w.
    std::vector<double> y(2);
    rms_norm_reference(want, std::vector<double>{1, 2}, y, 1, 2, 0.0);
    CHECK(y[0] == doctest::Approx(3 / std::sqrt(12.5)));
    CHECK(y[1] == doctest::Approx(8 / std::sqrt(12.5)));
}

} // TEST_SUITE
