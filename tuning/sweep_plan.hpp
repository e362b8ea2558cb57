#pragma once

#include "kernels/plan.hpp"
#include "tuning/sweep_spec.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kjit {

/// One point of the sweep: the contract planned at the sweep's case with its values.
struct SweepVariant {
    std::map<std::string, long long> params;
    Defines defines;     ///< every define it is compiled with: the contract's, fixed and swept
    LaunchValues launch; ///< every launch parameter of the contract
    CasePlan plan;
    Dim3 grid, block; ///< of the plan's main launch
    unsigned smem = 0;
    bool baseline = false;
    [[nodiscard]] std::string label() const; ///< "RMS_BLOCK=256 ROWS_PER_LAUNCH=2048"
};

/// The points of a sweep's space, planned one at a time: what every search strategy draws from.
class SweepPoints {
  public:
    /// ConfigError at the sweep file when the contract does not plan or nothing is swept.
    explicit SweepPoints(const SweepSpec& spec);
    /// Point `index` (< space().size()) planned, or nullopt when a constraint or a
    /// precondition drops it (counted in rejected()).
    [[nodiscard]] std::optional<SweepVariant> at(std::uint64_t index);
    /// The index of the point with these parameter values; nullopt when one is not a value of
    /// its parameter.
    [[nodiscard]] std::optional<std::uint64_t>
    index_of(const std::map<std::string, long long>& values) const;
    /// The points one value step away in one parameter, ascending.
    [[nodiscard]] std::vector<std::uint64_t> neighbours(std::uint64_t index) const;
    [[nodiscard]] const SweepSpace& space() const { return space_; }
    [[nodiscard]] std::size_t rejected() const { return rejected_; }
    /// "no variant satisfies the constraints (N rejected; <the first failed precondition>)".
    [[nodiscard]] std::string none_left() const;
    /// Why at() last dropped a point: "constraint 'EXPR' (line L) is false" or the failed
    /// precondition.
    [[nodiscard]] const std::string& last_rejection() const { return last_rejection_; }

  private:
    const SweepSpec& spec_;
    SweepSpace space_;
    ContractPlanner planner_;
    ShapeValues shape_;
    std::size_t rejected_ = 0;
    std::string first_precondition_, last_rejection_;
};

/// splitmix64: a search's draws, the same for the same seed on every machine.
std::uint64_t next_random(std::uint64_t& state);
/// A draw in [0, n) without modulo bias.
std::uint64_t draw_below(std::uint64_t& state, std::uint64_t n);

/// The variants a sweep evaluates up front. Exhaustive: every combination of the parameters
/// that satisfies the constraints and the contract's preconditions, in file order (the last
/// parameter varies fastest); ConfigError, before anything is planned, when the space has more
/// points than `cap` (default_sweep_cap(): KJIT_SWEEP_MAX_VARIANTS), at the parameter with the
/// most values. Random: `budget` distinct valid points (the named baseline first), drawn from
/// `seed` without expanding the space; fewer when the space runs out of valid points. Local:
/// its start (the named baseline, else the first valid draw); run_sweep walks from it.
/// `rejected`
/// counts the points the constraints and preconditions dropped. ConfigError when a
/// constraint's value is not a finite number, at the constraint; and when none is left,
/// naming the first failed precondition.
std::vector<SweepVariant> expand(const SweepSpec& spec, std::size_t* rejected = nullptr,
                                 std::optional<std::uint64_t> cap = std::nullopt);

/// Tolerance mode without a float64 reference: the variant every variant is compared with,
/// `baseline` with the sweep's reference_variant values over its own (the baseline itself when
/// there are none). ConfigError at the sweep file when it cannot be planned (a precondition).
SweepVariant reference_variant(const SweepSpec& spec, const SweepVariant& baseline);

/// Whether variants are compared with a reference variant (tolerance mode without a float64
/// reference).
bool uses_reference_variant(const SweepSpec& spec);

} // namespace kjit
