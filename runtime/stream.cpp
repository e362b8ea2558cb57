#include "runtime/stream.hpp"

#include <cstdio>
#include <utility>

namespace kjit {

namespace {
void warn_if_failed(CUresult r, const char* call) noexcept {
    if (r != CUDA_SUCCESS)
        std::fprintf(stderr, "kjit: warning: %s: %s\n", call, describe(r).c_str());
}
} // namespace

Stream::Stream() {
    check(driver().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
}
Stream::Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
Stream& Stream::operator=(Stream&& other) noexcept {
    std::swap(stream_, other.stream_);
    return *this;
}
Stream::~Stream() {
    if (stream_)
        warn_if_failed(driver().cuStreamDestroy(stream_), "cuStreamDestroy");
}
void Stream::synchronize() const {
    check(driver().cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

Event::Event() { check(driver().cuEventCreate(&event_, CU_EVENT_DEFAULT), "cuEventCreate"); }
Event::Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
Event& Event::operator=(Event&& other) noexcept {
    std::swap(event_, other.event_);
    return *this;
}
Event::~Event() {
    if (event_)
        warn_if_failed(driver().cuEventDestroy(event_), "cuEventDestroy");
}
void Event::record(CUstream stream) const {
    check(driver().cuEventRecord(event_, stream), "cuEventRecord");
}
void Event::synchronize() const { check(driver().cuEventSynchronize(event_), "cuEventSynchronize"); }
float Event::elapsed_ms(const Event& start, const Event& end) {
    float ms = 0;
    check(driver().cuEventElapsedTime(&ms, start.event_, end.event_), "cuEventElapsedTime");
    return ms;
}

} // namespace kjit
