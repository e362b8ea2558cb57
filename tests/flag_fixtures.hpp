#pragma once
// The application flags file the flag and `kjit env` tests declare: tests/fixtures/env/.

#include "core/flags.hpp"

#include <string>

namespace kjit::test {

/// The directory of the flags-file fixtures, with a trailing '/'.
inline const std::string kFlagFixtures = KJIT_SOURCE_DIR "/tests/fixtures/env/";
/// A Mamba application's flags file: prefix MAMBA_RS_, flags with defines, tier rules.
inline const std::string kMamba = kFlagFixtures + "mamba_rs.toml";

/// kjit's own flags with the Mamba application's loaded.
inline FlagRegistry mamba() {
    FlagRegistry r = builtin_flags();
    r.load_toml(kMamba);
    return r;
}

} // namespace kjit::test
