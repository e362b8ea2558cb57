#pragma once

#include "runtime/driver.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace kjit {

/// Owned device memory in the current context.
class DeviceBuffer {
  public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t bytes);
    DeviceBuffer(DeviceBuffer&& other) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer();

    [[nodiscard]] CUdeviceptr ptr() const { return ptr_; }
    [[nodiscard]] std::size_t bytes() const { return bytes_; }
    /// Copies host bytes in (synchronous); the size must match.
    void upload(const void* host, std::size_t bytes);
    /// Copies the whole buffer out (synchronous).
    void download(void* host, std::size_t bytes) const;
    /// Sets every byte (synchronous).
    void fill_bytes(unsigned char value);

    template <class T> static DeviceBuffer from(std::span<const T> host) {
        DeviceBuffer b(host.size_bytes());
        b.upload(host.data(), host.size_bytes());
        return b;
    }
    template <class T> [[nodiscard]] std::vector<T> to_vector() const {
        std::vector<T> v(bytes_ / sizeof(T));
        download(v.data(), v.size() * sizeof(T));
        return v;
    }

  private:
    CUdeviceptr ptr_ = 0;
    std::size_t bytes_ = 0;
};

} // namespace kjit
