#pragma once

#include "runtime/driver.hpp"

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

/// True when `stream` is the handle of a kjit Stream that has been destroyed (launching on it
/// would crash inside the driver). Costs one load while no Stream has been destroyed.
bool stream_destroyed(CUstream stream);

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
