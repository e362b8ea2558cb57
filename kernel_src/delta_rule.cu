// Gated delta-rule decode step: one token, per batch b and head h, with state S [DK x DV]:
//   S <- S * exp(g);   u = beta * (v - S^T k);   S <- S + k u^T;   o = S^T (q * scale)
// Layouts: q, k [B, H, DK]; v, o [B, H, DV]; g, beta [B, H]; S [B, H, DK, DV] fp32, updated in
// place. All fp32.
//
// Grid: (cdiv(DV, DR_BV), B * H), blocks of DR_BV x DR_KSPLIT threads. Thread (x, y) owns
// column j = blockIdx.x * DR_BV + x and rows [y R, (y + 1) R), R = DK / DR_KSPLIT, in registers.
// Each column is computed alone, its DR_KSPLIT partial dot products summed in one fixed order:
// the bits depend on DR_KSPLIT, never on DR_BV (the value tile is free to tune).
#include "pdl.cuh"

#ifndef DR_BV
#define DR_BV 32 // columns per block (the value tile)
#endif
#ifndef DR_KSPLIT
#define DR_KSPLIT 4 // threads per column: part of the numerics
#endif
#ifndef DR_MAX_DK
#define DR_MAX_DK 128 // production cap on DK: the per-thread register array holds DK / DR_KSPLIT
#endif

extern "C" __global__ void __launch_bounds__(DR_BV * DR_KSPLIT)
    delta_rule_decode(const float* __restrict__ q, const float* __restrict__ k,
                      const float* __restrict__ v, const float* __restrict__ g,
                      const float* __restrict__ beta, float* __restrict__ state,
                      float* __restrict__ o, int dk, int dv, float scale) {
    pdl_chain_step();
    constexpr int kRows = DR_MAX_DK / DR_KSPLIT;
    __shared__ float partial[DR_KSPLIT][DR_BV];
    const int bh = blockIdx.y;
    const int j = blockIdx.x * DR_BV + threadIdx.x;
    const bool live = j < dv;
    const int rows = dk / DR_KSPLIT;
    const int r0 = threadIdx.y * rows;
    const float* kb = k + static_cast<long long>(bh) * dk;
    const float* qb = q + static_cast<long long>(bh) * dk;
    float* sb = state + static_cast<long long>(bh) * dk * dv;
    const float decay = expf(g[bh]);

    float s[kRows];
    float dot = 0.0f;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
        if (r < rows && live) {
            s[r] = __fmul_rn(sb[static_cast<long long>(r0 + r) * dv + j], decay);
            dot = __fmaf_rn(s[r], kb[r0 + r], dot);
        }
    }
    partial[threadIdx.y][threadIdx.x] = dot;
    __syncthreads();
    float sk = 0.0f;
#pragma unroll
    for (int y = 0; y < DR_KSPLIT; ++y)
        sk = __fadd_rn(sk, partial[y][threadIdx.x]);
    const float u = live ? __fmul_rn(beta[bh], __fsub_rn(v[static_cast<long long>(bh) * dv + j], sk))
                         : 0.0f;
    __syncthreads(); // partial is reused below

    float out = 0.0f;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
        if (r < rows && live) {
            s[r] = __fmaf_rn(kb[r0 + r], u, s[r]);
            sb[static_cast<long long>(r0 + r) * dv + j] = s[r];
            out = __fmaf_rn(s[r], __fmul_rn(qb[r0 + r], scale), out);
        }
    }
    partial[threadIdx.y][threadIdx.x] = out;
    __syncthreads();
    if (threadIdx.y == 0 && live) {
        float ov = 0.0f;
#pragma unroll
        for (int y = 0; y < DR_KSPLIT; ++y)
            ov = __fadd_rn(ov, partial[y][threadIdx.x]);
        o[static_cast<long long>(bh) * dv + j] = ov;
    }
}
