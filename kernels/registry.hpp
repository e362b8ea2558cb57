#pragma once

#include "kernels/contract.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace kjit {

class ReferenceIo;

/// A float64 reference: reads the case's inputs from `io` and fills its outputs.
using ReferenceFn = void (*)(ReferenceIo& io);

/// Every registered contract: kjit's own first (rms_norm, conv1d, delta_rule), then the others
/// in the order they were registered. ConfigError when a registered contract is invalid.
std::vector<const KernelContract*> kernel_contracts();
/// The contract named `name`; NotFoundError naming the known ones otherwise.
const KernelContract& kernel_contract(std::string_view name);
/// The contract named `name`, or nullptr.
const KernelContract* find_contract(std::string_view name);

/// Adds a contract (validated; ConfigError when invalid or when its name is taken). The
/// references it names must be registered first.
void register_contract(KernelContract contract);
/// Adds a float64 reference under `name`; ConfigError when the name is taken.
void register_reference(const std::string& name, ReferenceFn fn);
/// The reference registered as `name`, or nullptr.
ReferenceFn find_reference(std::string_view name);
/// Every registered reference's name, sorted.
std::vector<std::string> reference_names();

/// A static instance registers a contract from any translation unit linked into the binary,
/// with no list to edit: `static kjit::ContractRegistrar r(make_axpy_contract, axpy_ref);`
/// registers the contract and, when given, its reference under the contract's `reference`
/// name. Registered when the registry is first read; a mistake is reported then.
struct ContractRegistrar {
    explicit ContractRegistrar(KernelContract (*make)(), ReferenceFn reference = nullptr) noexcept;
};

} // namespace kjit
