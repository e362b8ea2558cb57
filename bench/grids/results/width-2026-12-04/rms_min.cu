// Diagnostic only (not kjit's kernel): the smallest rms_norm for a row of exactly RMS_BLOCK
// 16-byte chunks, one row per block, one chunk per thread, the same tree as kernel_src's for
// such a row. RMS_MIN bit 0: the exact 1 / sqrt (else rsqrtf); bit 1: the bf16 NaN test;
// bit 2: the 16-byte alignment test with an element-wise fallback; bit 3: a grid-stride loop;
// bit 4: no row loop at all; bit 5: the division by RMS_N, a constant; bit 6: no test of the
// thread's chunk against the row (every thread has one).
#include "common.cuh"
#include "pdl.cuh"
#ifndef RMS_MIN
#define RMS_MIN 3
#endif
#ifndef RMS_BLOCK
#define RMS_BLOCK 128
#endif
#ifndef RMS_CACHE
#define RMS_CACHE 1
#endif
#ifndef RMS_N
#define RMS_N 0
#endif
#ifndef RMS_WIDTH
#define RMS_WIDTH 1024
#endif
#ifndef RMS_W_EARLY
#define RMS_W_EARLY 1
#endif
static_assert(RMS_CACHE >= 1 && RMS_N >= 0 && RMS_WIDTH >= RMS_BLOCK && RMS_W_EARLY >= 0, "");

template <class T> struct Vec16;
template <> struct Vec16<float> {
    float4 v;
    static constexpr int kCount = 4;
    __device__ __forceinline__ float get(int i) const {
        return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
    }
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
    __device__ __forceinline__ static Vec16 scaled(const Vec16& x, float inv, const Vec16& w) {
        Vec16 out;
#pragma unroll
        for (int p = 0; p < kCount / 2; ++p) {
            const float lo = __fmul_rn(__fmul_rn(x.get(2 * p), inv), w.get(2 * p));
            const float hi = __fmul_rn(__fmul_rn(x.get(2 * p + 1), inv), w.get(2 * p + 1));
            unsigned& word = p == 0 ? out.v.x : p == 1 ? out.v.y : p == 2 ? out.v.z : out.v.w;
            asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(word) : "f"(hi), "f"(lo));
            if ((RMS_MIN & 2) && (lo != lo || hi != hi))
                word = unsigned(from_float<bf16>(lo).bits) |
                       (unsigned(from_float<bf16>(hi).bits) << 16);
        }
        return out;
    }
};

template <class T>
__device__ __forceinline__ void body(const T* __restrict__ x, const T* __restrict__ w,
                                     T* __restrict__ y, int rows, int n, float eps) {
    using V = decltype(Vec16<T>::v);
    constexpr int kChunk = Vec16<T>::kCount;
    __shared__ float scratch[RMS_BLOCK / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int chunks = n / kChunk;
    if ((RMS_MIN & 16) && blockIdx.x >= rows)
        return;
    for (int row = blockIdx.x; (RMS_MIN & 16) || row < rows; row += (RMS_MIN & 8) ? gridDim.x : rows) {
        const T* xr = x + static_cast<long long>(row) * n;
        T* yr = y + static_cast<long long>(row) * n;
        if ((RMS_MIN & 4) && !(n % kChunk == 0 && (reinterpret_cast<size_t>(xr) & 15) == 0 &&
                               (reinterpret_cast<size_t>(yr) & 15) == 0 &&
                               (reinterpret_cast<size_t>(w) & 15) == 0)) {
            float a = 0.0f; // not the same bits: a diagnostic's fallback
            for (int i = threadIdx.x; i < n; i += RMS_BLOCK)
                a = __fmaf_rn(to_float(xr[i]), to_float(xr[i]), a);
            a = warp_sum(a);
            if (lane == 0) scratch[warp] = a;
            __syncthreads();
            const float t = lane_sum<RMS_BLOCK / 32>(scratch[lane % (RMS_BLOCK / 32)]);
            const float inv = 1.0f / sqrtf(t / n + eps);
            for (int i = threadIdx.x; i < n; i += RMS_BLOCK)
                yr[i] = from_float<T>(to_float(xr[i]) * inv * to_float(w[i]));
            continue;
        }
        const int c = threadIdx.x;
        Vec16<T> xv{}, wv{};
        float a = 0.0f;
        if ((RMS_MIN & 64) || c < chunks) {
            xv.v = reinterpret_cast<const V*>(xr)[c];
            wv.v = reinterpret_cast<const V*>(w)[c];
#pragma unroll
            for (int i = 0; i < kChunk; ++i)
                a = __fmaf_rn(xv.get(i), xv.get(i), a);
        }
        a = warp_sum(a);
        if (lane == 0)
            scratch[warp] = a;
        __syncthreads();
        const float total = lane_sum<RMS_BLOCK / 32>(scratch[lane % (RMS_BLOCK / 32)]);
        const float nf = (RMS_MIN & 32) ? static_cast<float>(RMS_N) : static_cast<float>(n);
        const float inv = (RMS_MIN & 1) ? 1.0f / sqrtf(__fadd_rn(total / nf, eps))
                                        : rsqrtf(total / nf + eps);
        if ((RMS_MIN & 64) || c < chunks)
            reinterpret_cast<V*>(yr)[c] = Vec16<T>::scaled(xv, inv, wv).v;
        if (RMS_MIN & 16)
            break;
        if (RMS_MIN & 8)
            __syncthreads();
    }
}

extern "C" __global__ void __launch_bounds__(RMS_BLOCK)
    rms_norm_f32(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y,
                 int rows, int n, float eps) {
    body(x, w, y, rows, n, eps);
}

extern "C" __global__ void __launch_bounds__(RMS_BLOCK)
    rms_norm_bf16(const bf16* __restrict__ x, const bf16* __restrict__ w, bf16* __restrict__ y,
                  int rows, int n, float eps) {
    body(x, w, y, rows, n, eps);
}
