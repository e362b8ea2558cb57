#include "runtime/hooks.hpp"

#include "runtime/ledger.hpp"

#include <algorithm>
#include <mutex>
#include <utility>

namespace kjit {

namespace {
constexpr std::uint32_t kUnstarted = std::uint32_t{1} << 31;
} // namespace

namespace detail {
constinit std::atomic<std::uint32_t> g_launch_hooks{kUnstarted};
} // namespace detail

namespace {

struct Entry {
    std::uint64_t id;
    std::shared_ptr<LaunchObserver> observer;
};

/// The registered observers and the list launches read (replaced, never changed in place).
struct Registry {
    std::mutex mutex;
    std::uint64_t next_id = 1;
    std::vector<Entry> entries;
    detail::ObserverList list;

    void publish() {
        auto next = std::make_shared<std::vector<std::shared_ptr<LaunchObserver>>>();
        next->reserve(entries.size());
        for (const Entry& e : entries)
            next->push_back(e.observer);
        list = entries.empty() ? nullptr : std::move(next);
    }
};

/// Never destroyed: a launch or a context release during static destruction still finds it.
Registry& registry() {
    static Registry* const r = new Registry;
    return *r;
}

detail::ObserverList snapshot() {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    return r.list;
}

/// Observers the environment turns on for the whole process (KJIT_LEDGER) start with its
/// first launch, so a malformed flag is reported by that launch; a failed start is retried.
void start_environment_observers() {
    static const bool started = [] {
        start_ledger_from_environment();
        return true;
    }();
    (void)started;
    detail::g_launch_hooks.fetch_and(~kUnstarted, std::memory_order_relaxed);
}

} // namespace

LaunchHook::LaunchHook(std::shared_ptr<LaunchObserver> observer) {
    if (!observer)
        throw Error("a launch hook needs an observer");
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    id_ = r.next_id++;
    r.entries.push_back({id_, std::move(observer)});
    r.publish();
    detail::g_launch_hooks.fetch_add(1, std::memory_order_relaxed);
}

LaunchHook::LaunchHook(LaunchHook&& other) noexcept : id_(std::exchange(other.id_, 0)) {}

LaunchHook& LaunchHook::operator=(LaunchHook&& other) noexcept {
    if (this != &other) {
        reset();
        id_ = std::exchange(other.id_, 0);
    }
    return *this;
}

LaunchHook::~LaunchHook() { reset(); }

void LaunchHook::reset() noexcept {
    if (id_ == 0)
        return;
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    const auto it = std::find_if(r.entries.begin(), r.entries.end(),
                                 [&](const Entry& e) { return e.id == id_; });
    if (it != r.entries.end()) {
        r.entries.erase(it);
        r.publish();
        detail::g_launch_hooks.fetch_sub(1, std::memory_order_relaxed);
    }
    id_ = 0;
}

std::size_t launch_observer_count() {
    return detail::g_launch_hooks.load(std::memory_order_relaxed) & ~kUnstarted;
}

namespace detail {

namespace {
ObserverList started_snapshot() {
    if (g_launch_hooks.load(std::memory_order_relaxed) & kUnstarted)
        start_environment_observers();
    return snapshot();
}
} // namespace

ObserverList launch_enter(const Function& function, const LaunchConfig& config) {
    ObserverList observers = started_snapshot();
    if (observers)
        for (const auto& o : *observers)
            o->launch_enter(function, config);
    return observers;
}

void launch_exit(const ObserverList& observers, const Function& function,
                 const LaunchConfig& config) {
    if (observers)
        for (const auto& o : *observers)
            o->launch_exit(function, config);
}

ObserverList plan_enter(std::span<const PlannedLaunch> steps) {
    ObserverList observers = started_snapshot();
    if (observers)
        for (const auto& o : *observers)
            o->plan_enter(steps);
    return observers;
}

void plan_exit(const ObserverList& observers, std::span<const PlannedLaunch> steps) {
    if (observers)
        for (const auto& o : *observers)
            o->plan_exit(steps);
}

void context_release(CUcontext context) noexcept {
    if (launch_observer_count() == 0)
        return;
    if (const ObserverList observers = snapshot())
        for (const auto& o : *observers)
            o->context_release(context);
}

} // namespace detail

} // namespace kjit
