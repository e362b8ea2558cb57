#include "tuning/numeric.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kjit {

double relative_l2(std::span<const double> got, std::span<const double> want) {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < got.size() && i < want.size(); ++i) {
        if (!std::isfinite(got[i]))
            return std::numeric_limits<double>::infinity();
        num += (got[i] - want[i]) * (got[i] - want[i]);
        den += want[i] * want[i];
    }
    if (got.size() != want.size())
        return std::numeric_limits<double>::infinity();
    return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

double max_abs_error(std::span<const double> got, std::span<const double> want) {
    if (got.size() != want.size())
        return std::numeric_limits<double>::infinity();
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (!std::isfinite(got[i]))
            return std::numeric_limits<double>::infinity();
        worst = std::max(worst, std::abs(got[i] - want[i]));
    }
    return worst;
}

} // namespace kjit
