#include "tuning/selfcheck.hpp"

#include "runtime/buffer.hpp"
#include "runtime/stream.hpp"
#include "tuning/kernel_cases.hpp"
#include "tuning/numeric.hpp"

namespace kjit {

std::vector<RmsNormCase> default_rms_norm_cases() {
    std::vector<RmsNormCase> cases;
    for (bool bf16 : {false, true}) {
        cases.push_back({bf16, 4096, 7168, 256});
        cases.push_back({bf16, 1, 7168, 1024});
        cases.push_back({bf16, 333, 1000, 128});
    }
    return cases;
}

KernelSpec rms_norm_spec(const RmsNormCase& c) {
    const std::string block = std::to_string(c.block);
    return {"rms_norm/RMS_BLOCK=" + block, "rms_norm", {{"RMS_BLOCK", block}}, ""};
}

CheckResult check_rms_norm(Engine& engine, const RmsNormCase& c, std::uint64_t seed) {
    const KernelSpec spec = rms_norm_spec(c);
    const Function& fn = engine.function(spec.name, c.entry());

    const std::size_t count = static_cast<std::size_t>(c.rows) * c.n;
    std::vector<float> x(count), w(c.n);
    fill_uniform(x, seed);
    fill_uniform(w, seed + 1);
    // The reference sees exactly the values the kernel reads (bf16-rounded where bf16).
    std::vector<double> xd(count), wd(c.n), want(count), got(count);
    DeviceBuffer dx, dw, dy;
    if (c.bf16) {
        std::vector<std::uint16_t> xb(count), wb(c.n);
        for (std::size_t i = 0; i < count; ++i)
            xd[i] = from_bf16(xb[i] = to_bf16(x[i]));
        for (int i = 0; i < c.n; ++i)
            wd[i] = from_bf16(wb[i] = to_bf16(w[i]));
        dx = DeviceBuffer::from<std::uint16_t>(xb);
        dw = DeviceBuffer::from<std::uint16_t>(wb);
        dy = DeviceBuffer(count * sizeof(std::uint16_t));
    } else {
        xd.assign(x.begin(), x.end());
        wd.assign(w.begin(), w.end());
        dx = DeviceBuffer::from<float>(x);
        dw = DeviceBuffer::from<float>(w);
        dy = DeviceBuffer(count * sizeof(float));
    }
    dy.fill_bytes(0xff); // NaN in both types: an unwritten element fails the comparison

    Stream stream;
    const LaunchConfig config =
        launch_rms_norm(fn, static_cast<unsigned>(c.block), dx.ptr(), dw.ptr(), dy.ptr(), c.rows,
                        c.n, c.eps, stream.handle());
    stream.synchronize();

    if (c.bf16) {
        const auto yb = dy.to_vector<std::uint16_t>();
        for (std::size_t i = 0; i < count; ++i)
            got[i] = from_bf16(yb[i]);
    } else {
        const auto yf = dy.to_vector<float>();
        got.assign(yf.begin(), yf.end());
    }
    rms_norm_reference(xd, wd, want, c.rows, c.n, c.eps);

    CheckResult r;
    r.kernel = "rms_norm";
    r.entry = c.entry();
    r.shape = "rows=" + std::to_string(c.rows) + " n=" + std::to_string(c.n);
    r.defines = "RMS_BLOCK=" + std::to_string(c.block);
    r.grid = config.grid.str();
    r.block = config.block.str();
    r.source_hash = engine.sources().current()->kernel("rms_norm").hash.hex().substr(0, 12);
    r.error = relative_l2(got, want);
    r.tolerance = c.tolerance();
    return r;
}

} // namespace kjit
