// RMS normalization over the last axis: y[r, i] = x[r, i] / sqrt(mean_i(x[r, :]^2) + eps) * w[i]
// for rows x n, fp32 or bf16 in and out, fp32 accumulation. One block per row, or with
// RMS_WARP_ROWS=k one warp per k rows (RMS_BLOCK / 32 * k rows per block); grid-stride over
// rows, so any grid gives the same result (the contract's: ceil(rows / rows per block)).
//
// Numerics: the row is cut into chunks of 16 bytes (4 fp32 or 8 bf16 elements); chunk c adds
// its squares, in order, into partial sum c mod RMS_WIDTH; the RMS_WIDTH partials are then
// summed by a fixed butterfly tree. RMS_WIDTH is the reduction's width and part of the
// numerics. RMS_BLOCK and RMS_WARP_ROWS (the threads of a row) only decide which thread holds
// which partials, and the 16-byte loads only how a chunk is read: every block width, both row
// groups and every load path give the same bits, and so do RMS_N (without fast-math options,
// which approximate the division by the width), RMS_ONE_ROW, RMS_CACHE, RMS_UNROLL and RMS_HINT
// (which rows stay in registers, how many loads are in flight, L2 hints). Another RMS_WIDTH
// regroups the sum of a row of more chunks than the narrower width has partials, and changes the
// bits; a row of at most that many chunks puts chunk c in partial c at either width and keeps
// them.
#include "common.cuh"
#include "pdl.cuh"

#ifndef RMS_BLOCK
#define RMS_BLOCK 256 // threads per block; must divide RMS_WIDTH
#endif
#ifndef RMS_WIDTH
#define RMS_WIDTH 1024 // partial sums of the reduction: part of the numerics; a multiple of 32
#endif
#ifndef RMS_CACHE
#define RMS_CACHE 8 // 16-byte chunks per thread kept in registers between the two passes: rows
                    // up to RMS_CACHE chunks per thread of the row are read from memory once;
                    // 0: no row is kept, each is read twice (the second time mostly from L2)
#endif

#ifndef RMS_UNROLL
#define RMS_UNROLL 0 // k >= 1: a block's row that is not kept in registers is summed in groups
                     // of k chunks per thread (rounded up to a multiple of the partials per
                     // thread) whose loads do not wait for each other's sums, so several are in
                     // flight at once (how many, ptxas decides within its register budget).
                     // 0: chunk by chunk. Warp rows read theirs their own way.
#endif

#ifndef RMS_HINT
#define RMS_HINT 0 // 1 (with RMS_UNROLL): that row's first read asks L2 to keep its lines
                   // (evict_last) for the second, which lets them go (evict_first); the weight
                   // is read evict_last
#endif

#ifndef RMS_WARP_ROWS
#define RMS_WARP_ROWS 0 // k >= 1: a warp owns k rows at a time and reduces each with shuffles
                        // alone (no shared memory, no block barrier): for narrow rows, many per
                        // block; rows that fit the warp's registers are all loaded before any is
                        // reduced, and each weight chunk once for the k rows
#endif

#ifndef RMS_W_EARLY
#define RMS_W_EARLY 0 // 1: a block's cached row loads the weight's chunks with its own, before
                      // the reduction, so no memory round trip follows it (a decode row's
                      // latency); costs RMS_CACHE more 16-byte registers. Warp rows ignore it.
#endif

#ifndef RMS_N
#define RMS_N 0 // > 0: the row width the launches are expected to have, compiled in as a constant
                // (chunk counts, loop bounds and the width's part of the 16-byte test become
                // constants, which shortens a decode row's latency); a launch at another width
                // takes the run-time path. The kernel then holds both.
#endif

#ifndef RMS_ONE_ROW
#define RMS_ONE_ROW 0 // 1: with RMS_N, a launch of a block per row (the grid covers the rows)
                      // whose row is a whole number k <= RMS_CACHE of chunks per thread,
                      // 16-byte aligned, runs each row as straight-line code: no row loop and no
                      // test a thread's chunks or warps could fail (a decode row's latency).
                      // Other launches, and a dtype whose row does not divide so, take the
                      // general path. Same bits.
#endif

static_assert(RMS_N >= 0, "RMS_N: a row width, or 0 for any");
static_assert(RMS_WARP_ROWS || RMS_WIDTH % RMS_BLOCK == 0, "RMS_BLOCK must divide RMS_WIDTH");
static_assert(RMS_BLOCK % 32 == 0, "RMS_BLOCK: whole warps (the sums shuffle over full warps)");
static_assert(RMS_WIDTH % 32 == 0 && RMS_WIDTH <= 1024, "RMS_WIDTH: a multiple of 32, <= 1024");
static_assert(RMS_CACHE >= 0 && RMS_UNROLL >= 0, "RMS_CACHE, RMS_UNROLL: counts, 0 for none");
static_assert(RMS_CACHE > 0 || !RMS_WARP_ROWS, "RMS_WARP_ROWS keeps its rows: RMS_CACHE >= 1");
static_assert(RMS_HINT == 0 || (RMS_HINT == 1 && RMS_UNROLL > 0),
              "RMS_HINT: 0, or 1 with RMS_UNROLL (it hints the reads of that path)");
static_assert(!RMS_WARP_ROWS || (!RMS_UNROLL && !RMS_HINT),
              "RMS_UNROLL and RMS_HINT are the block form's: warp rows read their own way");

/// A row's scale, 1 / sqrt(total / n + eps), from its sum of squares: exact division and square
/// root, each step rounded once (__fadd_rn keeps a power-of-two width's division, which the
/// compiler turns into a multiplication when RMS_N makes it a constant, from fusing with + eps).
__device__ __forceinline__ float inv_rms(float total, int n, float eps) {
    return 1.0f / sqrtf(__fadd_rn(total / static_cast<float>(n), eps));
}

template <class T> struct Vec16; // 16 bytes of T
template <> struct Vec16<float> {
    float4 v;
    static constexpr int kCount = 4;
    __device__ __forceinline__ float get(int i) const {
        return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
    }
    /// x * inv * w element by element, each product rounded once.
    __device__ __forceinline__ static Vec16 scaled(const Vec16& x, float inv, const Vec16& w) {
        Vec16 out;
#pragma unroll
        for (int i = 0; i < kCount; ++i)
            (i == 0 ? out.v.x : i == 1 ? out.v.y : i == 2 ? out.v.z : out.v.w) =
                __fmul_rn(__fmul_rn(x.get(i), inv), w.get(i));
        return out;
    }
};
template <> struct Vec16<bf16> {
    uint4 v;
    static constexpr int kCount = 8;
    __device__ __forceinline__ float get(int i) const {
        const unsigned word = i < 2 ? v.x : i < 4 ? v.y : i < 6 ? v.z : v.w;
        return __uint_as_float((i & 1) ? (word & 0xffff0000u) : (word << 16));
    }
    /// x * inv * w element by element, each product rounded once in fp32 and then to bf16, two
    /// at a time in one hardware conversion with from_float's bits: both round to nearest even,
    /// and a NaN product is the GPU's one fp32 NaN, 0x7fffffff, which both turn into 0x7fff (the
    /// GPU bit test's NaN and inf rows compare the two). No per-element NaN test: it cost 2 - 6 %
    /// at decode rows on the H200. Before sm_80, which lacks the conversion, from_float.
    __device__ __forceinline__ static Vec16 scaled(const Vec16& x, float inv, const Vec16& w) {
        Vec16 out;
#pragma unroll
        for (int p = 0; p < kCount / 2; ++p) {
            const float lo = __fmul_rn(__fmul_rn(x.get(2 * p), inv), w.get(2 * p));
            const float hi = __fmul_rn(__fmul_rn(x.get(2 * p + 1), inv), w.get(2 * p + 1));
            unsigned& word = p == 0 ? out.v.x : p == 1 ? out.v.y : p == 2 ? out.v.z : out.v.w;
#if __CUDA_ARCH__ >= 800
            asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(word) : "f"(hi), "f"(lo));
#else
            word = unsigned(from_float<bf16>(lo).bits) |
                   (unsigned(from_float<bf16>(hi).bits) << 16);
#endif
        }
        return out;
    }
};

/// The warp sums of K values per lane (K a power of two, at most 32): lane l returns
/// warp_sum(v[l / (32 / K)]) bit for bit. In each of the first log2(K) levels of warp_sum's
/// butterfly a lane keeps half of its values (the upper half where its lane bit of
/// that level is set) and sends the other half to its partner, which keeps those; every addition
/// takes the two operands warp_sum's would, in the same order. Then the last levels, as
/// lane_sum: K - 1 + log2(32 / K) shuffles where K calls of warp_sum take 5 K.
template <int K> __device__ __forceinline__ float warp_sums(float (&v)[K]) {
    static_assert(K >= 1 && K <= 32 && (K & (K - 1)) == 0, "K: a power of two, at most 32");
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int m = K, offset = 16; m > 1; m >>= 1, offset >>= 1) {
        const bool upper = (lane & offset) != 0;
#pragma unroll
        for (int j = 0; j < m / 2; ++j) {
            const float keep = upper ? v[j + m / 2] : v[j];
            const float send = upper ? v[j] : v[j + m / 2];
            v[j] = keep + __shfl_xor_sync(0xffffffffu, send, offset);
        }
    }
    return lane_sum<32 / K>(v[0]);
}

/// A 16-byte load; with RMS_HINT under an L2 eviction policy, evict_last (kKeep) or evict_first.
/// Before sm_80, which lacks the policies, a plain load. Not volatile: a volatile load made NVVM
/// drop the read-only path (ld.global.nc) from the kernel's other loads and rescheduled the
/// hinted loops; in every tuned define set the SASS issues PDL's wait (ACQBULK) before any load.
template <bool kKeep, class V> __device__ __forceinline__ V load_hinted(const V* p) {
#if __CUDA_ARCH__ >= 800
    if constexpr (RMS_HINT != 0) {
        unsigned long long policy;
        uint4 r;
        if constexpr (kKeep) {
            asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
            asm("ld.global.nc.L1::evict_last.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                : "l"(p), "l"(policy));
        } else {
            asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
            asm("ld.global.nc.L1::evict_first.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                : "l"(p), "l"(policy));
        }
        V v;
        memcpy(&v, &r, sizeof v);
        return v;
    }
#endif
    return *p;
}

/// u rounded up to a multiple of slots (u, slots >= 1).
__device__ constexpr int group_of(int u, int slots) { return (u + slots - 1) / slots * slots; }

/// `a` plus the squares of a loaded chunk, in order.
template <class T> __device__ __forceinline__ float add_squares(float a, const Vec16<T>& v) {
#pragma unroll
    for (int i = 0; i < Vec16<T>::kCount; ++i)
        a = __fmaf_rn(v.get(i), v.get(i), a);
    return a;
}

/// `a` plus the squares of chunk c of the row xr, in order: one 16-byte load (vec), else element
/// by element (the same bits).
template <class T>
__device__ __forceinline__ float add_squares(float a, const T* __restrict__ xr, int c, int n,
                                             bool vec) {
    constexpr int kChunk = Vec16<T>::kCount;
    if (vec) {
        a = add_squares(a, Vec16<T>{reinterpret_cast<const decltype(Vec16<T>::v)*>(xr)[c]});
    } else {
        for (int i = c * kChunk; i < min(n, (c + 1) * kChunk); ++i) {
            const float v = to_float(xr[i]);
            a = __fmaf_rn(v, v, a);
        }
    }
    return a;
}

/// A warp row's sum of squares: virtual warp s (partials 32 s .. 32 s + 31, see below) is acc[s]
/// over the lanes; lane s keeps its sum, and one more warp sum adds them as a block's warp 0
/// would.
template <int kSlots>
__device__ __forceinline__ float warp_row_total(const float (&acc)[kSlots], int chunks, int lane) {
    float mine = 0.0f;
#pragma unroll
    for (int s = 0; s < kSlots; ++s) {
        const float v = s * 32 < chunks ? warp_sum(acc[s]) : 0.0f;
        mine = lane == s ? v : mine;
    }
    return warp_sum(mine);
}

/// RMS_WARP_ROWS rows from row0 on (those below `rows`), each cached in its warp's registers:
/// every row's chunks are loaded before any row is reduced, and each weight chunk once for all.
/// Chunk c adds into partial c mod RMS_WIDTH as in rms_norm_rows: the same bits.
template <class T>
__device__ __forceinline__ void warp_rows_cached(const T* __restrict__ x, const T* __restrict__ w,
                                                 T* __restrict__ y, int row0, int rows, int n,
                                                 int chunks, float eps, int lane) {
    // Partials a lane can hold: RMS_WIDTH / 32, of which a row of RMS_CACHE chunks per lane
    // fills the first RMS_CACHE; the others are zero and their warp sums 0, so they are left out.
    constexpr int kSlots = RMS_CACHE < RMS_WIDTH / 32 ? RMS_CACHE : RMS_WIDTH / 32;
    using V = decltype(Vec16<T>::v);
    Vec16<T> cache[RMS_WARP_ROWS][RMS_CACHE];
#pragma unroll
    for (int j = 0; j < RMS_WARP_ROWS; ++j) {
        const V* xr = reinterpret_cast<const V*>(x + static_cast<long long>(row0 + j) * n);
#pragma unroll
        for (int k = 0; k < RMS_CACHE; ++k) {
            const int c = lane + k * 32;
            if (row0 + j < rows && c < chunks)
                cache[j][k].v = xr[c];
        }
    }
    float inv[RMS_WARP_ROWS] = {};
#pragma unroll
    for (int j = 0; j < RMS_WARP_ROWS; ++j) {
        if (row0 + j >= rows) // the same for the whole warp
            break;
        float acc[kSlots];
#pragma unroll
        for (int s = 0; s < kSlots; ++s)
            acc[s] = 0.0f;
#pragma unroll
        for (int k = 0; k < RMS_CACHE; ++k) {
            if (lane + k * 32 < chunks) {
                acc[k % kSlots] = add_squares(acc[k % kSlots], cache[j][k]);
            }
        }
        inv[j] = inv_rms(warp_row_total(acc, chunks, lane), n, eps);
    }
#pragma unroll
    for (int k = 0; k < RMS_CACHE; ++k) {
        const int c = lane + k * 32;
        if (c < chunks) {
            const Vec16<T> wv{reinterpret_cast<const V*>(w)[c]};
#pragma unroll
            for (int j = 0; j < RMS_WARP_ROWS; ++j) {
                if (row0 + j < rows) {
                    reinterpret_cast<V*>(y + static_cast<long long>(row0 + j) * n)[c] =
                        Vec16<T>::scaled(cache[j][k], inv[j], wv).v;
                }
            }
        }
    }
}

/// A compiled-in width kN (> 0) whose data fill at most 8 of the RMS_WIDTH / 32 virtual warps
/// (see rms_norm_rows): live_warps of them, summed over live_lanes (a power of two) lanes;
/// else both 0.
template <class T, int kN> __device__ constexpr int live_warps() {
    const int with_data = ((kN + Vec16<T>::kCount - 1) / Vec16<T>::kCount + 31) / 32;
    return kN > 0 ? (with_data < RMS_WIDTH / 32 ? with_data : RMS_WIDTH / 32) : 0;
}
template <class T, int kN> __device__ constexpr int live_lanes() {
    constexpr int live = live_warps<T, kN>();
    return live == 0 || live > 8 ? 0 : live > 4 ? 8 : live > 2 ? 4 : live > 1 ? 2 : 1;
}

/// A block row's total by the fixed tree from each thread's kSlots partials (partial j =
/// threadIdx.x + s * RMS_BLOCK; see rms_norm_rows): every virtual warp's warp sum into scratch,
/// then their sum. Slots below kFull hold data in every warp and those from kEmpty on in none
/// (known at compile time); the others are tested against `chunks`. `sync_first`: scratch may
/// still be read for a previous row.
template <int kSlots, int kLive, int kLanes, int kFull, int kEmpty>
__device__ __forceinline__ float block_total(float (&acc)[kSlots], int chunks, bool sync_first,
                                             float* scratch, float& total_shared, int lane,
                                             int warp) {
    if (sync_first)
        __syncthreads();
    if constexpr (kSlots == 2 || kSlots == 4) {
        // All kSlots virtual warps of this warp at once: lane l holds virtual warp
        // l / (32 / kSlots)'s sum (those without data sum zeros to +0, as skipped).
        // 2 - 4 slots (blocks of 256 - 512 threads): up to 1.06x faster on the H200
        // at decode and short rows; at 8 and 16 the skipped empty virtual warps of a
        // narrow row and the extra registers made it slower (0.90x at bf16
        // 2048 x 1024 B64), and one slot is one warp_sum either way.
        const float v = warp_sums(acc);
        if (lane % (32 / kSlots) == 0)
            scratch[warp + lane / (32 / kSlots) * (RMS_BLOCK / 32)] = v;
    } else {
#pragma unroll
        for (int s = 0; s < kSlots; ++s) {
            const int first = (warp + s * (RMS_BLOCK / 32)) * 32; // its partial 0
            const bool data = s < kFull || (s < kEmpty && first < chunks);
            const float v = data ? warp_sum(acc[s]) : 0.0f;
            if (lane == 0)
                scratch[warp + s * (RMS_BLOCK / 32)] = v;
        }
    }
    __syncthreads();
    if constexpr (kLanes > 0) {
        // Every group of kLanes lanes sums the virtual warps that hold data; the others hold
        // zeros, whose additions the full tree would make (x + 0 is x: the partials are never
        // -0), so lane 0's sum is the full tree's, and no barrier has to publish it.
        const int j = lane % kLanes;
        return lane_sum<kLanes>(j < kLive ? scratch[j] : 0.0f);
    } else {
        if (warp == 0) {
            const float v = warp_sum(lane < RMS_WIDTH / 32 ? scratch[lane] : 0.0f);
            if (lane == 0)
                total_shared = v;
        }
        __syncthreads();
        return total_shared;
    }
}

template <class T, int kN>
__device__ __forceinline__ void rms_norm_rows(const T* __restrict__ x, const T* __restrict__ w,
                                              T* __restrict__ y, int rows, int n, float eps) {
    constexpr int kChunk = Vec16<T>::kCount;
    constexpr int kThreads = RMS_WARP_ROWS ? 32 : RMS_BLOCK; // the threads of one row
    constexpr int kRows = RMS_BLOCK / kThreads;              // rows per block
    constexpr int kSlots = RMS_WIDTH / kThreads;             // partials per thread
    __shared__ float scratch[RMS_WARP_ROWS ? 1 : RMS_WIDTH / 32];
    __shared__ float total_shared;
    const int chunks = (n + kChunk - 1) / kChunk;
    constexpr int kLanes = live_lanes<T, kN>();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int tid = RMS_WARP_ROWS ? lane : threadIdx.x; // the thread's place in its row
    for (int row = blockIdx.x * kRows + (RMS_WARP_ROWS ? warp : 0); row < rows;
         row += gridDim.x * kRows) {
        const T* xr = x + static_cast<long long>(row) * n;
        T* yr = y + static_cast<long long>(row) * n;
        // The 16-byte path needs whole, aligned chunks; otherwise read element by element in
        // the same order (same bits, slower).
        const bool vec = n % kChunk == 0 && (reinterpret_cast<size_t>(xr) & 15) == 0 &&
                         (reinterpret_cast<size_t>(yr) & 15) == 0 &&
                         (reinterpret_cast<size_t>(w) & 15) == 0;
        float acc[kSlots];
#pragma unroll
        for (int s = 0; s < kSlots; ++s)
            acc[s] = 0.0f;
        // A block's row that fits RMS_CACHE chunks per thread stays in registers for the apply
        // pass (a warp's, in warp_rows_cached).
        const bool cached =
            RMS_CACHE > 0 && !RMS_WARP_ROWS && vec && chunks <= RMS_CACHE * kThreads;
        float total = 0.0f;
        using V = decltype(Vec16<T>::v);
        Vec16<T> cache[RMS_CACHE > 0 ? RMS_CACHE : 1];
        Vec16<T> wcache[RMS_W_EARLY && RMS_CACHE > 0 ? RMS_CACHE : 1];
        if (cached) {
#pragma unroll
            for (int k = 0; k < RMS_CACHE; ++k) {
                const int c = tid + k * kThreads;
                if (c < chunks) {
                    cache[k].v = reinterpret_cast<const V*>(xr)[c];
                    if (RMS_W_EARLY)
                        wcache[RMS_W_EARLY ? k : 0].v = reinterpret_cast<const V*>(w)[c];
                    acc[k % kSlots] = add_squares(acc[k % kSlots], cache[k]);
                }
            }
        } else if (RMS_WARP_ROWS) {
            // Rounds of 32 x kSlots chunks, so each slot is fixed: the rotating slot below would
            // cost 2 x kSlots selects a chunk with a warp's 32 slots.
            for (int base = lane; base < chunks; base += 32 * kSlots) {
#pragma unroll
                for (int s = 0; s < kSlots; ++s)
                    if (base + 32 * s < chunks)
                        acc[s] = add_squares(acc[s], xr, base + 32 * s, n, vec);
            }
            total = warp_row_total(acc, chunks, lane);
        } else if (RMS_UNROLL > 0 && vec) {
            // Chunk tid + k * kThreads adds into slot k mod kSlots, as below; a group holds a
            // multiple of kSlots chunks per thread, so chunk j of a group goes to slot
            // j mod kSlots. Chunks past the row load as zeros, whose squares leave a partial as
            // it is (a partial is never -0).
            constexpr int kGroup = group_of(RMS_UNROLL > 0 ? RMS_UNROLL : 1, kSlots);
            const V* xv = reinterpret_cast<const V*>(xr);
            for (int c0 = tid; c0 < chunks; c0 += kGroup * kThreads) {
                Vec16<T> v[kGroup];
#pragma unroll
                for (int j = 0; j < kGroup; ++j) {
                    const int c = c0 + j * kThreads;
                    v[j].v = c < chunks ? load_hinted<true>(xv + c) : V{};
                }
#pragma unroll
                for (int j = 0; j < kGroup; ++j)
                    acc[j % kSlots] = add_squares(acc[j % kSlots], v[j]);
            }
        } else {
            int slot = 0;
            for (int c = tid; c < chunks; c += kThreads) {
                float a = 0.0f;
#pragma unroll
                for (int s = 0; s < kSlots; ++s)
                    a = s == slot ? acc[s] : a;
                a = add_squares(a, xr, c, n, vec);
#pragma unroll
                for (int s = 0; s < kSlots; ++s)
                    acc[s] = s == slot ? a : acc[s];
                slot = slot + 1 == kSlots ? 0 : slot + 1;
            }
        }
        // Partial j = tid + s * kThreads sits in lane j % 32 of "virtual warp" j / 32, exactly
        // where a block of RMS_WIDTH threads would hold it. Partial j holds chunks j,
        // j + RMS_WIDTH, ...: a virtual warp from chunk `chunks` on holds only zeros, whose sum
        // (0) needs no shuffles (a narrow row's reduction skips most of the tree, same bits).
        // A warp row has its total already.
        if constexpr (!RMS_WARP_ROWS)
            total = block_total<kSlots, live_warps<T, kN>(), kLanes, 0, kSlots>(
                acc, chunks, kLanes == 0 || row != blockIdx.x, scratch, total_shared, lane, warp);
        const float inv = inv_rms(total, n, eps);
        if (cached) {
#pragma unroll
            for (int k = 0; k < RMS_CACHE; ++k) {
                const int c = tid + k * kThreads;
                if (c < chunks) {
                    const Vec16<T> wv = RMS_W_EARLY ? wcache[RMS_W_EARLY ? k : 0]
                                                    : Vec16<T>{reinterpret_cast<const V*>(w)[c]};
                    reinterpret_cast<V*>(yr)[c] = Vec16<T>::scaled(cache[k], inv, wv).v;
                }
            }
        } else if (vec) {
            for (int c = tid; c < chunks; c += kThreads) {
                const Vec16<T> xv{load_hinted<false>(reinterpret_cast<const V*>(xr) + c)};
                const Vec16<T> wv{load_hinted<true>(reinterpret_cast<const V*>(w) + c)};
                reinterpret_cast<V*>(yr)[c] = Vec16<T>::scaled(xv, inv, wv).v;
            }
        } else {
            for (int i = tid; i < n; i += kThreads)
                yr[i] = from_float<T>(__fmul_rn(__fmul_rn(to_float(xr[i]), inv), to_float(w[i])));
        }
    }
}

/// Whether RMS_ONE_ROW applies to a row of T at the compiled-in width: a block form whose row is
/// k <= RMS_CACHE whole chunks per thread.
template <class T> __device__ constexpr bool one_row_fits() {
    constexpr int kChunk = Vec16<T>::kCount;
    return RMS_ONE_ROW && RMS_N > 0 && !RMS_WARP_ROWS && RMS_N % (kChunk * RMS_BLOCK) == 0 &&
           RMS_N / (kChunk * RMS_BLOCK) <= RMS_CACHE;
}

/// RMS_ONE_ROW's row `row` of kN = RMS_N elements (16-byte aligned, one_row_fits): rms_norm_rows'
/// cached path and tree, each thread's kPer chunks in its registers, with every test a thread
/// or warp could fail decided at compile time and no row loop. The same bits.
template <class T, int kN>
__device__ __forceinline__ void rms_norm_one_row(const T* __restrict__ x, const T* __restrict__ w,
                                                 T* __restrict__ y, int row, float eps) {
    using V = decltype(Vec16<T>::v);
    constexpr int kChunk = Vec16<T>::kCount;
    constexpr int kPer = kN / kChunk / RMS_BLOCK; // chunks per thread: every thread has them
    constexpr int kSlots = RMS_WIDTH / RMS_BLOCK;
    constexpr int kFull = kPer < kSlots ? kPer : kSlots; // slots with data, in every warp
    __shared__ float scratch[RMS_WIDTH / 32];
    __shared__ float total_shared;
    const int tid = threadIdx.x;
    const V* xr = reinterpret_cast<const V*>(x + static_cast<long long>(row) * kN);
    V* yr = reinterpret_cast<V*>(y + static_cast<long long>(row) * kN);
    const V* wr = reinterpret_cast<const V*>(w);
    float acc[kSlots];
#pragma unroll
    for (int s = 0; s < kSlots; ++s)
        acc[s] = 0.0f;
    Vec16<T> cache[kPer];
    Vec16<T> wcache[RMS_W_EARLY ? kPer : 1];
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
        cache[k].v = xr[tid + k * RMS_BLOCK];
        if (RMS_W_EARLY)
            wcache[RMS_W_EARLY ? k : 0].v = wr[tid + k * RMS_BLOCK];
        acc[k % kSlots] = add_squares(acc[k % kSlots], cache[k]);
    }
    const float total = block_total<kSlots, live_warps<T, kN>(), live_lanes<T, kN>(), kFull, kFull>(
        acc, kN / kChunk, false, scratch, total_shared, tid & 31, tid >> 5);
    const float inv = inv_rms(total, kN, eps);
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
        const Vec16<T> wv =
            RMS_W_EARLY ? wcache[RMS_W_EARLY ? k : 0] : Vec16<T>{wr[tid + k * RMS_BLOCK]};
        yr[tid + k * RMS_BLOCK] = Vec16<T>::scaled(cache[k], inv, wv).v;
    }
}

/// All rows: with RMS_WARP_ROWS, in groups of that many per warp where a row fits the warp's
/// registers (warp_rows_cached); else one row per block or warp (rms_norm_rows). Both stride
/// over the rows whatever the grid.
template <class T, int kN = 0>
__device__ __forceinline__ void rms_norm_all(const T* __restrict__ x, const T* __restrict__ w,
                                             T* __restrict__ y, int rows, int n, float eps) {
    if constexpr (RMS_WARP_ROWS > 0) {
        constexpr int kGroups = RMS_BLOCK / 32; // row groups per block
        constexpr int kChunk = Vec16<T>::kCount;
        const int chunks = (n + kChunk - 1) / kChunk;
        // rms_norm_rows' 16-byte condition, for every row when it holds for the first.
        if (n % kChunk == 0 && (reinterpret_cast<size_t>(x) & 15) == 0 &&
            (reinterpret_cast<size_t>(y) & 15) == 0 && (reinterpret_cast<size_t>(w) & 15) == 0 &&
            chunks <= RMS_CACHE * 32) {
            for (int row0 = (blockIdx.x * kGroups + (threadIdx.x >> 5)) * RMS_WARP_ROWS;
                 row0 < rows; row0 += gridDim.x * kGroups * RMS_WARP_ROWS)
                warp_rows_cached(x, w, y, row0, rows, n, chunks, eps, threadIdx.x & 31);
            return;
        }
    }
    rms_norm_rows<T, kN>(x, w, y, rows, n, eps);
}

/// A kernel's body: rms_norm_all inlined with the width the constant RMS_N where the launch's
/// width is RMS_N (with RMS_ONE_ROW, rms_norm_one_row where it applies), else with the run-time
/// width.
template <class T>
__device__ __forceinline__ void rms_norm_kernel(const T* __restrict__ x, const T* __restrict__ w,
                                                T* __restrict__ y, int rows, int n, float eps) {
    pdl_chain_step();
    if (RMS_N > 0 && n == RMS_N) {
        if constexpr (one_row_fits<T>()) {
            if (gridDim.x >= rows && ((reinterpret_cast<size_t>(x) | reinterpret_cast<size_t>(y) |
                                       reinterpret_cast<size_t>(w)) & 15) == 0) {
                if (blockIdx.x < rows)
                    rms_norm_one_row<T, RMS_N>(x, w, y, blockIdx.x, eps);
                return;
            }
        }
        rms_norm_all<T, RMS_N>(x, w, y, rows, RMS_N, eps);
    } else {
        rms_norm_all(x, w, y, rows, n, eps);
    }
}

extern "C" __global__ void __launch_bounds__(RMS_BLOCK)
    rms_norm_f32(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y,
                 int rows, int n, float eps) {
    rms_norm_kernel(x, w, y, rows, n, eps);
}

extern "C" __global__ void __launch_bounds__(RMS_BLOCK)
    rms_norm_bf16(const bf16* __restrict__ x, const bf16* __restrict__ w, bf16* __restrict__ y,
                  int rows, int n, float eps) {
    rms_norm_kernel(x, w, y, rows, n, eps);
}
