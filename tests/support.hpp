#pragma once
// Helpers shared by kjit's tests.

#include "runtime/driver.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace kjit::test {

/// Exit code CTest reads as "skipped" (SKIP_RETURN_CODE in tests/CMakeLists.txt).
inline constexpr int kSkipExitCode = 77;

/// Ends a GPU test when no device is usable: prints "SKIPPED: <reason>" and, under CTest
/// (KJIT_TEST_SKIP_EXIT set), exits with kSkipExitCode so the run reports it as skipped.
inline bool skip_without_device() {
    std::string reason;
    if (device_available(&reason))
        return false;
    std::printf("SKIPPED: %s\n", reason.c_str());
    std::fflush(stdout);
    if (std::getenv("KJIT_TEST_SKIP_EXIT"))
        std::_Exit(kSkipExitCode);
    MESSAGE("skipped: " << reason);
    return true;
}

/// A fresh directory under the system temp dir, removed with the object.
class TempDir {
  public:
    TempDir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "kjit-test-XXXXXX").string();
        if (!mkdtemp(tmpl.data()))
            throw std::runtime_error("mkdtemp failed");
        path_ = tmpl;
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  private:
    std::filesystem::path path_;
};

} // namespace kjit::test

#define KJIT_REQUIRE_DEVICE()                                                                    \
    if (::kjit::test::skip_without_device())                                                     \
    return
