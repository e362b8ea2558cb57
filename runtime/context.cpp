#include "runtime/context.hpp"

#include "core/warnings.hpp"
#include "runtime/hooks.hpp"

#include <cstdio>
#include <utility>

namespace kjit {

int Device::count() {
    int n = 0;
    check(driver().cuDeviceGetCount(&n), "cuDeviceGetCount");
    return n;
}

Device Device::get(int ordinal) {
    CUdevice d = 0;
    check(driver().cuDeviceGet(&d, ordinal), "cuDeviceGet",
          [&] { return "ordinal=" + std::to_string(ordinal) + " of " + std::to_string(count()); });
    return {ordinal, d};
}

std::string Device::name() const {
    char buf[256] = {};
    check(driver().cuDeviceGetName(buf, sizeof buf, handle_), "cuDeviceGetName");
    return buf;
}

int Device::attribute(CUdevice_attribute attr) const {
    int v = 0;
    check(driver().cuDeviceGetAttribute(&v, attr, handle_), "cuDeviceGetAttribute",
          [&] { return "dev=" + std::to_string(ordinal_) + " attribute=" + std::to_string(attr); });
    return v;
}

std::string Device::arch() const {
    return "sm_" + std::to_string(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)) +
           std::to_string(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
}

int Device::sm_count() const {
    return attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
}

std::size_t Device::total_memory() const {
    std::size_t bytes = 0;
    check(driver().cuDeviceTotalMem(&bytes, handle_), "cuDeviceTotalMem");
    return bytes;
}

namespace {
/// One retain of a device's primary context; observers hear of the release first, while
/// the context's events still live.
struct PrimaryRetain {
    CUdevice device;
    CUcontext ctx;
    PrimaryRetain(CUdevice device_, CUcontext ctx_) : device(device_), ctx(ctx_) {}
    PrimaryRetain(const PrimaryRetain&) = delete;
    PrimaryRetain& operator=(const PrimaryRetain&) = delete;
    ~PrimaryRetain() {
        detail::context_release(ctx); // observers' events die with the context
        if (const CUresult r = driver().cuDevicePrimaryCtxRelease(device); r != CUDA_SUCCESS)
            warn("cuDevicePrimaryCtxRelease: " + describe(r));
    }
};
} // namespace

Context::Context(const Device& device) : device_(device) {
    check(driver().cuDevicePrimaryCtxRetain(&ctx_, device.handle()), "cuDevicePrimaryCtxRetain",
          [&] { return "dev=" + std::to_string(device.ordinal()); });
    retain_ = std::make_shared<const PrimaryRetain>(device.handle(), ctx_);
    make_current();
}

Context::Context(Context&& other) noexcept
    : device_(other.device_), ctx_(std::exchange(other.ctx_, nullptr)),
      retain_(std::move(other.retain_)) {}

Context& Context::operator=(Context&& other) noexcept {
    if (this != &other) {
        device_ = other.device_;
        ctx_ = std::exchange(other.ctx_, nullptr);
        retain_ = std::move(other.retain_);
    }
    return *this;
}

Context::~Context() = default;

void Context::make_current() const {
    // Asking is cheaper than setting, and a launch path makes its context current every time.
    if (CUcontext current = nullptr;
        driver().cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == ctx_)
        return;
    check(driver().cuCtxSetCurrent(ctx_), "cuCtxSetCurrent",
          [&] { return "dev=" + std::to_string(device_.ordinal()); });
}

void Context::synchronize() const {
    make_current();
    check(driver().cuCtxSynchronize(), "cuCtxSynchronize",
          [&] { return "dev=" + std::to_string(device_.ordinal()); });
}

} // namespace kjit
