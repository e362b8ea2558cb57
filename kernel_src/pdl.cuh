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
