#pragma once

#include "runtime/driver.hpp"

#include <memory>
#include <string>

namespace kjit {

/// A GPU of this host, by ordinal.
class Device {
  public:
    /// Number of devices; throws NoDeviceError when there is none.
    static int count();
    /// Device `ordinal`; CudaError when out of range.
    static Device get(int ordinal = 0);

    [[nodiscard]] int ordinal() const { return ordinal_; }
    [[nodiscard]] CUdevice handle() const { return handle_; }
    [[nodiscard]] std::string name() const;
    [[nodiscard]] int attribute(CUdevice_attribute attr) const;
    /// "sm_90" for compute capability 9.0.
    [[nodiscard]] std::string arch() const;
    [[nodiscard]] int sm_count() const;
    [[nodiscard]] std::size_t total_memory() const;

  private:
    Device(int ordinal, CUdevice handle) : ordinal_(ordinal), handle_(handle) {}
    int ordinal_;
    CUdevice handle_;
};

/// The device's primary context, retained while this object or a share() of it lives, and
/// made current.
class Context {
  public:
    explicit Context(const Device& device);
    Context(Context&& other) noexcept;
    Context& operator=(Context&& other) noexcept;
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;
    ~Context();

    /// Makes this context current on the calling thread.
    void make_current() const;
    /// Waits for all work in the context; CudaError carries any asynchronous fault.
    void synchronize() const;
    [[nodiscard]] const Device& device() const { return device_; }
    [[nodiscard]] CUcontext handle() const { return ctx_; }
    /// A share of this object's retain of the primary context: the context stays alive until
    /// the last share and this object are gone (a Module holds one).
    [[nodiscard]] std::shared_ptr<const void> share() const { return retain_; }

  private:
    Device device_;
    CUcontext ctx_ = nullptr;
    std::shared_ptr<const void> retain_; ///< releases the primary context with the last share
};

} // namespace kjit
