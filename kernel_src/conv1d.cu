// Causal depthwise conv1d of width 4 (Mamba), fp32 or bf16 in and out, fp32 accumulation.
// x, y: [B, C, T] with time contiguous; w: [C, 4]; bias: [C]; state_in, state_out: [B, C, 3].
//   xx[t] = x[b, c, t] for t >= 0, state_in[b, c, 3 + t] for t in -3..-1
//   y[b, c, t] = act(bias[c] + w[c,0] xx[t-3] + w[c,1] xx[t-2] + w[c,2] xx[t-1] + w[c,3] xx[t])
//   state_out[b, c, k] = xx[T - 3 + k]
// A warp owns S consecutive segments (CONV_SEGS) of 32 * CONV_TILE steps of one (batch, channel)
// row, each read in rounds: in each round lane i holds the i-th chunk of E consecutive steps
// (16 bytes: 4 fp32 or 8 bf16), so a round is one coalesced load of the warp's 32 chunks and one
// store. The three steps before a chunk come from the lane before it (a shuffle), from the
// previous round's last lane (across segments too), or, at the warp's first step, from memory
// (the carry-in state before t = 0). While a warp computes a segment, the next one's loads are in
// flight. Short sequences still give every SM work: a row of T steps is
// ceil(T / (32 * CONV_TILE * S)) warps. The sum is one fixed chain of fused
// multiply-adds, the same for every tile, block, segment count and load path.
//
// conv1d_update_*: one decode step, in place. A token x [B, C] enters the rolling state
// [B, C, 3] (conv1d's carry layout, so a prefill's state_out is the first step's state):
//   y[b, c] = act(bias[c] + w[c,0] s[0] + w[c,1] s[1] + w[c,2] s[2] + w[c,3] x[b, c])
//   state[b, c] <- (s[1], s[2], x[b, c])
// A thread per (batch, channel), the same chain of fused multiply-adds as the sequence
// kernel's: conv1d over T + 1 steps gives the bits of conv1d over T steps and one update.
#include "common.cuh"
#include "pdl.cuh"

#ifndef CONV_TILE
#define CONV_TILE 16 // time steps per thread: a multiple of 4
#endif
#ifndef CONV_BLOCK
#define CONV_BLOCK 64 // threads per block: a multiple of 32
#endif
#ifndef CONV_SEGS
// Consecutive segments of a row per warp, the next one's loads in flight while one is computed;
// 0: by element size, 4 for bf16 and 1 for fp32 (the contract's grid follows the same rule). A
// bf16 segment carries half the bytes and twice the math per byte: without the overlap its long
// rows reach ~75 % of the copy bandwidth, with it ~97 %; fp32 gains nothing and pays registers.
#define CONV_SEGS 0
#endif
#ifndef CONV_SILU
#define CONV_SILU 1 // 1: y = silu(conv), as Mamba's conv1d does; 0: no activation
#endif

static_assert(CONV_TILE % 4 == 0, "CONV_TILE must be a multiple of 4");
static_assert(CONV_BLOCK % 32 == 0 && CONV_BLOCK <= 1024, "CONV_BLOCK: a multiple of 32, <= 1024");
static_assert(CONV_SEGS >= 0, "CONV_SEGS must be at least 1, or 0 (by element size)");

/// E consecutive elements of T as one vector: 16 bytes (4 fp32, 8 bf16) or 8 bytes (4 bf16).
template <class T, int E> struct Chunk;
template <> struct Chunk<float, 4> {
    using V = uint4;
    static __device__ __forceinline__ float get(const V& v, int i) {
        return __uint_as_float(i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w);
    }
    static __device__ __forceinline__ void set2(V& v, int i, float lo, float hi) {
        (i == 0 ? v.x : v.z) = __float_as_uint(lo);
        (i == 0 ? v.y : v.w) = __float_as_uint(hi);
    }
};
/// fp32 to bf16 bits, round to nearest even: one instruction from sm_80 (a NaN becomes
/// 0x7fff), common.cuh's rule before it.
__device__ __forceinline__ unsigned short bf16_bits(float f) {
#if __CUDA_ARCH__ >= 800
    unsigned short h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    return from_float<bf16>(f).bits;
#endif
}
template <class T> __device__ __forceinline__ T store_value(float f);
template <> __device__ __forceinline__ float store_value<float>(float f) { return f; }
template <> __device__ __forceinline__ bf16 store_value<bf16>(float f) { return bf16{bf16_bits(f)}; }

template <class Vec> struct BfChunk {
    using V = Vec;
    static __device__ __forceinline__ float get(const V& v, int i) {
        const unsigned w = reinterpret_cast<const unsigned*>(&v)[i / 2];
        return __uint_as_float((i & 1) ? (w & 0xffff0000u) : (w << 16));
    }
    /// Elements i and i + 1 (i even), rounded as bf16_bits rounds each.
    static __device__ __forceinline__ void set2(V& v, int i, float lo, float hi) {
#if __CUDA_ARCH__ >= 800
        unsigned w;
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
#else
        const unsigned w = bf16_bits(lo) | (unsigned(bf16_bits(hi)) << 16);
#endif
        reinterpret_cast<unsigned*>(&v)[i / 2] = w;
    }
};
template <> struct Chunk<bf16, 8> : BfChunk<uint4> {};
template <> struct Chunk<bf16, 4> : BfChunk<uint2> {};

__device__ __forceinline__ float conv_step(float acc, float p0, float p1, float p2, float xt,
                                           const float* wc) {
    acc = __fmaf_rn(wc[0], p0, acc);
    acc = __fmaf_rn(wc[1], p1, acc);
    acc = __fmaf_rn(wc[2], p2, acc);
    acc = __fmaf_rn(wc[3], xt, acc);
#if CONV_SILU
    // x / (1 + e^-x) with the hardware's exp2 and reciprocal, denormals flushed (a few ulp, as
    // causal-conv1d's fast-math build computes it): the IEEE expf and division cost more than
    // the loads.
    float e, r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(acc * -1.4426950408889634f));
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(1.0f + e));
    acc *= r;
#endif
    return acc;
}

/// v / d into q, v % d returned: a shift and a mask where d is a power of two (a model's widths
/// and most row splits), else one 32-bit division (a run-time divisor costs ~20 instructions,
/// which delay a short row's first load).
__device__ __forceinline__ unsigned divmod(unsigned v, int d, unsigned& q) {
    const unsigned u = static_cast<unsigned>(d);
    if ((u & (u - 1)) == 0) {
        q = v >> (__ffs(d) - 1);
        return v & (u - 1);
    }
    q = v / u;
    return v - q * u;
}

template <class T>
__device__ __forceinline__ void conv1d_segments(const T* __restrict__ x, const T* __restrict__ w,
                                                const T* __restrict__ bias,
                                                const T* __restrict__ state_in, T* __restrict__ y,
                                                T* __restrict__ state_out, int batch, int channels,
                                                int steps) {
    // Steps per chunk: 16 bytes, or 8 bytes of bf16 when the tile holds no 8.
    constexpr int E = 16 / sizeof(T) <= CONV_TILE && CONV_TILE % (16 / sizeof(T)) == 0
                          ? 16 / sizeof(T)
                          : 4;
    constexpr int kRounds = CONV_TILE / E;
    constexpr int kSpan = 32 * CONV_TILE; // steps per warp segment
    constexpr int kSegs = CONV_SEGS > 0 ? CONV_SEGS : sizeof(T) == 2 ? 4 : 1;
    using C = Chunk<T, E>;
    using V = typename C::V;
    const int lane = threadIdx.x & 31;
    const int segments = (steps + kSpan - 1) / kSpan;
    const int groups = (segments + kSegs - 1) / kSegs; // warps per row
    const long long warps = static_cast<long long>(batch) * channels * groups;
    const long long stride = static_cast<long long>(gridDim.x) * (CONV_BLOCK / 32);
    for (long long wi = (blockIdx.x * static_cast<long long>(CONV_BLOCK) + threadIdx.x) / 32;
         wi < warps; wi += stride) {
        // 32-bit division where it fits (every shape short of 2^32 warps): a 64-bit one costs
        // several times more.
        long long row; // b * channels + c
        int group, c;
        if (warps <= 0xffffffffll) {
            unsigned r32;
            group = static_cast<int>(divmod(static_cast<unsigned>(wi), groups, r32));
            row = r32;
            unsigned bi;
            c = static_cast<int>(divmod(r32, channels, bi));
        } else {
            row = wi / groups;
            group = static_cast<int>(wi - row * groups);
            c = static_cast<int>(row % channels);
        }
        const T* xr = x + row * steps;
        T* yr = y + row * steps;
        const T* sr = state_in ? state_in + row * 3 : nullptr;
        float wc[4];
#pragma unroll
        for (int k = 0; k < 4; ++k)
            wc[k] = to_float(w[c * 4 + k]);
        const float b = bias ? to_float(bias[c]) : 0.0f;
        const int first = group * kSegs;
        const int last = segments - first > kSegs ? first + kSegs : segments;
        // Whole chunks when the row's chunks are aligned vectors (T a multiple of E).
        const bool vec = (reinterpret_cast<size_t>(xr) % sizeof(V)) == 0 &&
                         (reinterpret_cast<size_t>(yr) % sizeof(V)) == 0;
        // A segment wholly inside an aligned row is read as straight-line vector loads (the
        // same answer in every lane: no lane diverges before the shuffles).
        const auto fast = [&](int seg) { return vec && steps - seg * kSpan >= kSpan; };
        // The three steps before the warp's first segment: lane 0's carry into its round 0.
        // Each later segment's comes from the one before, through the shuffles.
        float carry[3];
#pragma unroll
        for (int k = 0; k < 3; ++k) {
            const int t = first * kSpan - 3 + k;
            carry[k] = t >= 0 ? to_float(xr[t]) : (sr ? to_float(sr[3 + t]) : 0.0f);
        }
        // The next fast segment's loads are issued before this one is computed, so a warp
        // keeps a segment's bytes in flight while it computes (registers of their own: a
        // load into registers still in use would wait for them).
        V raw[kRounds];
        const auto load = [&](int seg) {
#pragma unroll
            for (int r = 0; r < kRounds; ++r)
                raw[r] = *reinterpret_cast<const V*>(xr + seg * kSpan + (r * 32 + lane) * E);
        };
        if (fast(first))
            load(first);
        for (int seg = first; seg < last; ++seg) {
            const int s0 = seg * kSpan;
            float xs[kRounds][E];
            if (fast(seg)) {
#pragma unroll
                for (int r = 0; r < kRounds; ++r)
#pragma unroll
                    for (int i = 0; i < E; ++i)
                        xs[r][i] = C::get(raw[r], i);
                if (kSegs > 1 && seg + 1 < last && fast(seg + 1))
                    load(seg + 1);
            } else {
                // The row's last segment, or an unaligned row: a lane's chunk in one vector
                // when it lies wholly inside an aligned row, element by element otherwise.
#pragma unroll
                for (int r = 0; r < kRounds; ++r) {
                    const int t0 = s0 + (r * 32 + lane) * E;
                    if (vec && t0 + E <= steps) {
                        const V v = *reinterpret_cast<const V*>(xr + t0);
#pragma unroll
                        for (int i = 0; i < E; ++i)
                            xs[r][i] = C::get(v, i);
                    } else {
#pragma unroll
                        for (int i = 0; i < E; ++i)
                            xs[r][i] = t0 + i < steps ? to_float(xr[t0 + i]) : 0.0f;
                    }
                }
            }
#pragma unroll
            for (int r = 0; r < kRounds; ++r) {
                const int t0 = s0 + (r * 32 + lane) * E;
                // The three steps before this chunk: the previous lane's last three, lane 0's
                // from the previous round's lane 31 (or the carry into the segment).
                float p[3];
#pragma unroll
                for (int k = 0; k < 3; ++k) {
                    const float up = __shfl_up_sync(0xffffffffu, xs[r][E - 3 + k], 1);
                    p[k] = lane == 0 ? carry[k] : up;
                    carry[k] = __shfl_sync(0xffffffffu, xs[r][E - 3 + k], 31);
                }
                // Past the row's end a lane computes on zeros and stores nothing: no lane
                // leaves the loop, so every shuffle runs converged.
                float ys[E];
#pragma unroll
                for (int i = 0; i < E; ++i) {
                    ys[i] = conv_step(b, p[0], p[1], p[2], xs[r][i], wc);
                    p[0] = p[1];
                    p[1] = p[2];
                    p[2] = xs[r][i];
                }
                if (vec && t0 + E <= steps) {
                    V out;
#pragma unroll
                    for (int i = 0; i < E; i += 2)
                        C::set2(out, i, ys[i], ys[i + 1]);
                    *reinterpret_cast<V*>(yr + t0) = out;
                } else {
#pragma unroll
                    for (int i = 0; i < E; ++i)
                        if (t0 + i < steps)
                            yr[t0 + i] = store_value<T>(ys[i]);
                }
            }
        }
        if (state_out && last == segments && lane < 3) {
            const int t = steps - 3 + lane;
            state_out[row * 3 + lane] =
                t >= 0 ? xr[t] : (sr ? sr[3 + t] : from_float<T>(0.0f));
        }
    }
}

extern "C" __global__ void __launch_bounds__(CONV_BLOCK)
    conv1d_f32(const float* x, const float* w, const float* bias, const float* state_in, float* y,
               float* state_out, int batch, int channels, int steps) {
    conv1d_segments(x, w, bias, state_in, y, state_out, batch, channels, steps);
}

extern "C" __global__ void __launch_bounds__(CONV_BLOCK)
    conv1d_bf16(const bf16* x, const bf16* w, const bf16* bias, const bf16* state_in, bf16* y,
                bf16* state_out, int batch, int channels, int steps) {
    conv1d_segments(x, w, bias, state_in, y, state_out, batch, channels, steps);
}

template <class T>
__device__ __forceinline__ void conv1d_update_one(const T* __restrict__ x, const T* __restrict__ w,
                                                  const T* __restrict__ bias, T* __restrict__ state,
                                                  T* __restrict__ y, int batch, int channels) {
    const long long i = blockIdx.x * static_cast<long long>(CONV_BLOCK) + threadIdx.x;
    if (i >= static_cast<long long>(batch) * channels)
        return;
    const int c = static_cast<int>(i % channels);
    T* s = state + i * 3;
    const T s0 = s[0], s1 = s[1], s2 = s[2], xt = x[i];
    float wc[4];
#pragma unroll
    for (int k = 0; k < 4; ++k)
        wc[k] = to_float(w[c * 4 + k]);
    const float b = bias ? to_float(bias[c]) : 0.0f;
    y[i] = store_value<T>(conv_step(b, to_float(s0), to_float(s1), to_float(s2), to_float(xt), wc));
    s[0] = s1;
    s[1] = s2;
    s[2] = xt;
}

extern "C" __global__ void __launch_bounds__(CONV_BLOCK)
    conv1d_update_f32(const float* x, const float* w, const float* bias, float* state, float* y,
                      int batch, int channels) {
    pdl_chain_step();
    conv1d_update_one(x, w, bias, state, y, batch, channels);
}

extern "C" __global__ void __launch_bounds__(CONV_BLOCK)
    conv1d_update_bf16(const bf16* x, const bf16* w, const bf16* bias, bf16* state, bf16* y,
                       int batch, int channels) {
    pdl_chain_step();
    conv1d_update_one(x, w, bias, state, y, batch, channels);
}
