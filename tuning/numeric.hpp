#pragma once

#include <span>

namespace kjit {

/// Relative L2 error ||got - want|| / ||want||; +inf when any `got` value is not finite.
double relative_l2(std::span<const double> got, std::span<const double> want);
/// The largest |got - want| of any element; +inf when any `got` value is not finite or the
/// sizes differ.
double max_abs_error(std::span<const double> got, std::span<const double> want);

} // namespace kjit
