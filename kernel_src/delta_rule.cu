// Gated delta-rule decode step: one token, per batch b and head h, with state S [DK x DV]:
//   S <- S * exp(g);   u = beta * (v - S^T k);   S <- S + k u^T;   o = S^T (q * scale)
// Layouts: q, k [B, H, DK]; v, o [B, H, DV]; g, beta [B, H]; S [B, H, DK, DV] fp32, updated in
// place. All fp32.
//
// Grid: (cdiv(DV, DR_BV), B * H), blocks of DR_BV / DR_VEC x DR_KSPLIT threads. Thread (x, y)
// owns the DR_VEC columns from j = blockIdx.x * DR_BV + x * DR_VEC and rows [y R, (y + 1) R),
// R = DK / DR_KSPLIT, in registers; the block's key and scaled query sit in shared memory. The
// state is streamed once: every row's loads are issued before any is used, and a row's DR_VEC
// columns move in one access where alignment allows. Each column is computed alone, its
// DR_KSPLIT partial dot products summed in one fixed order: the bits depend on DR_KSPLIT, never
// on DR_BV, DR_VEC or the compiled-in widths (those are free to tune).
#include "pdl.cuh"

#ifndef DR_BV
#define DR_BV 32 // columns per block (the value tile)
#endif
#ifndef DR_KSPLIT
#define DR_KSPLIT 4 // threads per column: part of the numerics
#endif
#ifndef DR_VEC
#define DR_VEC 1 // columns per thread: 1, 2 or 4 (one 4-, 8- or 16-byte access per row)
#endif
#ifndef DR_DK
#define DR_DK 0 // the key width compiled in (0: read at run time; a launch at another dk still works)
#endif
#ifndef DR_DV
#define DR_DV 0 // the value width compiled in (likewise)
#endif
#ifndef DR_MAX_DK
#define DR_MAX_DK 128 // production cap on DK: the per-thread register array holds DK / DR_KSPLIT
#endif

static_assert(DR_VEC == 1 || DR_VEC == 2 || DR_VEC == 4, "DR_VEC must be 1, 2 or 4");
static_assert(DR_BV % DR_VEC == 0, "DR_BV must be a multiple of DR_VEC");
static_assert(DR_DK == 0 || (DR_DK <= DR_MAX_DK && DR_DK % DR_KSPLIT == 0),
              "DR_DK must be a multiple of DR_KSPLIT and at most DR_MAX_DK");

namespace delta_rule {

template <int kVec> struct Access;
template <> struct Access<1> { using type = float; };
template <> struct Access<2> { using type = float2; };
template <> struct Access<4> { using type = float4; };

/// The `live` leading columns of a row at p (kWide: all DR_VEC of them in one access).
template <bool kWide> __device__ __forceinline__ void load(const float* p, int live, float (&x)[DR_VEC]) {
    if (kWide) {
        const auto t = *reinterpret_cast<const typename Access<DR_VEC>::type*>(p);
        const float* f = reinterpret_cast<const float*>(&t);
#pragma unroll
        for (int c = 0; c < DR_VEC; ++c)
            x[c] = f[c];
    } else {
#pragma unroll
        for (int c = 0; c < DR_VEC; ++c)
            x[c] = c < live ? p[c] : 0.0f;
    }
}

template <bool kWide> __device__ __forceinline__ void store(float* p, int live, const float (&x)[DR_VEC]) {
    if (kWide) {
        typename Access<DR_VEC>::type t;
        float* f = reinterpret_cast<float*>(&t);
#pragma unroll
        for (int c = 0; c < DR_VEC; ++c)
            f[c] = x[c];
        *reinterpret_cast<typename Access<DR_VEC>::type*>(p) = t;
    } else {
#pragma unroll
        for (int c = 0; c < DR_VEC; ++c)
            if (c < live)
                p[c] = x[c];
    }
}

/// Column col's DR_KSPLIT partial sums, added in one fixed order.
__device__ __forceinline__ float column_sum(const float (*partial)[DR_BV], int col) {
    float sum = 0.0f;
#pragma unroll
    for (int y = 0; y < DR_KSPLIT; ++y)
        sum = __fadd_rn(sum, partial[y][col]);
    return sum;
}

template <bool kWide>
__device__ __forceinline__ void step(const float* __restrict__ kb, const float* __restrict__ qb,
                                     float scale, float* ks, float* qs,
                                     const float* __restrict__ v, float beta, float gate,
                                     float* __restrict__ sb, float* __restrict__ o, int dk, int dv,
                                     float (*partial)[DR_BV], float (*partial_o)[DR_BV]) {
    constexpr int kRows = DR_MAX_DK / DR_KSPLIT;
    const int col = threadIdx.x * DR_VEC; // within the block's tile
    const int j = blockIdx.x * DR_BV + col;
    const int live = j >= dv ? 0 : dv - j < DR_VEC ? dv - j : DR_VEC;
    const int rows = dk / DR_KSPLIT;
    const int r0 = threadIdx.y * rows;
    float* p = sb + static_cast<long long>(r0) * dv + j;

    // Every global load of the step is issued before the first is used, so the step waits for
    // memory once: the thread's state rows, its value columns, and its share of the head's key
    // and query (kShare elements, a constant trip count: a run-time loop storing each key to
    // shared memory as it arrives would wait for it before issuing the state's loads). ptxas
    // keeps this order with a compiled-in DR_DK; in the run-time-width path at DR_VEC >= 2 it
    // still moves some value loads behind the barriers.
    constexpr int kThreads = DR_BV / DR_VEC * DR_KSPLIT;
    constexpr int kShare = (DR_MAX_DK + kThreads - 1) / kThreads;
    const int tid = threadIdx.y * (DR_BV / DR_VEC) + threadIdx.x;
    float s[kRows][DR_VEC];
#pragma unroll
    for (int r = 0; r < kRows; ++r)
        if (r < rows && live)
            load<kWide>(p + r * dv, live, s[r]);
    float vv[DR_VEC];
#pragma unroll
    for (int c = 0; c < DR_VEC; ++c)
        vv[c] = c < live ? v[j + c] : 0.0f;
    float kr_[kShare], qr_[kShare];
#pragma unroll
    for (int e = 0; e < kShare; ++e)
        if (tid + e * kThreads < dk) {
            kr_[e] = kb[tid + e * kThreads];
            qr_[e] = qb[tid + e * kThreads];
        }
    float dot[DR_VEC];
#pragma unroll
    for (int c = 0; c < DR_VEC; ++c)
        dot[c] = 0.0f;
    // The decay, whose exponential would otherwise hold back every load behind the gate's.
    const float decay = expf(gate);
    // The head's key and scaled query, which every thread of the block reads, into shared memory.
#pragma unroll
    for (int e = 0; e < kShare; ++e)
        if (tid + e * kThreads < dk) {
            ks[tid + e * kThreads] = kr_[e];
            qs[tid + e * kThreads] = __fmul_rn(qr_[e], scale);
        }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
        if (r < rows && live) {
            const float kr = ks[r0 + r];
#pragma unroll
            for (int c = 0; c < DR_VEC; ++c) {
                s[r][c] = __fmul_rn(s[r][c], decay);
                dot[c] = __fmaf_rn(s[r][c], kr, dot[c]);
            }
        }
    }
#pragma unroll
    for (int c = 0; c < DR_VEC; ++c)
        partial[threadIdx.y][col + c] = dot[c];
    __syncthreads();
    float u[DR_VEC];
#pragma unroll
    for (int c = 0; c < DR_VEC; ++c) {
        // Summed whether or not the column is live: inside the condition the shared-memory loads
        // wait on it (up to 8 % slower at 4.6 - 7.6 us launches on the H200).
        const float sk = column_sum(partial, col + c);
        u[c] = c < live ? __fmul_rn(beta, __fsub_rn(vv[c], sk)) : 0.0f;
    }

    float out[DR_VEC];
#pragma unroll
    for (int c = 0; c < DR_VEC; ++c)
        out[c] = 0.0f;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
        if (r < rows && live) {
            const float kr = ks[r0 + r], qr = qs[r0 + r];
#pragma unroll
            for (int c = 0; c < DR_VEC; ++c) {
                s[r][c] = __fmaf_rn(kr, u[c], s[r][c]);
                out[c] = __fmaf_rn(s[r][c], qr, out[c]);
            }
            store<kWide>(p + r * dv, live, s[r]);
        }
    }
#pragma unroll
    for (int c = 0; c < DR_VEC; ++c)
        partial_o[threadIdx.y][col + c] = out[c];
    __syncthreads();
    if (threadIdx.y == 0 && live) {
        float ov[DR_VEC];
#pragma unroll
        for (int c = 0; c < DR_VEC; ++c)
            ov[c] = column_sum(partial_o, col + c);
        store<kWide>(o + j, live, ov);
    }
}

} // namespace delta_rule

extern "C" __global__ void __launch_bounds__(DR_BV / DR_VEC * DR_KSPLIT)
    delta_rule_decode(const float* __restrict__ q, const float* __restrict__ k,
                      const float* __restrict__ v, const float* __restrict__ g,
                      const float* __restrict__ beta, float* __restrict__ state,
                      float* __restrict__ o, int dk, int dv, float scale) {
    pdl_chain_step();
    __shared__ float ks[DR_MAX_DK], qs[DR_MAX_DK];
    __shared__ float partial[DR_KSPLIT][DR_BV], partial_o[DR_KSPLIT][DR_BV];
    const int bh = blockIdx.y;
    const float* kb = k + static_cast<long long>(bh) * dk;
    const float* qb = q + static_cast<long long>(bh) * dk;
    const float gate = g[bh], b = beta[bh];
    float* sb = state + static_cast<long long>(bh) * dk * dv;
    const float* vb = v + static_cast<long long>(bh) * dv;
    float* ob = o + static_cast<long long>(bh) * dv;
    // The compiled-in widths where the launch has them (constant trip counts and offsets),
    // else the run-time ones: the same arithmetic, so the same bits. A row moves in one access
    // when its start is 4 * DR_VEC bytes aligned: dv a multiple of DR_VEC, state and o aligned.
    const auto run = [&](int dk_, int dv_) {
        // A key width the arrays cannot hold (over DR_MAX_DK: past ks and the register rows) or
        // that does not split evenly over DR_KSPLIT threads (rows left out) stops the kernel
        // with an error rather than a wrong state. The contract refuses such a shape with the
        // reason before any launch; this catches a launch made without it. At a compiled-in
        // width the test folds away (the static_assert above has made it).
        if (dk_ > DR_MAX_DK || dk_ % DR_KSPLIT != 0)
            __trap();
        if (DR_VEC > 1 && dv_ % DR_VEC == 0 &&
            reinterpret_cast<unsigned long long>(state) % (4 * DR_VEC) == 0 &&
            reinterpret_cast<unsigned long long>(o) % (4 * DR_VEC) == 0)
            delta_rule::step<true>(kb, qb, scale, ks, qs, vb, b, gate, sb, ob, dk_, dv_, partial, partial_o);
        else
            delta_rule::step<false>(kb, qb, scale, ks, qs, vb, b, gate, sb, ob, dk_, dv_, partial, partial_o);
    };
    if ((DR_DK == 0 || dk == DR_DK) && (DR_DV == 0 || dv == DR_DV))
        run(DR_DK ? DR_DK : dk, DR_DV ? DR_DV : dv);
    else
        run(dk, dv);
}
