#pragma once

#include "runtime/driver.hpp"

#include <cstddef>
#include <unordered_map>
#include <vector>

namespace kjit {

/// An owned, non-blocking CUDA stream in the current context.
class Stream {
  public:
    Stream();
    Stream(Stream&& other) noexcept;
    Stream& operator=(Stream&& other) noexcept;
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    ~Stream();
    [[nodiscard]] CUstream handle() const { return stream_; }
    void synchronize() const;

  private:
    CUstream stream_ = nullptr;
};

/// How many destroyed streams stream_destroyed() remembers: the most recent ones, since a
/// dead handle is passed in by mistake soon after its Stream went, not thousands of streams
/// later; bounded, so a process that creates streams forever does not grow.
inline constexpr std::size_t kDestroyedStreamsRemembered = 1024;

/// True when `stream` is the handle of one of the last kDestroyedStreamsRemembered kjit
/// Streams destroyed (launching on it would crash inside the driver), unless the driver has
/// handed the handle out again to a new Stream. Costs one load while no Stream has been
/// destroyed.
bool stream_destroyed(CUstream stream);

namespace detail {
/// Of the last `capacity` handles added, those not removed since: each addition forgets the
/// one `capacity` additions older (a ring of insertion slots; re-adding makes a handle the
/// newest). Not synchronized.
class RecentHandles {
  public:
    /// An empty set of at most `capacity` handles (at least 1).
    explicit RecentHandles(std::size_t capacity);
    /// Remembers `handle` (nullptr is ignored).
    void add(const void* handle);
    /// Forgets `handle` (the driver handed it out again).
    void remove(const void* handle);
    [[nodiscard]] bool contains(const void* handle) const;
    [[nodiscard]] std::size_t size() const { return slot_of_.size(); }
    [[nodiscard]] std::size_t capacity() const { return ring_.size(); }

  private:
    std::vector<const void*> ring_; ///< handles by insertion slot; nullptr: empty or removed
    std::size_t next_ = 0;          ///< the slot the next add takes: the oldest addition
    std::unordered_map<const void*, std::size_t> slot_of_;
};
} // namespace detail

/// An owned CUDA event (timing enabled).
class Event {
  public:
    Event();
    Event(Event&& other) noexcept;
    Event& operator=(Event&& other) noexcept;
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    ~Event();
    [[nodiscard]] CUevent handle() const { return event_; }
    void record(CUstream stream) const;
    void synchronize() const;
    /// Milliseconds from `start` to `end` (both recorded and complete).
    static float elapsed_ms(const Event& start, const Event& end);

  private:
    CUevent event_ = nullptr;
};

} // namespace kjit
