#include "runtime/buffer.hpp"

#include "core/warnings.hpp"

#include <cstdio>
#include <utility>

namespace kjit {

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes > 0)
        check(driver().cuMemAlloc(&ptr_, bytes), "cuMemAlloc",
              "bytes=" + std::to_string(bytes));
}
DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, 0)), bytes_(std::exchange(other.bytes_, 0)) {}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(bytes_, other.bytes_);
    return *this;
}
DeviceBuffer::~DeviceBuffer() {
    if (ptr_)
        if (const CUresult r = driver().cuMemFree(ptr_); r != CUDA_SUCCESS)
            warn("cuMemFree: " + describe(r));
}

namespace {
void require_size(std::size_t have, std::size_t want, const char* call) {
    if (have != want)
        throw Error(std::string(call) + ": buffer holds " + std::to_string(have) +
                    " bytes, host side " + std::to_string(want));
}
/// cuMemcpyHtoD from pageable memory may return once the bytes are staged, before the DMA has
/// reached the buffer, and cuMemsetD8 is asynchronous: both run on the legacy stream, which a
/// kjit Stream (non-blocking) does not wait for. Without this wait a kernel launched next on
/// such a stream can run first and have its output overwritten by the late copy.
void wait_for_legacy_stream(const char* after) {
    check(driver().cuStreamSynchronize(nullptr), "cuStreamSynchronize", after);
}
} // namespace

void DeviceBuffer::upload(const void* host, std::size_t bytes) {
    require_size(bytes_, bytes, "cuMemcpyHtoD");
    if (bytes)
        check(driver().cuMemcpyHtoD(ptr_, host, bytes), "cuMemcpyHtoD");
    wait_for_legacy_stream("cuMemcpyHtoD");
}
void DeviceBuffer::download(void* host, std::size_t bytes) const {
    require_size(bytes_, bytes, "cuMemcpyDtoH");
    if (bytes)
        check(driver().cuMemcpyDtoH(host, ptr_, bytes), "cuMemcpyDtoH");
}
void DeviceBuffer::fill_bytes(unsigned char value) {
    if (bytes_)
        check(driver().cuMemsetD8(ptr_, value, bytes_), "cuMemsetD8");
    wait_for_legacy_stream("cuMemsetD8");
}

} // namespace kjit
