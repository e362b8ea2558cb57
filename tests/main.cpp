#define DOCTEST_CONFIG_IMPLEMENT
#include "tests/doctest.hpp"

#include <cstdlib>

int main(int argc, char** argv) {
    // Tests (and the kjit processes they start) keep their compile cache in the build tree,
    // not in the user's ~/.cache, unless the caller chose a directory.
    setenv("KJIT_CACHE_DIR", KJIT_TEST_CACHE_DIR, 0);
    return doctest::Context(argc, argv).run();
}
