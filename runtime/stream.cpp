#include "runtime/stream.hpp"

#include "core/warnings.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <shared_mutex>
#include <utility>

namespace kjit {

namespace {
void warn_if_failed(CUresult r, const char* call) noexcept {
    if (r != CUDA_SUCCESS)
        warn(std::string(call) + ": " + describe(r));
}
// Handles of recently destroyed kjit streams (the driver may hand the same value out again:
// a new Stream takes its handle off the list).
std::atomic<std::size_t> g_destroyed_count{0};
std::shared_mutex g_destroyed_mutex;
detail::RecentHandles g_destroyed(kDestroyedStreamsRemembered);
} // namespace

namespace detail {

RecentHandles::RecentHandles(std::size_t capacity) : ring_(capacity == 0 ? 1 : capacity) {}

void RecentHandles::add(const void* handle) {
    if (handle == nullptr)
        return;
    remove(handle);
    if (const void* oldest = ring_[next_])
        slot_of_.erase(oldest);
    ring_[next_] = handle;
    slot_of_[handle] = next_;
    next_ = (next_ + 1) % ring_.size();
}

void RecentHandles::remove(const void* handle) {
    if (const auto it = slot_of_.find(handle); it != slot_of_.end()) {
        ring_[it->second] = nullptr;
        slot_of_.erase(it);
    }
}

bool RecentHandles::contains(const void* handle) const { return slot_of_.contains(handle); }

} // namespace detail

bool stream_destroyed(CUstream stream) {
    if (g_destroyed_count.load(std::memory_order_relaxed) == 0 || stream == nullptr)
        return false;
    std::shared_lock lock(g_destroyed_mutex);
    return g_destroyed.contains(stream);
}

Stream::Stream() {
    check(driver().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    if (g_destroyed_count.load(std::memory_order_relaxed) != 0) {
        std::unique_lock lock(g_destroyed_mutex);
        g_destroyed.remove(stream_);
        g_destroyed_count.store(g_destroyed.size());
    }
}
Stream::Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
Stream& Stream::operator=(Stream&& other) noexcept {
    std::swap(stream_, other.stream_);
    return *this;
}
Stream::~Stream() {
    if (!stream_)
        return;
    warn_if_failed(driver().cuStreamDestroy(stream_), "cuStreamDestroy");
    std::unique_lock lock(g_destroyed_mutex);
    g_destroyed.add(stream_);
    g_destroyed_count.store(g_destroyed.size());
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
