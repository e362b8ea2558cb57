#include "kernels/registry.hpp"

#include "core/error.hpp"
#include "kernels/builtin.hpp"

#include <deque>
#include <exception>
#include <map>
#include <mutex>

namespace kjit {

namespace {

struct Pending {
    KernelContract (*make)();
    ReferenceFn reference;
};

struct Registry {
    // Recursive: validating a contract looks its reference up.
    std::recursive_mutex mutex;
    std::vector<Pending> pending;         ///< registrars not yet read
    std::deque<KernelContract> contracts; ///< a deque: references to its elements stay valid
    std::map<std::string, ReferenceFn, std::less<>> references;
    bool started = false;
    std::exception_ptr error; ///< the first failed registration: every later read reports it
};

Registry& registry() {
    static Registry r;
    return r;
}

void add_reference(Registry& r, const std::string& name, ReferenceFn fn) {
    if (name.empty() || !fn)
        throw ConfigError("a float64 reference needs a name and a function");
    if (!r.references.emplace(name, fn).second)
        throw ConfigError("a float64 reference named '" + name + "' is registered twice");
}

void add_contract(Registry& r, KernelContract c) {
    validate_contract(c);
    for (const KernelContract& have : r.contracts)
        if (have.name == c.name)
            throw ConfigError("contract " + c.name + " is registered twice");
    r.contracts.push_back(std::move(c));
}

void add_pending(Registry& r, const Pending& p) {
    KernelContract c = p.make();
    if (p.reference) {
        if (c.reference.empty())
            c.reference = c.name;
        add_reference(r, c.reference, p.reference);
    }
    add_contract(r, std::move(c));
}

/// Registers kjit's own contracts (first, in a fixed order), then every registrar not yet read.
/// Runs under the lock.
void drain(Registry& r) {
    if (r.error)
        std::rethrow_exception(r.error);
    try {
        if (!r.started) {
            r.started = true;
            for (const Pending& p :
                 {Pending{detail::rms_norm_contract, detail::rms_norm_reference_io},
                  Pending{detail::conv1d_contract, detail::conv1d_reference_io},
                  Pending{detail::conv1d_update_contract, detail::conv1d_update_reference_io},
                  Pending{detail::conv1d_cl_contract, detail::conv1d_cl_reference_io},
                  Pending{detail::delta_rule_contract, detail::delta_rule_reference_io}})
                add_pending(r, p);
        }
        while (!r.pending.empty()) {
            const Pending p = r.pending.front();
            r.pending.erase(r.pending.begin());
            add_pending(r, p);
        }
    } catch (...) {
        r.error = std::current_exception();
        throw;
    }
}

} // namespace

std::vector<const KernelContract*> kernel_contracts() {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    drain(r);
    std::vector<const KernelContract*> out;
    for (const KernelContract& c : r.contracts)
        out.push_back(&c);
    return out;
}

const KernelContract* find_contract(std::string_view name) {
    for (const KernelContract* c : kernel_contracts())
        if (c->name == name)
            return c;
    return nullptr;
}

const KernelContract& kernel_contract(std::string_view name) {
    std::string known;
    for (const KernelContract* c : kernel_contracts()) {
        if (c->name == name)
            return *c;
        known += (known.empty() ? "" : ", ") + c->name;
    }
    throw NotFoundError("no bench or digest case for kernel '" + std::string(name) +
                        "' (known: " + known + ")");
}

void register_contract(KernelContract contract) {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    drain(r);
    add_contract(r, std::move(contract));
}

void register_reference(const std::string& name, ReferenceFn fn) {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    add_reference(r, name, fn);
}

ReferenceFn find_reference(std::string_view name) {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    if (!r.started)
        drain(r);
    const auto it = r.references.find(name);
    return it == r.references.end() ? nullptr : it->second;
}

std::vector<std::string> reference_names() {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    if (!r.started)
        drain(r);
    std::vector<std::string> out;
    for (const auto& [name, fn] : r.references)
        out.push_back(name);
    return out;
}

ContractRegistrar::ContractRegistrar(KernelContract (*make)(), ReferenceFn reference) noexcept {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    r.pending.push_back({make, reference});
}

} // namespace kjit
