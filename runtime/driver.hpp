#pragma once

#include "core/error.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <concepts>
#include <string>
#include <string_view>
#include <utility>

namespace kjit {

/// A driver API call failed; `what()` reads: call: CODE (driver text) [context]: detail.
class CudaError : public Error {
  public:
    CudaError(std::string call, CUresult code, std::string context, const std::string& detail = {});
    std::string call;
    CUresult code;
    std::string context;
};

/// There is no usable GPU: the driver library is missing or it reports no device.
class NoDeviceError : public Error {
  public:
    enum class Reason { no_driver, no_device };
    NoDeviceError(Reason reason, const std::string& detail);
    Reason reason;
};

// Every entry point kjit uses, with the ABI version of its PFN_*_vNNNNN typedef: the version
// is what cuGetProcAddress is asked for, so each pointer has exactly the typedef's signature.
// (cuGraphInstantiate is a macro for cuGraphInstantiateWithFlags since CUDA 12: asking for
// "cuGraphInstantiate" by name returns the legacy five-argument ABI.)
#define KJIT_DRIVER_ENTRY_POINTS(X)                                                              \
    X(cuInit, 2000)                                                                              \
    X(cuDriverGetVersion, 2020)                                                                  \
    X(cuGetErrorName, 6000)                                                                      \
    X(cuGetErrorString, 6000)                                                                    \
    X(cuDeviceGetCount, 2000)                                                                    \
    X(cuDeviceGet, 2000)                                                                         \
    X(cuDeviceGetName, 2000)                                                                     \
    X(cuDeviceGetAttribute, 2000)                                                                \
    X(cuDeviceTotalMem, 3020)                                                                    \
    X(cuDevicePrimaryCtxRetain, 7000)                                                            \
    X(cuDevicePrimaryCtxRelease, 11000)                                                          \
    X(cuDevicePrimaryCtxGetState, 7000)                                                          \
    X(cuCtxGetCurrent, 4000)                                                                     \
    X(cuCtxSetCurrent, 4000)                                                                     \
    X(cuCtxSynchronize, 2000)                                                                    \
    X(cuModuleLoadData, 2000)                                                                    \
    X(cuModuleUnload, 2000)                                                                      \
    X(cuModuleGetFunction, 2000)                                                                 \
    X(cuModuleGetFunctionCount, 12040)                                                           \
    X(cuModuleEnumerateFunctions, 12040)                                                         \
    X(cuFuncGetName, 12030)                                                                      \
    X(cuFuncGetAttribute, 2020)                                                                  \
    X(cuFuncSetAttribute, 9000)                                                                  \
    X(cuFuncGetParamInfo, 12040)                                                                 \
    X(cuLaunchKernel, 4000)                                                                      \
    X(cuLaunchKernelEx, 11060)                                                                   \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050)                                         \
    X(cuMemAlloc, 3020)                                                                          \
    X(cuMemFree, 3020)                                                                           \
    X(cuMemcpyHtoD, 3020)                                                                        \
    X(cuMemcpyDtoH, 3020)                                                                        \
    X(cuMemcpyHtoDAsync, 3020)                                                                   \
    X(cuMemHostAlloc, 2020)                                                                      \
    X(cuMemFreeHost, 2000)                                                                       \
    X(cuStreamBatchMemOp, 11070)                                                                 \
    X(cuMemsetD8, 3020)                                                                          \
    X(cuMemsetD32, 3020)                                                                         \
    X(cuStreamCreate, 2000)                                                                      \
    X(cuStreamDestroy, 4000)                                                                     \
    X(cuStreamSynchronize, 2000)                                                                 \
    X(cuEventCreate, 2000)                                                                       \
    X(cuEventDestroy, 4000)                                                                      \
    X(cuEventRecord, 2000)                                                                       \
    X(cuEventRecordWithFlags, 11010)                                                             \
    X(cuEventSynchronize, 2000)                                                                  \
    X(cuEventElapsedTime, 2000)                                                                  \
    X(cuMemcpyDtoD, 3020)                                                                        \
    X(cuMemcpyDtoDAsync, 3020)                                                                   \
    X(cuMemsetD8Async, 3020)                                                                     \
    X(cuStreamBeginCapture, 10010)                                                               \
    X(cuStreamEndCapture, 10000)                                                                 \
    X(cuGraphInstantiateWithFlags, 11040)                                                        \
    X(cuGraphLaunch, 10000)                                                                      \
    X(cuGraphExecDestroy, 10000)                                                                 \
    X(cuGraphDestroy, 10000)                                                                     \
    X(cuStreamGetCaptureInfo, 12030)                                                             \
    X(cuGraphNodeGetType, 10000)                                                                 \
    X(cuGraphGetEdges, 12030)                                                                    \
    X(cuGraphExecKernelNodeSetParams, 12000)                                                     \
    X(cuOccupancyMaxActiveClusters, 11070)

/// The driver's entry points, taken with cuGetProcAddress from a dlopen'ed libcuda.so.1.
struct DriverApi {
#define KJIT_DRIVER_FIELD(name, version) PFN_##name##_v##version name = nullptr;
    KJIT_DRIVER_ENTRY_POINTS(KJIT_DRIVER_FIELD)
#undef KJIT_DRIVER_FIELD
    int version = 0; ///< cuDriverGetVersion
};

/// Loads and initializes the driver once per process (thread-safe); throws NoDeviceError when
/// there is no driver or no device, the same error on every call.
const DriverApi& driver();

/// True when driver() would succeed; `reason` receives NoDeviceError's message otherwise.
bool device_available(std::string* reason = nullptr);

/// "CUDA_ERROR_INVALID_VALUE (invalid argument)".
std::string describe(CUresult code);

/// Throws CudaError(call, code, context) unless code is CUDA_SUCCESS.
void check(CUresult code, const char* call, std::string_view context = {});

/// check() whose context is built only on failure (as cuda-api-wrappers' throw_if_error_lazy):
/// `context()` returns the text; a call that succeeds pays nothing for it.
template <std::invocable Context>
void check(CUresult code, const char* call, Context&& context) {
    if (code != CUDA_SUCCESS) [[unlikely]]
        throw CudaError(call, code, std::string(std::forward<Context>(context)()));
}

} // namespace kjit
