#pragma once

#include "runtime/driver.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace kjit {

class Function;
struct LaunchConfig;

/// One kernel of a launch plan's replay (runtime/plan.hpp): its function and configuration,
/// the replay's stream in it.
struct PlannedLaunch {
    const Function* function;
    const LaunchConfig* config;
};

/// Watches launches (as Triton's launch enter/exit hooks): the launch ledger is one. Calls come
/// on the launching thread, from any number of threads at once.
class LaunchObserver {
  public:
    virtual ~LaunchObserver() = default;
    /// A launch passed kjit's checks and is about to reach the driver; an exception refuses it.
    virtual void launch_enter(const Function& function, const LaunchConfig& config) = 0;
    /// The driver queued the launch on `config.stream` (not called when the launch failed).
    virtual void launch_exit(const Function& function, const LaunchConfig& config) = 0;
    /// A launch plan is about to replay `steps` as one graph (its launches were checked when
    /// it was recorded; recording reports nothing). By default each step is a launch_enter.
    virtual void plan_enter(std::span<const PlannedLaunch> steps) {
        for (const PlannedLaunch& s : steps)
            launch_enter(*s.function, *s.config);
    }
    /// The replay is queued. By default each step is a launch_exit.
    virtual void plan_exit(std::span<const PlannedLaunch> steps) {
        for (const PlannedLaunch& s : steps)
            launch_exit(*s.function, *s.config);
    }
    /// A primary context is about to be released: work and events of `context` die with it.
    virtual void context_release(CUcontext context) noexcept { (void)context; }
};

/// One observer's registration: registered while the object lives (move-only). A launch in
/// flight on another thread when it ends may still reach the observer, which the registry
/// keeps alive until that launch is done.
class LaunchHook {
  public:
    LaunchHook() = default;
    /// Registers `observer` (not null) for every later launch of the process.
    explicit LaunchHook(std::shared_ptr<LaunchObserver> observer);
    LaunchHook(LaunchHook&& other) noexcept;
    LaunchHook& operator=(LaunchHook&& other) noexcept;
    LaunchHook(const LaunchHook&) = delete;
    LaunchHook& operator=(const LaunchHook&) = delete;
    ~LaunchHook();
    /// Unregisters now; later launches do not reach the observer.
    void reset() noexcept;
    [[nodiscard]] bool registered() const { return id_ != 0; }

  private:
    std::uint64_t id_ = 0;
};

/// Observers registered now.
[[nodiscard]] std::size_t launch_observer_count();

namespace detail {
/// The observers one launch reports to, enter and exit alike.
using ObserverList = std::shared_ptr<const std::vector<std::shared_ptr<LaunchObserver>>>;
/// Registered observers, plus a bit until the first launch has started the observers the
/// environment asks for: zero means a launch has nothing to report.
extern std::atomic<std::uint32_t> g_launch_hooks;
/// The one load an unobserved launch pays.
inline bool launch_hooks_armed() { return g_launch_hooks.load(std::memory_order_relaxed) != 0; }
/// Starts the environment's observers once, then calls launch_enter on every observer; the
/// list it returns is the one launch_exit reports to.
ObserverList launch_enter(const Function& function, const LaunchConfig& config);
/// Calls launch_exit on `observers` (the list launch_enter returned) once the launch is queued.
void launch_exit(const ObserverList& observers, const Function& function,
                 const LaunchConfig& config);
/// plan_enter / plan_exit of every observer, as launch_enter / launch_exit for one launch.
ObserverList plan_enter(std::span<const PlannedLaunch> steps);
void plan_exit(const ObserverList& observers, std::span<const PlannedLaunch> steps);
/// Tells every observer that `context` is about to be released.
void context_release(CUcontext context) noexcept;
} // namespace detail

} // namespace kjit
