// Causal depthwise conv1d of width 4 (Mamba), fp32 or bf16 in and out, fp32 accumulation.
// x, y: [B, C, T] with time contiguous; w: [C, 4]; bias: [C]; state_in, state_out: [B, C, 3].
//   xx[t] = x[b, c, t] for t >= 0, state_in[b, c, 3 + t] for t in -3..-1
//   y[b, c, t] = act(bias[c] + w[c,0] xx[t-3] + w[c,1] xx[t-2] + w[c,2] xx[t-1] + w[c,3] xx[t])
//   state_out[b, c, k] = xx[T - 3 + k]
// Every row is cut into segments of 32 * CONV_TILE steps, and a warp owns S consecutive ones
// (CONV_SEGS) of the rows taken one after another: where a row ends before the warp's S segments
// do, the warp walks on into the next rows, so short rows keep loads in flight too. A segment is
// read in rounds: in each round lane i holds the i-th chunk of E consecutive steps (16 bytes: 4
// fp32 or 8 bf16), so a round is one coalesced load of the warp's 32 chunks and one store. The
// three steps before a chunk come from the lane before it (a shuffle), from the previous round's
// last lane (across segments too), or, at the warp's first step in a row, from memory (the
// carry-in state before t = 0). Where a warp has more segments and the rows are whole aligned
// chunks (T a multiple of E), the next one's loads, in its row or the next, are in flight while
// it computes one. With CONV_FLAT the segments are cut from the rows laid end to end instead
// (conv1d_flat), so that rows shorter than a segment fill every lane of a round. The sum is one
// fixed chain of fused multiply-adds, the same for every tile, block, segment count, cut and
// load path.
//
// conv1d_cl_*: the same convolution channel-last, x, y: [B, T, C] (channels contiguous, the
// layout Mamba2's xBC has), state_in, state_out: [B, 3, C] (causal-conv1d's channel-last states).
// A thread owns CONV_CL_CH (4 or 8) consecutive channels over CONV_CL_STEPS consecutive steps:
// one vector load and store per step, coalesced across the warp's channels, and the same chain of
// fused multiply-adds per output, so its bits are the row kernel's on the transposed tensors.
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
// Consecutive segments per warp, the next one's loads in flight while one is computed; 0: by
// element size, 4 for bf16 and 1 for fp32 (the contract's grid follows the same rule). A bf16
// segment carries half the bytes and twice the math per byte: without the overlap its long rows
// reach ~75 % of the copy bandwidth, with it ~97 %, and rows of one segment (b=32 c=4096 t=512)
// 74 % against 88 % now that a warp walks across rows; fp32 gains nothing and pays registers.
#define CONV_SEGS 0
#endif
#ifndef CONV_SILU
#define CONV_SILU 1 // 1: y = silu(conv), as Mamba's conv1d does; 0: no activation
#endif
#ifndef CONV_CL_STEPS
#define CONV_CL_STEPS 16 // conv1d_cl: time steps per thread
#endif
#ifndef CONV_CL_SEGS
#define CONV_CL_SEGS 1 // conv1d_cl: consecutive tiles of CONV_CL_STEPS steps per thread
#endif
#ifndef CONV_CL_CH
// conv1d_cl: channels per thread, 4 or 8: a step's vector is 16 or 32 bytes of fp32, 8 or 16
// bytes of bf16.
#define CONV_CL_CH 4
#endif
#ifndef CONV_CL_EAGER
// conv1d_cl: 1 issues every load of a thread's first tile (the tile, the three steps before it,
// weights and bias, as vectors) before the first use; 0 loads the three steps and the weights
// one use at a time and the tile after them. Same outputs either way.
#define CONV_CL_EAGER 1
#endif
#ifndef CONV_FLAT
// 1: where the rows are whole aligned chunks, segments are cut from the rows laid end to end
// (conv1d_flat), so rows shorter than a segment fill every lane; 0: each row is cut apart. At
// rows of 64 steps (H200) it ran 1.25 - 1.8x as fast as the tuned row cut at batch 4 and c =
// 4096 - 8192, and 2.2 - 4.8x as fast as the default one at batch 32.
#define CONV_FLAT 0
#endif

static_assert(CONV_TILE % 4 == 0, "CONV_TILE must be a multiple of 4");
static_assert(CONV_BLOCK % 32 == 0 && CONV_BLOCK <= 1024, "CONV_BLOCK: a multiple of 32, <= 1024");
static_assert(CONV_SEGS >= 0, "CONV_SEGS must be at least 1, or 0 (by element size)");
static_assert(CONV_CL_STEPS >= 1, "CONV_CL_STEPS must be at least 1");
static_assert(CONV_CL_SEGS >= 1, "CONV_CL_SEGS must be at least 1");
static_assert(CONV_CL_CH == 4 || CONV_CL_CH == 8, "CONV_CL_CH must be 4 or 8");

/// E consecutive elements of T as one vector: 16 bytes (4 fp32, 8 bf16), 8 bytes (4 bf16) or 32
/// bytes (8 fp32, two 16-byte loads).
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
struct alignas(16) Words8 {
    unsigned w[8];
};
template <> struct Chunk<float, 8> {
    using V = Words8;
    static __device__ __forceinline__ float get(const V& v, int i) {
        return __uint_as_float(v.w[i]);
    }
    static __device__ __forceinline__ void set2(V& v, int i, float lo, float hi) {
        v.w[i] = __float_as_uint(lo);
        v.w[i + 1] = __float_as_uint(hi);
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
template <> __device__ __forceinline__ float store_value<float>(float f) {
    return f;
}
template <> __device__ __forceinline__ bf16 store_value<bf16>(float f) {
    return bf16{bf16_bits(f)};
}

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

/// The chunks of a warp's segments (conv1d_segments, conv1d_flat): E steps a chunk (16 bytes,
/// or 8 bytes of bf16 when the tile holds no 8), kRounds chunks a lane, kSpan steps a segment,
/// kSegs segments a warp (CONV_SEGS, or for 0 by element size).
/// (Enumerators, not static members: NVRTC would emit those as device globals.)
template <class T> struct Segments {
    enum : int {
        E = 16 / sizeof(T) <= CONV_TILE && CONV_TILE % (16 / sizeof(T)) == 0 ? 16 / sizeof(T) : 4,
        kRounds = CONV_TILE / E,
        kSpan = 32 * CONV_TILE,
        kSegs = CONV_SEGS > 0    ? CONV_SEGS
                : sizeof(T) == 2 ? 4
                                 : 1,
    };
    using C = Chunk<T, E>;
    using V = typename C::V;
};

/// The three steps before a lane's chunk xs of one round: the previous lane's last three, lane
/// 0's from `carry` (the previous round's lane 31, or the carry into the segment), which becomes
/// this round's lane 31's. Every lane of the warp calls it (shuffles).
template <int E>
__device__ __forceinline__ void steps_before(const float (&xs)[E], int lane, float (&carry)[3],
                                             float (&p)[3]) {
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        const float up = __shfl_up_sync(0xffffffffu, xs[E - 3 + k], 1);
        p[k] = lane == 0 ? carry[k] : up;
        carry[k] = __shfl_sync(0xffffffffu, xs[E - 3 + k], 31);
    }
}

/// The E outputs of a chunk xs of one row, p the three steps before it (consumed).
template <int E>
__device__ __forceinline__ void conv_chunk(float b, float (&p)[3], const float (&xs)[E],
                                           const float* wc, float (&ys)[E]) {
#pragma unroll
    for (int e = 0; e < E; ++e) {
        ys[e] = conv_step(b, p[0], p[1], p[2], xs[e], wc);
        p[0] = p[1];
        p[1] = p[2];
        p[2] = xs[e];
    }
}

/// E outputs as one vector of chunk type C, rounded as store_value rounds each.
template <class C, int E> __device__ __forceinline__ typename C::V packed(const float (&ys)[E]) {
    typename C::V out;
#pragma unroll
    for (int e = 0; e < E; e += 2)
        C::set2(out, e, ys[e], ys[e + 1]);
    return out;
}

#if CONV_FLAT
/// conv1d over the rows laid end to end, [B * C * T] as one array, where every row is whole
/// aligned chunks (T a multiple of E, x and y aligned): a segment is 32 * CONV_TILE consecutive
/// steps of the array, whatever rows it crosses, and a warp owns S consecutive segments, the
/// next one's loads in flight while it computes one. A row of 64 fp32 steps fills half a round
/// of the row-by-row walk at CONV_TILE 4 (and an eighth at 16); here every lane holds a chunk.
/// No chunk crosses a row, so each lane finds its chunk's row and channel (its weights and bias,
/// one cached load each), and a chunk that starts a row takes its three steps before from the
/// carry-in state; every other chunk's come through the shuffles, as in conv1d_segments. The
/// same chain of fused multiply-adds per output: the bits of the row-by-row walk.
template <class T>
__device__ __forceinline__ void
conv1d_flat(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
            const T* __restrict__ state_in, T* __restrict__ y, T* __restrict__ state_out, int batch,
            int channels, int steps) {
    using G = Segments<T>;
    constexpr int E = G::E, kRounds = G::kRounds, kSpan = G::kSpan, kSegs = G::kSegs;
    using C = typename G::C;
    using V = typename G::V;
    const int lane = threadIdx.x & 31;
    const long long n = static_cast<long long>(batch) * channels * steps; // elements
    const long long total = (n + kSpan - 1) / kSpan;                      // segments
    const long long warps = (total + kSegs - 1) / kSegs;
    const long long stride = static_cast<long long>(gridDim.x) * (CONV_BLOCK / 32);
    // Every chunk index of the last segment fits 32 bits: one 32-bit division per chunk.
    const bool narrow = total * kSpan <= 0xffffffffll;
    const auto ld = [](const V* p) { return kSegs == 1 ? __ldg(p) : *p; };
    for (long long wi = (blockIdx.x * static_cast<long long>(CONV_BLOCK) + threadIdx.x) / 32;
         wi < warps; wi += stride) {
        const long long g = wi * kSegs;
        const int count = kSegs == 1 ? 1 : total - g < kSegs ? static_cast<int>(total - g) : kSegs;
        V raw[kRounds];
        const auto load = [&](long long sg) {
            const T* xs = x + sg * kSpan;
            if (n - sg * kSpan >= kSpan) {
#pragma unroll
                for (int k = 0; k < kRounds; ++k)
                    raw[k] = ld(reinterpret_cast<const V*>(xs + (k * 32 + lane) * E));
            } else {
                // The array's last segment: a lane past its end loads zeros (n is whole chunks).
#pragma unroll
                for (int k = 0; k < kRounds; ++k)
                    raw[k] = sg * kSpan + (k * 32 + lane) * E < n
                                 ? ld(reinterpret_cast<const V*>(xs + (k * 32 + lane) * E))
                                 : V{};
            }
        };
        load(g);
        // The three steps before the warp's first chunk (a chunk that starts a row takes the
        // carry-in instead); each later segment's come from the one before.
        float carry[3];
#pragma unroll
        for (int k = 0; k < 3; ++k)
            carry[k] = g > 0 ? to_float(x[g * kSpan - 3 + k]) : 0.0f;
        for (long long sg = g; sg < g + count; ++sg) {
            float xs[kRounds][E];
#pragma unroll
            for (int r = 0; r < kRounds; ++r)
#pragma unroll
                for (int e = 0; e < E; ++e)
                    xs[r][e] = C::get(raw[r], e);
            if (kSegs > 1 && sg + 1 < g + count)
                load(sg + 1);
#pragma unroll
            for (int r = 0; r < kRounds; ++r) {
                const long long f0 = sg * kSpan + (r * 32 + lane) * E;
                float p[3];
                steps_before(xs[r], lane, carry, p);
                long long row; // b * channels + c
                int t0, c;
                if (narrow) {
                    unsigned r32, bi;
                    t0 = static_cast<int>(divmod(static_cast<unsigned>(f0), steps, r32));
                    row = r32;
                    c = static_cast<int>(divmod(r32, channels, bi));
                } else {
                    row = f0 / steps;
                    t0 = static_cast<int>(f0 - row * steps);
                    c = static_cast<int>(row % channels);
                }
                // Past the array's end a lane computes on zeros and stores nothing: every lane
                // stays for the shuffles.
                const bool in = f0 < n;
                if (t0 == 0)
#pragma unroll
                    for (int k = 0; k < 3; ++k)
                        p[k] = in && state_in ? to_float(state_in[row * 3 + k]) : 0.0f;
                float wc[4];
#pragma unroll
                for (int k = 0; k < 4; ++k)
                    wc[k] = to_float(w[c * 4 + k]);
                const float b = bias ? to_float(bias[c]) : 0.0f;
                float ys[E];
                conv_chunk(b, p, xs[r], wc, ys);
                if (in) {
                    *reinterpret_cast<V*>(y + f0) = packed<C>(ys);
                    // The chunk that ends a row copies its last three steps to the carry-out
                    // (from memory: the bits as they came, a NaN's included).
                    if (state_out && t0 + E == steps)
#pragma unroll
                        for (int k = 0; k < 3; ++k)
                            state_out[row * 3 + k] = x[f0 + E - 3 + k];
                }
            }
        }
    }
}
#endif

template <class T>
__device__ __forceinline__ void
conv1d_segments(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                const T* __restrict__ state_in, T* __restrict__ y, T* __restrict__ state_out,
                int batch, int channels, int steps) {
    using G = Segments<T>;
    constexpr int E = G::E, kRounds = G::kRounds, kSpan = G::kSpan, kSegs = G::kSegs;
    using C = typename G::C;
    using V = typename G::V;
    const int lane = threadIdx.x & 31;
    const int segments = (steps + kSpan - 1) / kSpan; // per row
    // The segments of every row, row after row: a warp owns kSegs consecutive ones, so where a
    // row is shorter than kSegs segments the warp walks on into the next rows.
    const long long total = static_cast<long long>(batch) * channels * segments;
    const long long warps = (total + kSegs - 1) / kSegs;
    const long long stride = static_cast<long long>(gridDim.x) * (CONV_BLOCK / 32);
    // Whole chunks in every lane when the rows' chunks are aligned vectors (T a multiple of E,
    // the tensors 16-byte aligned): a segment's loads go out straight-line, the same in every
    // lane (no lane diverges before the shuffles), a lane past the row's end loading zeros.
    const bool vec = steps % E == 0 && (reinterpret_cast<size_t>(x) % sizeof(V)) == 0 &&
                     (reinterpret_cast<size_t>(y) % sizeof(V)) == 0;
    // Where they are not, a lane's chunk at step t0 is one vector when it lies wholly inside the
    // row at aligned addresses.
    const auto whole = [&](const T* xr, const T* yr, int t0) {
        return t0 + E <= steps && (vec || ((reinterpret_cast<size_t>(xr + t0) % sizeof(V)) == 0 &&
                                           (reinterpret_cast<size_t>(yr + t0) % sizeof(V)) == 0));
    };
#if CONV_FLAT
    if (vec) {
        conv1d_flat(x, w, bias, state_in, y, state_out, batch, channels, steps);
        return;
    }
#endif
    for (long long wi = (blockIdx.x * static_cast<long long>(CONV_BLOCK) + threadIdx.x) / 32;
         wi < warps; wi += stride) {
        const long long g = wi * kSegs;
        // (kSegs == 1 spelled out: a loop the compiler cannot see run once costs fp32 ~15 %.)
        const int count = kSegs == 1 ? 1 : total - g < kSegs ? static_cast<int>(total - g) : kSegs;
        // 32-bit division where it fits (every shape short of 2^32 segments): a 64-bit one
        // costs several times more.
        long long row; // b * channels + c
        int seg, c;
        if (total <= 0xffffffffll) {
            unsigned r32;
            seg = static_cast<int>(divmod(static_cast<unsigned>(g), segments, r32));
            row = r32;
            unsigned bi;
            c = static_cast<int>(divmod(r32, channels, bi));
        } else {
            row = g / segments;
            seg = static_cast<int>(g - row * segments);
            c = static_cast<int>(row % channels);
        }
        // With whole aligned chunks (vec) and kSegs > 1, the next segment's loads are issued
        // before this one is computed, so a warp keeps a segment's bytes in flight while it
        // computes (registers of their own: a load into registers still in use would wait for
        // them), the next row's first segment at a row's end. Otherwise each segment is read
        // when it is computed.
        V raw[kRounds];
        // A warp of one segment loads through the read-only path; with more, the plain loads
        // keep fewer registers (bf16: 64 against 72) and ran 3 - 4 % faster.
        const auto ld = [](const V* p) { return kSegs == 1 ? __ldg(p) : *p; };
        const auto load = [&](long long r, int sg) {
            const T* xs = x + r * steps + sg * kSpan;
            if (steps - sg * kSpan >= kSpan) {
#pragma unroll
                for (int k = 0; k < kRounds; ++k)
                    raw[k] = ld(reinterpret_cast<const V*>(xs + (k * 32 + lane) * E));
            } else {
#pragma unroll
                for (int k = 0; k < kRounds; ++k) {
                    const int t0 = sg * kSpan + (k * 32 + lane) * E;
                    raw[k] = t0 + E <= steps
                                 ? ld(reinterpret_cast<const V*>(xs + (k * 32 + lane) * E))
                                 : V{};
                }
            }
        };
        if (vec)
            load(row, seg);
        for (int left = count; left > 0;) {
            // This row's segments of the warp, from `seg` on.
            const int n = kSegs == 1 ? 1 : segments - seg < left ? segments - seg : left;
            left -= n;
            const T* xr = x + row * steps;
            T* yr = y + row * steps;
            float wc[4];
#pragma unroll
            for (int k = 0; k < 4; ++k)
                wc[k] = to_float(w[c * 4 + k]);
            const float b = bias ? to_float(bias[c]) : 0.0f;
            // The three steps before the warp's first segment in the row: lane 0's carry into
            // its round 0. Each later segment's comes from the one before, through the shuffles.
            float carry[3];
#pragma unroll
            for (int k = 0; k < 3; ++k) {
                const int t = seg * kSpan - 3 + k;
                carry[k] = t >= 0 ? to_float(xr[t])
                                  : (state_in ? to_float(state_in[row * 3 + 3 + t]) : 0.0f);
            }
            for (const int end = seg + n; seg < end; ++seg) {
                const int s0 = seg * kSpan;
                float xs[kRounds][E];
                if (vec) {
#pragma unroll
                    for (int r = 0; r < kRounds; ++r)
#pragma unroll
                        for (int e = 0; e < E; ++e)
                            xs[r][e] = C::get(raw[r], e);
                    if (kSegs > 1 && seg + 1 < end)
                        load(row, seg + 1);
                    else if (kSegs > 1 && left > 0)
                        load(row + 1, 0);
                } else {
                    // Rows that are not whole aligned chunks: element by element where a lane's
                    // chunk is not one aligned vector inside the row.
#pragma unroll
                    for (int r = 0; r < kRounds; ++r) {
                        const int t0 = s0 + (r * 32 + lane) * E;
                        if (whole(xr, yr, t0)) {
                            const V v = ld(reinterpret_cast<const V*>(xr + t0));
#pragma unroll
                            for (int e = 0; e < E; ++e)
                                xs[r][e] = C::get(v, e);
                        } else {
#pragma unroll
                            for (int e = 0; e < E; ++e)
                                xs[r][e] = t0 + e < steps ? to_float(xr[t0 + e]) : 0.0f;
                        }
                    }
                }
#pragma unroll
                for (int r = 0; r < kRounds; ++r) {
                    const int t0 = s0 + (r * 32 + lane) * E;
                    float p[3];
                    steps_before(xs[r], lane, carry, p);
                    // Past the row's end a lane computes on zeros and stores nothing: no lane
                    // leaves the loop, so every shuffle runs converged.
                    float ys[E];
                    conv_chunk(b, p, xs[r], wc, ys);
                    if (whole(xr, yr, t0)) {
                        *reinterpret_cast<V*>(yr + t0) = packed<C>(ys);
                    } else {
#pragma unroll
                        for (int e = 0; e < E; ++e)
                            if (t0 + e < steps)
                                yr[t0 + e] = store_value<T>(ys[e]);
                    }
                }
            }
            if (seg == segments) {
                if (state_out && lane < 3) {
                    const int t = steps - 3 + lane;
                    state_out[row * 3 + lane] =
                        t >= 0 ? xr[t]
                               : (state_in ? state_in[row * 3 + 3 + t] : from_float<T>(0.0f));
                }
                ++row;
                seg = 0;
                c = c + 1 == channels ? 0 : c + 1;
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(CONV_BLOCK)
    conv1d_f32(const float* x, const float* w, const float* bias, const float* state_in, float* y,
               float* state_out, int batch, int channels, int steps) {
    conv1d_segments(x, w, bias, state_in, y, state_out, batch, channels, steps);
}

// Without the activation, bf16 tiles of up to 16 steps held 72 registers (28 warps an SM) where
// 64 fit them (32 warps), as they do with it.
#if !CONV_SILU && CONV_TILE <= 16
#define CONV_BF16_BOUNDS __launch_bounds__(CONV_BLOCK, 1024 / CONV_BLOCK)
#else
#define CONV_BF16_BOUNDS __launch_bounds__(CONV_BLOCK)
#endif
extern "C" __global__ void CONV_BF16_BOUNDS conv1d_bf16(const bf16* x, const bf16* w,
                                                        const bf16* bias, const bf16* state_in,
                                                        bf16* y, bf16* state_out, int batch,
                                                        int channels, int steps) {
    conv1d_segments(x, w, bias, state_in, y, state_out, batch, channels, steps);
}

/// conv1d channel-last (see the top of the file): thread i owns channels E (i % G) .. + E - 1 of
/// G = ceil(C / E) groups, steps N (i / G % spans) .. + N - 1 of batch i / G / spans: S tiles of
/// L steps, N = S L, with E = CONV_CL_CH, L = CONV_CL_STEPS and S = CONV_CL_SEGS. The three steps
/// before its first are loaded (x, or the carry-in before t = 0); the thread whose steps end the
/// row writes the carry-out.
template <class T>
__device__ __forceinline__ void
conv1d_cl(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
          const T* __restrict__ state_in, T* __restrict__ y, T* __restrict__ state_out, int batch,
          int channels, int steps) {
    constexpr int E = CONV_CL_CH, L = CONV_CL_STEPS, S = CONV_CL_SEGS;
    using C = Chunk<T, E>;
    using V = typename C::V;
    const int groups = (channels + E - 1) / E;
    const int spans = (steps + S * L - 1) / (S * L); // per row
    const long long i = blockIdx.x * static_cast<long long>(CONV_BLOCK) + threadIdx.x;
    if (i >= static_cast<long long>(batch) * spans * groups)
        return;
    const int c0 = static_cast<int>(i % groups) * E;
    const long long rest = i / groups;
    const int t0 = static_cast<int>(rest % spans) * (S * L);
    const long long b = rest / spans;
    const long long rs = channels; // elements from one step to the next
    const T* xb = x + b * steps * rs + c0;
    T* yb = y + b * steps * rs + c0;
    const T* sb = state_in ? state_in + b * 3 * rs + c0 : nullptr;
    // Whole aligned vectors at every step: C a multiple of E and x, y (and, loaded as vectors by
    // CONV_CL_EAGER, the carry-in) aligned.
    const auto aligned = [](const T* q) { return reinterpret_cast<size_t>(q) % alignof(V) == 0; };
    const bool vec = channels % E == 0 && aligned(x) && aligned(y) &&
                     (!CONV_CL_EAGER || !sb || aligned(state_in));
    const int ce = channels - c0 < E ? channels - c0 : E; // channels of this thread
    const auto vload = [](const T* q) { return *reinterpret_cast<const V*>(q); };
    // The weights, the bias and the three steps before the first: one use at a time here; with
    // CONV_CL_EAGER all at once below (the weights and bias still here where they are not
    // aligned for vector loads).
    constexpr bool eager = CONV_CL_EAGER;
    // The E channels' 4 taps are 4 E consecutive weights: 4 vectors (and the bias one) where w
    // (and the bias) are aligned; loaded so with CONV_CL_EAGER.
    const bool wvec = eager && vec && aligned(w) && (!bias || aligned(bias));
    float wc[E][4], bc[E], p[3][E];
    if (!wvec) {
#pragma unroll
        for (int e = 0; e < E; ++e) {
            const int c = e < ce ? c0 + e : c0;
#pragma unroll
            for (int k = 0; k < 4; ++k)
                wc[e][k] = to_float(w[c * 4 + k]);
            bc[e] = bias ? to_float(bias[c]) : 0.0f;
        }
    }
    // One step's E channels (zeros past C).
    const auto load = [&](int t, float(&v)[E]) {
        if (t < 0) {
#pragma unroll
            for (int e = 0; e < E; ++e)
                v[e] = sb && e < ce ? to_float(sb[(3 + t) * rs + e]) : 0.0f;
        } else if (vec) {
            const V r = vload(xb + t * rs);
#pragma unroll
            for (int e = 0; e < E; ++e)
                v[e] = C::get(r, e);
        } else {
#pragma unroll
            for (int e = 0; e < E; ++e)
                v[e] = e < ce ? to_float(xb[t * rs + e]) : 0.0f;
        }
    };
    if (!(eager && vec)) {
#pragma unroll
        for (int k = 0; k < 3; ++k)
            load(t0 - 3 + k, p[k]);
    }
    const int n = steps - t0 < S * L ? steps - t0 : S * L; // steps of this thread
    const auto step = [&](int s, const float(&xt)[E]) {
        float ys[E];
#pragma unroll
        for (int e = 0; e < E; ++e)
            ys[e] = conv_step(bc[e], p[0][e], p[1][e], p[2][e], xt[e], wc[e]);
#pragma unroll
        for (int e = 0; e < E; ++e) {
            p[0][e] = p[1][e];
            p[1][e] = p[2][e];
            p[2][e] = xt[e];
        }
        T* yt = yb + (t0 + s) * rs;
        if (vec) {
            *reinterpret_cast<V*>(yt) = packed<C>(ys);
        } else {
#pragma unroll
            for (int e = 0; e < E; ++e)
                if (e < ce)
                    yt[e] = store_value<T>(ys[e]);
        }
    };
    // A whole tile's loads are all issued before its first step is used; with more tiles
    // (CONV_CL_SEGS) the next one's are issued into the other buffer before this one is
    // computed.
    constexpr int kBufs = S > 1 ? 2 : 1;
    V raw[kBufs][L];
    const auto load_tile = [&](V(&r)[L], int ts) {
#pragma unroll
        for (int s = 0; s < L; ++s)
            r[s] = vload(xb + (ts + s) * rs);
    };
    if (eager && vec) {
        // Every load the first tile needs is in flight before any is used: the tile, the three
        // steps before it, the weights and the bias. With a cold L2 each use that waits is a
        // DRAM round trip, and a short row has no other work to hide one behind: loaded and
        // converted one after another (as above without CONV_CL_EAGER), the three steps before
        // the tile alone are three round trips before its first step.
        if (steps - t0 >= L) // the first tile is whole
            load_tile(raw[0], t0);
        V h[3];
#pragma unroll
        for (int k = 0; k < 3; ++k) {
            const int t = t0 - 3 + k;
            const T* q = t >= 0 ? xb + t * rs : sb ? sb + (3 + t) * rs : nullptr;
            h[k] = q ? vload(q) : V{};
        }
        if (wvec) {
            V wv[4], bv{};
#pragma unroll
            for (int j = 0; j < 4; ++j)
                wv[j] = vload(w + c0 * 4 + j * E);
            if (bias)
                bv = vload(bias + c0);
#pragma unroll
            for (int e = 0; e < E; ++e) {
#pragma unroll
                for (int k = 0; k < 4; ++k)
                    wc[e][k] = C::get(wv[(e * 4 + k) / E], (e * 4 + k) % E);
                bc[e] = C::get(bv, e);
            }
        }
#pragma unroll
        for (int e = 0; e < E; ++e)
#pragma unroll
            for (int k = 0; k < 3; ++k)
                p[k][e] = C::get(h[k], e);
    }
    // The thread's tiles in turn (with CONV_CL_EAGER the first one's loads were issued above).
#pragma unroll
    for (int k = 0; k < S; ++k) {
        const int m = S == 1 ? n : n - k * L < L ? n - k * L : L; // steps of tile k
        if (k > 0 && m <= 0)
            break;
        if (m == L && vec) {
            if (!eager && k == 0)
                load_tile(raw[0], t0);
            if (S > 1 && n - k * L >= 2 * L) // the next tile is whole
                load_tile(raw[(k + 1) % kBufs], t0 + (k + 1) * L);
#pragma unroll
            for (int s = 0; s < L; ++s) {
                float xt[E];
#pragma unroll
                for (int e = 0; e < E; ++e)
                    xt[e] = C::get(raw[k % kBufs][s], e);
                step(k * L + s, xt);
            }
        } else {
            for (int s = 0; s < m; ++s) {
                float xt[E];
                load(t0 + k * L + s, xt);
                step(k * L + s, xt);
            }
        }
    }
    // The carry-out, steps T - 3 .. T - 1 as they came (from the carry-in where T < 3).
    if (state_out && t0 + n == steps)
#pragma unroll
        for (int k = 0; k < 3; ++k) {
            const int t = steps - 3 + k;
#pragma unroll
            for (int e = 0; e < E; ++e)
                if (e < ce)
                    state_out[b * 3 * rs + k * rs + c0 + e] =
                        t >= 0 ? xb[t * rs + e] : (sb ? sb[(3 + t) * rs + e] : from_float<T>(0.0f));
        }
}

extern "C" __global__ void __launch_bounds__(CONV_BLOCK)
    conv1d_cl_f32(const float* x, const float* w, const float* bias, const float* state_in,
                  float* y, float* state_out, int batch, int channels, int steps) {
    conv1d_cl(x, w, bias, state_in, y, state_out, batch, channels, steps);
}

extern "C" __global__ void __launch_bounds__(CONV_BLOCK)
    conv1d_cl_bf16(const bf16* x, const bf16* w, const bf16* bias, const bf16* state_in, bf16* y,
                   bf16* state_out, int batch, int channels, int steps) {
    conv1d_cl(x, w, bias, state_in, y, state_out, batch, channels, steps);
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
