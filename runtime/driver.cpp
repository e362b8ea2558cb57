#include "runtime/driver.hpp"

#include "core/flags.hpp"

#include <dlfcn.h>

#include <exception>
#include <mutex>

namespace kjit {

namespace {

std::string cuda_message(const std::string& call, CUresult code, const std::string& context,
                         const std::string& detail) {
    std::string msg = call + ": " + describe(code);
    if (!context.empty())
        msg += " [" + context + "]";
    if (!detail.empty())
        msg += ": " + detail;
    return msg;
}

struct Loaded {
    DriverApi api;
    std::exception_ptr error;
};

Loaded load() {
    Loaded out;
    try {
        // KJIT_DRIVER_LIBRARY names another library file (tests point it at a missing one).
        const std::string& lib_name = process_flags().get_string(kFlagDriverLibrary);
        const char* lib = lib_name.empty() ? "libcuda.so.1" : lib_name.c_str();
        void* handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            const char* why = dlerror();
            throw NoDeviceError(NoDeviceError::Reason::no_driver,
                                std::string("cannot load ") + lib + ": " + (why ? why : "?"));
        }
        auto get_proc = reinterpret_cast<PFN_cuGetProcAddress_v12000>(
            dlsym(handle, "cuGetProcAddress_v2"));
        if (!get_proc)
            throw NoDeviceError(NoDeviceError::Reason::no_driver,
                                std::string(lib) +
                                    " has no cuGetProcAddress_v2: the driver is older than "
                                    "CUDA 12; kjit needs 12.4 or newer");
        DriverApi& api = out.api;
#define KJIT_DRIVER_GET(name, ver)                                                               \
    {                                                                                            \
        void* p = nullptr;                                                                       \
        CUdriverProcAddressQueryResult status{};                                                 \
        if (get_proc(#name, &p, ver, CU_GET_PROC_ADDRESS_DEFAULT, &status) == CUDA_SUCCESS &&    \
            status == CU_GET_PROC_ADDRESS_SUCCESS)                                               \
            api.name = reinterpret_cast<PFN_##name##_v##ver>(p);                                 \
    }
        KJIT_DRIVER_ENTRY_POINTS(KJIT_DRIVER_GET)
#undef KJIT_DRIVER_GET
        if (!api.cuInit || !api.cuDriverGetVersion)
            throw NoDeviceError(NoDeviceError::Reason::no_driver,
                                std::string(lib) + " does not provide cuInit");
        api.cuDriverGetVersion(&api.version);
        const CUresult r = api.cuInit(0);
        if (r == CUDA_ERROR_NO_DEVICE)
            throw NoDeviceError(NoDeviceError::Reason::no_device,
                                "the driver (" + std::to_string(api.version / 1000) + "." +
                                    std::to_string(api.version % 1000 / 10) +
                                    ") reports no device");
        if (r != CUDA_SUCCESS)
            throw NoDeviceError(NoDeviceError::Reason::no_device,
                                "cuInit failed: CUresult " + std::to_string(r));
        int count = 0;
        if (api.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0)
            throw NoDeviceError(NoDeviceError::Reason::no_device, "the driver reports 0 devices");
        if (api.version < 12040)
            throw NoDeviceError(NoDeviceError::Reason::no_driver,
                                "the CUDA driver supports " + std::to_string(api.version) +
                                    "; kjit needs 12040 (CUDA 12.4) or newer");
    } catch (...) {
        out.error = std::current_exception();
    }
    return out;
}

const Loaded& loaded() {
    static const Loaded instance = load();
    return instance;
}

} // namespace

CudaError::CudaError(std::string call_, CUresult code_, std::string context_,
                     const std::string& detail)
    : Error(cuda_message(call_, code_, context_, detail)), call(std::move(call_)), code(code_),
      context(std::move(context_)) {}

NoDeviceError::NoDeviceError(Reason reason_, const std::string& detail)
    : Error(std::string(reason_ == Reason::no_driver ? "no CUDA driver" : "no CUDA device") +
            ": " + detail),
      reason(reason_) {}

const DriverApi& driver() {
    const Loaded& l = loaded();
    if (l.error)
        std::rethrow_exception(l.error);
    return l.api;
}

bool device_available(std::string* reason) {
    try {
        driver();
        return true;
    } catch (const NoDeviceError& e) {
        if (reason)
            *reason = e.what();
        return false;
    }
}

std::string describe(CUresult code) {
    const char* name = nullptr;
    const char* text = nullptr;
    const Loaded& l = loaded();
    if (l.api.cuGetErrorName)
        l.api.cuGetErrorName(code, &name);
    if (l.api.cuGetErrorString)
        l.api.cuGetErrorString(code, &text);
    std::string s = name ? name : "CUresult " + std::to_string(code);
    if (text)
        s += std::string(" (") + text + ")";
    return s;
}

void check(CUresult code, const char* call, std::string_view context) {
    if (code != CUDA_SUCCESS)
        throw CudaError(call, code, std::string(context));
}

} // namespace kjit
