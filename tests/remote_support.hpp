#pragma once
// A real redis-server for the remote-tier tests, started on a free loopback port in a
// directory of its own (no persistence), and a TCP proxy that delays the server's answers.

#include "jit/remote/redis_client.hpp"
#include "tests/support.hpp"

#include "tests/doctest.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace kjit::test {

/// Reports the test skipped with its reason (exit 77 under CTest, read as skipped).
inline void skip_test(const std::string& reason) {
    std::printf("SKIPPED: %s\n", reason.c_str());
    std::fflush(stdout);
    if (std::getenv("KJIT_TEST_SKIP_EXIT"))
        std::_Exit(kSkipExitCode);
    MESSAGE("skipped: " << reason);
}

/// redis-server's path, or "" when it is not installed.
inline std::string redis_server_binary() {
    for (const char* p : {"/usr/bin/redis-server", "/usr/local/bin/redis-server"})
        if (::access(p, X_OK) == 0)
            return p;
    return {};
}

/// Ends a test that needs redis-server where it is not installed (skipped, with the reason).
#define KJIT_REQUIRE_REDIS()                                                                     \
    if (::kjit::test::redis_server_binary().empty()) {                                           \
        ::kjit::test::skip_test("redis-server is not installed (Debian package redis-server; "   \
                                "scripts/build.sh installs it)");                                \
        return;                                                                                  \
    }

/// A loopback port nothing listens on at the moment of the call.
inline int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

/// A redis-server of this test, stopped with the object.
class RedisServer {
  public:
    RedisServer() : port_(free_port()) { start(); }
    ~RedisServer() { stop(); }
    RedisServer(const RedisServer&) = delete;
    RedisServer& operator=(const RedisServer&) = delete;

    [[nodiscard]] int port() const { return port_; }
    [[nodiscard]] std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

    /// Starts the server (again, on the same port) and waits until it answers.
    void start() {
        const std::string bin = redis_server_binary();
        const std::string port = std::to_string(port_);
        const std::string dir = dir_.path().string();
        std::vector<std::string> args{bin,     "--port", port,       "--bind",       "127.0.0.1",
                                      "--save", "",      "--appendonly", "no", "--dir",
                                      dir,     "--logfile", dir + "/redis.log", "--protected-mode",
                                      "no"};
        std::vector<char*> argv;
        for (auto& a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        REQUIRE(::posix_spawn(&pid_, bin.c_str(), nullptr, nullptr, argv.data(), environ) == 0);
        for (int i = 0; i < 500; ++i) {
            try {
                RedisClient c(RedisAddress::parse(url()), std::chrono::milliseconds(200));
                if (c.command({"PING"}).str == "PONG")
                    return;
            } catch (const RemoteStoreError&) {
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        FAIL("redis-server did not start on port " << port_);
    }
    /// SIGKILL: the server is gone at once, mid-answer or not.
    void kill() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
            pid_ = -1;
        }
    }
    void stop() {
        if (pid_ > 0) {
            ::kill(pid_, SIGTERM);
            ::waitpid(pid_, nullptr, 0);
            pid_ = -1;
        }
    }
    /// A connection to the server, for setting it up and looking into it.
    [[nodiscard]] RedisClient client() const {
        return RedisClient(RedisAddress::parse(url()), std::chrono::milliseconds(2000));
    }

  private:
    TempDir dir_;
    int port_;
    pid_t pid_ = -1;
};

/// Fills the server past its memory limit for good: 3 MiB of other keys, then a limit of
/// 1 MiB without eviction, so that every write is refused (OOM) whatever memory the server's
/// clients free afterwards.
inline void fill_to_maxmemory(RedisClient& store) {
    const std::string junk(64 * 1024, 'j');
    for (int i = 0; i < 48; ++i)
        REQUIRE_FALSE(store.command({"SET", "junk:" + std::to_string(i), junk}).is_error());
    REQUIRE(store.command({"CONFIG", "SET", "maxmemory-policy", "noeviction"}).str == "OK");
    REQUIRE(store.command({"CONFIG", "SET", "maxmemory", "1mb"}).str == "OK");
    const RedisReply refused = store.command({"SET", "one-more", junk});
    REQUIRE(refused.is_error());
    REQUIRE(refused.str.starts_with("OOM"));
}

/// A TCP proxy on a loopback port in front of `target_port` that holds every chunk the server
/// sends for `delay` before passing it on: a store that answers slowly.
class DelayProxy {
  public:
    DelayProxy(int target_port, std::chrono::milliseconds delay)
        : target_(target_port), delay_(delay) {
        listen_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(::bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
        socklen_t len = sizeof a;
        ::getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
        REQUIRE(::listen(listen_, 64) == 0);
        acceptor_ = std::thread([this] { accept_loop(); });
    }
    ~DelayProxy() {
        stop_ = true;
        ::shutdown(listen_, SHUT_RDWR);
        acceptor_.join();
        std::lock_guard lock(mutex_);
        for (auto& t : pipes_)
            t.join();
        ::close(listen_);
    }
    DelayProxy(const DelayProxy&) = delete;
    DelayProxy& operator=(const DelayProxy&) = delete;
    [[nodiscard]] std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

  private:
    void accept_loop() {
        while (!stop_) {
            const int client = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
            if (client < 0)
                return;
            const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            sockaddr_in a{};
            a.sin_family = AF_INET;
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            a.sin_port = htons(static_cast<std::uint16_t>(target_));
            if (::connect(server, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
                ::close(client);
                ::close(server);
                continue;
            }
            std::lock_guard lock(mutex_);
            pipes_.emplace_back([this, client, server] { relay(client, server); });
        }
    }
    /// Passes bytes both ways until either side closes; the server's after the delay.
    void relay(int client, int server) {
        char buf[65536];
        pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
        while (!stop_) {
            if (::poll(fds, 2, 50) < 0)
                break;
            bool closed = false;
            for (int side = 0; side < 2 && !closed; ++side) {
                if (!(fds[side].revents & (POLLIN | POLLHUP | POLLERR)))
                    continue;
                const ssize_t n = ::recv(fds[side].fd, buf, sizeof buf, 0);
                if (n <= 0) {
                    closed = true;
                    break;
                }
                if (side == 1)
                    std::this_thread::sleep_for(delay_);
                if (::send(fds[1 - side].fd, buf, static_cast<std::size_t>(n), MSG_NOSIGNAL) != n)
                    closed = true;
            }
            if (closed)
                break;
        }
        ::close(client);
        ::close(server);
    }

    int target_;
    std::chrono::milliseconds delay_;
    int listen_ = -1;
    int port_ = 0;
    std::atomic<bool> stop_{false};
    std::thread acceptor_;
    std::mutex mutex_;
    std::vector<std::thread> pipes_;
};

} // namespace kjit::test
