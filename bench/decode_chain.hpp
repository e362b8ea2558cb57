#pragma once
// A batch-1 decode step built from kjit's kernels, the chain a launch plan is for: per layer
// rms_norm (one row) -> conv1d_update (one token, its rolling state in place) -> the gated
// delta-rule decode step (its state in place) -> rms_norm, the layer's output the next layer's
// input; `kernels` / 4 layers. hidden = heads x head_dim is the row, the channels and the
// heads' q = k = v. The kernels are compiled with PDL=1 (pdl_chain_step() waits for its
// predecessor): launched without programmatic edges the wait is a no-op, so one build serves
// every arm. Shared by the plan tests (tests/test_plan.cpp) and bench_plan.
#include "runtime/buffer.hpp"
#include "runtime/engine.hpp"
#include "runtime/plan.hpp"

#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace kjit::bench {

class DecodeChain {
  public:
    static constexpr int kHeads = 32, kHeadDim = 128, kHidden = kHeads * kHeadDim;

    /// `kernels`: a multiple of 4. Compiles (or reads from the cache) the chain's kernels with
    /// the configurations the tuned table held for these shapes on the H200 when the chain was
    /// first measured (RESULTS, 2026-12-01 evening; the delta step's entry has moved since), so
    /// that its figures stay comparable. Any GPU runs them.
    DecodeChain(const Context& ctx, int kernels) : layers_(kernels / 4) {
        if (kernels <= 0 || kernels % 4 != 0)
            throw std::invalid_argument("a decode chain has 4 kernels per layer");
        engine_ = std::make_unique<Engine>(&ctx);
        const std::vector<KernelSpec> specs = {
            {"norm",
             "rms_norm",
             {{"RMS_BLOCK", "1024"}, {"RMS_CACHE", "2"}, {"RMS_W_EARLY", "1"}, {"PDL", "1"}}},
            {"conv", "conv1d", {{"CONV_BLOCK", "1024"}, {"CONV_SILU", "1"}, {"PDL", "1"}}},
            {"delta",
             "delta_rule",
             {{"DR_BV", "8"}, {"DR_KSPLIT", "8"}, {"DR_MAX_DK", "128"}, {"PDL", "1"}}}};
        for (const PrepareRow& row : engine_->prepare({}, specs))
            if (row.error)
                std::rethrow_exception(row.error);
        norm_ = &engine_->function("norm", "rms_norm_f32");
        conv_ = &engine_->function("conv", "conv1d_update_f32");
        delta_ = &engine_->function("delta", "delta_rule_decode");

        const std::size_t n = kHidden, state = std::size_t(kHeads) * kHeadDim * kHeadDim;
        std::uint32_t seed = 12345;
        const auto uniform = [&](float lo, float hi) {
            seed = seed * 1664525u + 1013904223u;
            return lo + (hi - lo) * static_cast<float>(seed >> 8) / 16777216.0f;
        };
        const auto values = [&](std::size_t count, float lo, float hi) {
            std::vector<float> v(count);
            for (float& x : v)
                x = uniform(lo, hi);
            return v;
        };
        init_.push_back(values(n, -1, 1));                // 0: the step's input token
        init_.push_back(values(n, 0.9f, 1.1f));           // 1: the norm's weight
        init_.push_back(values(kHeads, -0.2f, -0.05f));   // 2: g (log decay)
        init_.push_back(values(kHeads, 0.002f, 0.01f));   // 3: beta
        for (int l = 0; l < layers_; ++l) {
            init_.push_back(values(n * 4, -0.5f, 0.5f));  // conv weight [c, 4]
            init_.push_back(values(n, -0.1f, 0.1f));      // conv bias
            init_.push_back(values(n * 3, -0.5f, 0.5f));  // conv state [c, 3]
            init_.push_back(values(state, -0.1f, 0.1f));  // delta state [h, dk, dv]
        }
        for (const auto& v : init_)
            buffers_.emplace_back(v.size() * sizeof(float));
        for (int i = 0; i < 5; ++i) // t1, t2, t3 and the two layer outputs
            buffers_.emplace_back(n * sizeof(float));
        reset();
    }

    /// Every buffer back to its first values (synchronous).
    void reset() {
        for (std::size_t i = 0; i < init_.size(); ++i)
            buffers_[i].upload(init_[i].data(), init_[i].size() * sizeof(float));
        for (std::size_t i = init_.size(); i < buffers_.size(); ++i)
            buffers_[i].fill_bytes(0);
    }

    [[nodiscard]] int kernels() const { return layers_ * 4; }

    /// Issues the chain's launches on `stream` (pdl: each after the first a programmatic
    /// launch), or adds them to `plan` when not null; `only` >= 0 issues that kernel alone.
    void issue(bool pdl, CUstream stream, Plan* plan, int only = -1) const {
        issue_or_set(pdl, stream, plan, only, false);
    }
    /// Sets every step's arguments of `plan` (recorded by issue()) again: a decode engine's
    /// per-node update, each kernel node written.
    void set_args(Plan& plan) const { issue_or_set(false, nullptr, &plan, -1, true); }

  private:
    void issue_or_set(bool pdl, CUstream stream, Plan* plan, int only, bool set) const {
        const float eps = 1e-6f, scale = 1.0f / std::sqrt(float(kHeadDim));
        const int n = kHidden, rows = 1, batch = 1;
        int k = 0;
        const auto step = [&](const Function& f, Dim3 grid, Dim3 block, const auto&... args) {
            const int index = k++;
            if (only >= 0 && index != only)
                return;
            LaunchConfig c{grid, block, 0, stream};
            c.pdl = pdl && index > 0;
            if (set)
                plan->set_args(std::size_t(index), args...);
            else if (plan)
                plan->add(f, c, args...);
            else
                f.launch(c, args...);
        };
        for (int l = 0; l < layers_; ++l) {
            const CUdeviceptr in = l == 0 ? ptr(0) : ptr(out(l - 1));
            const CUdeviceptr t1 = ptr(temp(0)), t2 = ptr(temp(1)), t3 = ptr(temp(2));
            step(*norm_, {1, 1, 1}, {1024, 1, 1}, in, ptr(1), t1, rows, n, eps);
            step(*conv_, {(n + 1023) / 1024, 1, 1}, {1024, 1, 1}, t1, ptr(layer(l, 0)),
                 ptr(layer(l, 1)), ptr(layer(l, 2)), t2, batch, n);
            step(*delta_, {kHeadDim / 8, kHeads, 1}, {8, 8, 1}, t2, t2, t2, ptr(2), ptr(3),
                 ptr(layer(l, 3)), t3, kHeadDim, kHeadDim, scale);
            step(*norm_, {1, 1, 1}, {1024, 1, 1}, t3, ptr(1), ptr(out(l)), rows, n, eps);
        }
    }

  public:
    /// What a step changes, in bytes: every state and the last layer's output.
    [[nodiscard]] std::vector<std::vector<float>> results() const {
        std::vector<std::vector<float>> r;
        for (int l = 0; l < layers_; ++l) {
            r.push_back(buffers_[layer(l, 2)].to_vector<float>());
            r.push_back(buffers_[layer(l, 3)].to_vector<float>());
        }
        r.push_back(buffers_[out(layers_ - 1)].to_vector<float>());
        return r;
    }

  private:
    [[nodiscard]] CUdeviceptr ptr(std::size_t i) const { return buffers_[i].ptr(); }
    [[nodiscard]] static std::size_t layer(int l, int i) { return 4 + std::size_t(l) * 4 + i; }
    [[nodiscard]] std::size_t temp(int i) const { return init_.size() + i; }
    [[nodiscard]] std::size_t out(int l) const { return init_.size() + 3 + l % 2; }

    int layers_;
    std::unique_ptr<Engine> engine_;
    const Function *norm_ = nullptr, *conv_ = nullptr, *delta_ = nullptr;
    std::vector<std::vector<float>> init_;
    std::vector<DeviceBuffer> buffers_;
};

} // namespace kjit::bench
