// Programmatic dependent launch (sm_90+) for kernels launched with LaunchConfig::pdl.
// NVRTC 13 leaves cudaGridDependencySynchronize undefined without -rdc; the PTX instructions
// behind it need nothing. On older architectures both are no-ops.
#pragma once

/// Waits until the grids this one depends on have completed (or triggered) and their memory
/// is visible. Call before reading what the previous kernel on the stream wrote.
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// Lets the next kernel on the stream (launched with pdl) start its prologue now.
__device__ __forceinline__ void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

#ifndef PDL
#define PDL 0 // 1: kernels that begin with pdl_chain_step() take part in PDL chains
#endif

/// The first statement of a kernel that a launch plan may chain with programmatic edges
/// (LaunchConfig::pdl): with PDL=1 it lets its successor launch, then waits for its
/// predecessor's grid to complete (before any read of what it wrote, and any write a
/// predecessor may still read). The successor's own wait still holds it until this grid has
/// completed: the early trigger only lets it be scheduled (on the H200's 64-kernel decode chain
/// 145.8 against 150.2 us per step with the trigger after the wait; bench_plan). With PDL=0
/// (the default) it is nothing: the kernel compiles as without it.
__device__ __forceinline__ void pdl_chain_step() {
#if PDL
    pdl_launch_dependents();
    pdl_wait();
#endif
}
