#pragma once
// The kernels the launch and hook tests run: PDL producer and consumer (with kjit's pdl.cuh),
// a cluster-rank writer, an empty kernel, a shared-memory edge writer and a step-block reader, compiled for the context's device.

#include "jit/compiler.hpp"
#include "jit/hash.hpp"
#include "jit/sources.hpp"
#include "runtime/context.hpp"
#include "runtime/module.hpp"

namespace kjit::test {

inline constexpr const char* kLaunchKernels = R"(#include "pdl.cuh"
extern "C" __global__ void produce(int* buf, int n, int salt) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    pdl_wait();
    if (i < n) buf[i] = i * 3 + salt;
    pdl_launch_dependents();
}
extern "C" __global__ void consume(const int* buf, int* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    pdl_wait();
    if (i < n) out[i] = buf[i] + 1;
}
extern "C" __global__ void cluster_rank(unsigned* out) {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    if (threadIdx.x == 0) out[blockIdx.x] = r;
}
extern "C" __global__ void empty() {}
// Static shared memory beside dynamic: the last dynamic byte written and read back, plus one
// static word (out[0] = 0x5a + 1).
extern "C" __global__ void smem_edges(unsigned* out, unsigned dynamic_bytes) {
    __shared__ unsigned fixed[64];
    extern __shared__ unsigned char dynamic[];
    fixed[threadIdx.x % 64] = threadIdx.x;
    if (threadIdx.x == 0) dynamic[dynamic_bytes - 1] = 0x5a;
    __syncthreads();
    if (threadIdx.x == 0) out[0] = dynamic[dynamic_bytes - 1] + fixed[1];
}
// A plan's step block: block[0] picks the input of a pair, block[1] is added; out accumulates.
extern "C" __global__ void pick(const int* block, const int* a, const int* b, int* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] += (block[0] ? b : a)[i] + block[1];
}
)";

/// The test kernels (with kjit's pdl.cuh) loaded into `ctx`.
inline Module load_test_kernels(const Context& ctx) {
    SourceSet set;
    set.add({"launch_tests.cu", "tests/launch_tests.cu", kLaunchKernels,
             hash128(kLaunchKernels), 0});
    set.add(*SourceSet::embedded().find("pdl.cuh"));
    CompileOptions o;
    o.arch = ctx.device().arch();
    return Module::load(ctx, compile(set, "launch_tests", o).cubin, "launch_tests");
}

} // namespace kjit::test
