/* A stand-in libcuda for tests: a driver that loads, reports CUDA 13.0 and no device.
 * Loaded through KJIT_DRIVER_LIBRARY to check the "no CUDA device" path on any machine. */
#include <stddef.h>
#include <string.h>

typedef int CUresult;
enum { kSuccess = 0, kNoDevice = 100, kNotFound = 500 };

static CUresult stub_init(unsigned flags) { (void)flags; return kNoDevice; }
static CUresult stub_driver_version(int* v) { *v = 13000; return kSuccess; }
static CUresult stub_device_count(int* n) { *n = 0; return kSuccess; }

CUresult cuGetProcAddress_v2(const char* symbol, void** fn, int version, unsigned long long flags,
                             int* status) {
    (void)version;
    (void)flags;
    *fn = NULL;
    if (strcmp(symbol, "cuInit") == 0)
        *fn = (void*)stub_init;
    else if (strcmp(symbol, "cuDriverGetVersion") == 0)
        *fn = (void*)stub_driver_version;
    else if (strcmp(symbol, "cuDeviceGetCount") == 0)
        *fn = (void*)stub_device_count;
    if (status)
        *status = *fn ? 0 : 1;
    return *fn ? kSuccess : kNotFound;
}
