// y = a * x + y over n floats, one element per thread.

// Threads per block; the application injects its production value (main.cpp).
#ifndef SAXPY_BLOCK
#define SAXPY_BLOCK 256
#endif

extern "C" __global__ void __launch_bounds__(SAXPY_BLOCK)
    saxpy(float a, const float* __restrict__ d_x, float* __restrict__ d_y, int n) {
    const int i = blockIdx.x * SAXPY_BLOCK + threadIdx.x;
    if (i < n)
        d_y[i] = a * d_x[i] + d_y[i];
}
