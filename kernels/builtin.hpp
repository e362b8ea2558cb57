#pragma once
// kjit's own contracts, registered first and in this order by kernels/registry.cpp.

#include "kernels/contract.hpp"
#include "kernels/registry.hpp"

namespace kjit::detail {

/// kernels/rms_norm.cpp
KernelContract rms_norm_contract();
/// The contract's float64 reference, registered as "rms_norm".
void rms_norm_reference_io(ReferenceIo& io);
/// kernels/conv1d.cpp
KernelContract conv1d_contract();
/// The contract's float64 reference, registered as "conv1d".
void conv1d_reference_io(ReferenceIo& io);
/// kernels/conv1d.cpp: conv1d channel-last, x and y [B, T, C], the states [B, 3, C].
KernelContract conv1d_cl_contract();
/// The contract's float64 reference, registered as "conv1d_cl".
void conv1d_cl_reference_io(ReferenceIo& io);
/// kernels/conv1d.cpp: one decode step of conv1d, the state rolled in place.
KernelContract conv1d_update_contract();
/// The contract's float64 reference, registered as "conv1d_update".
void conv1d_update_reference_io(ReferenceIo& io);
/// kernels/delta_rule.cpp
KernelContract delta_rule_contract();
/// The contract's float64 reference, registered as "delta_rule".
void delta_rule_reference_io(ReferenceIo& io);

} // namespace kjit::detail
