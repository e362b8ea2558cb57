#pragma once
// Helpers shared by kjit's tests.

#include "runtime/driver.hpp"
#include "runtime/engine.hpp"
#include "runtime/launch.hpp"

#include <doctest/doctest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
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

/// What a command printed (stdout and stderr together) and its exit code.
struct Run {
    int code;
    std::string out;
};

/// Runs a shell command line, capturing stdout and stderr together.
inline Run run_shell(const std::string& command) {
    FILE* p = popen((command + " 2>&1").c_str(), "r");
    REQUIRE(p != nullptr);
    std::string out;
    std::array<char, 4096> buf{};
    while (std::size_t n = fread(buf.data(), 1, buf.size(), p))
        out.append(buf.data(), n);
    const int status = pclose(p);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

#ifdef KJIT_BINARY
/// Runs the built kjit with `args`, after the environment assignments `env` ("A=1 B=2").
inline Run run_kjit(const std::string& args, const std::string& env = {}) {
    return run_shell(env + (env.empty() ? "" : " ") + KJIT_BINARY + " " + args);
}

/// run_kjit with `dir` as the working directory.
inline Run run_kjit_in(const std::filesystem::path& dir, const std::string& args,
                       const std::string& env = {}) {
    return run_shell("cd '" + dir.string() + "' && " + env + (env.empty() ? "" : " ") +
                     KJIT_BINARY + " " + args);
}
#endif

/// True when `part` occurs in `s`.
inline bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

/// The text of the LaunchError `f` throws, or "(no error)".
inline std::string launch_error(const std::function<void()>& f) {
    try {
        f();
    } catch (const LaunchError& e) {
        return e.what();
    }
    return "(no error)";
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

/// Device 0, its primary context, and an engine over the embedded sources whose disk cache
/// lives in a directory of its own (removed with the object). GPU tests only.
struct GpuEngine {
    TempDir cache_dir;
    Device device = Device::get(0);
    Context ctx{device};
    Engine engine{&ctx, options(cache_dir), SourceProvider()};

    static EngineOptions options(const TempDir& dir) {
        EngineOptions o;
        o.cache.dir = dir.path();
        return o;
    }
};

} // namespace kjit::test

#define KJIT_REQUIRE_DEVICE()                                                                    \
    if (::kjit::test::skip_without_device())                                                     \
    return
