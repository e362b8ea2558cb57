#pragma once
// Helpers shared by kjit's tests.

#include "core/flags.hpp"
#include "runtime/driver.hpp"
#include "runtime/engine.hpp"
#include "runtime/launch.hpp"

#include "tests/doctest.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <sstream>
#include <string>

namespace kjit::test {

/// Exit code CTest reads as "skipped" (SKIP_RETURN_CODE in tests/CMakeLists.txt).
inline constexpr int kSkipExitCode = 77;

/// Reports a test that cannot check what it claims here as skipped, with its reason: prints
/// "SKIPPED: <reason>" and, under CTest (KJIT_TEST_SKIP_EXIT set), exits with kSkipExitCode so
/// the run reports it as skipped; it never passes in silence. The caller returns after it.
inline void skip(const std::string& reason) {
    std::printf("SKIPPED: %s\n", reason.c_str());
    std::fflush(stdout);
    if (std::getenv("KJIT_TEST_SKIP_EXIT"))
        std::_Exit(kSkipExitCode);
    MESSAGE("skipped: " << reason);
}

/// Ends a GPU test when no device is usable (skip()).
inline bool skip_without_device() {
    std::string reason;
    if (device_available(&reason))
        return false;
    skip(reason);
    return true;
}

/// The seed of a randomized test: KJIT_TEST_SEED when set (to replay a failure), else a fresh
/// one. Use KJIT_TEST_RANDOM_SEED, which prints it with every failing check.
inline std::uint64_t test_seed() {
    const auto fixed = static_cast<std::uint64_t>(builtin_flags().resolve().get_int(kFlagTestSeed));
    return fixed != 0 ? fixed : (std::uint64_t{std::random_device{}()} << 32 | std::random_device{}());
}

/// A shell prefix that runs a command as an unprivileged user (uid and gid 65534, no groups)
/// when this process is root, whom file modes do not stop ("" when it is not root); nullopt
/// when root has no way to drop its privileges (setpriv is missing): skip() the test then.
inline std::optional<std::string> unprivileged_prefix() {
    if (::geteuid() != 0)
        return std::string();
    if (std::system("command -v setpriv >/dev/null 2>&1") != 0)
        return std::nullopt;
    return std::string("setpriv --reuid=65534 --regid=65534 --clear-groups ");
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

/// The bytes of `path` ("" when it cannot be read).
inline std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

/// Writes `text` to `path`, creating its directory.
inline void write_file(const std::filesystem::path& path, const std::string& text) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

/// True when `part` occurs in `s`.
inline bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

/// Runs `child` in a forked process whose files may grow to `bytes` at most (RLIMIT_FSIZE, with
/// SIGXFSZ ignored, so that a longer write fails with EFBIG, "File too large"): the child's
/// return value as its exit status, or -1 when it did not exit.
inline int exit_status_with_file_limit(rlim_t bytes, const std::function<int()>& child) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::signal(SIGXFSZ, SIG_IGN);
        const rlimit limit{bytes, bytes};
        ::setrlimit(RLIMIT_FSIZE, &limit);
        int status = 4;
        try {
            status = child();
        } catch (...) {
        }
        std::_Exit(status);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
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

/// Declares `name`, the seed of a randomized test (test::test_seed()), and has every failing
/// check of the test print it with the way to replay it.
#define KJIT_TEST_RANDOM_SEED(name)                                                              \
    const std::uint64_t name = ::kjit::test::test_seed();                                        \
    INFO("seed " << name << " (replay: KJIT_TEST_SEED=" << name << ")")
