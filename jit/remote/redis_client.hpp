#pragma once
// A blocking Redis connection through hiredis, which is opened with dlopen: a kjit binary
// starts where libhiredis is absent (it then has no remote tier and says why). The hiredis
// headers stay inside jit/remote/redis_client.cpp; a build without them has no remote tier.

#include "core/error.hpp"

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace kjit {

/// Where a Redis server is, as `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]` names it.
struct RedisAddress {
    std::string host;
    int port = 6379;
    int db = 0;
    std::string user;     ///< empty: AUTH with the password only (or no AUTH)
    std::string password; ///< empty: no AUTH
    /// ConfigError naming what is wrong (scheme, empty host, port outside 1..65535, a database
    /// that is not a number 0..65535, a character outside the URL's syntax).
    static RedisAddress parse(std::string_view url);
    /// `redis://host:port/db`, without the credentials (for messages).
    [[nodiscard]] std::string text() const;
};

/// One reply of the server.
struct RedisReply {
    enum class Type { nil, string, integer, status, error, array };
    Type type = Type::nil;
    std::string str; ///< string, status or error text
    long long integer = 0;
    std::vector<RedisReply> elements;
    [[nodiscard]] bool is_error() const { return type == Type::error; }
};

/// The store cannot be used: it did not answer in time, closed the connection, or cannot be
/// reached. The connection is unusable afterwards.
class RemoteStoreError : public Error {
  public:
    using Error::Error;
};

/// One connection to one Redis server; not thread-safe (callers hold a lock). Writes to a
/// server that went away never raise SIGPIPE in the process.
class RedisClient {
  public:
    /// True when hiredis can be used; `why_not` says otherwise ("this kjit was built without
    /// hiredis", "libhiredis.so.0.14 cannot be opened: ...").
    static bool available(std::string* why_not = nullptr);
    /// Connects within `timeout`, then AUTH and SELECT as the address says; every later
    /// command waits at most `timeout` for the server to answer. RemoteStoreError when not.
    RedisClient(const RedisAddress& address, std::chrono::milliseconds timeout);
    ~RedisClient();
    RedisClient(const RedisClient&) = delete;
    RedisClient& operator=(const RedisClient&) = delete;

    /// Sends every command at once and reads the replies in order (one round trip). Error
    /// replies are returned; RemoteStoreError when the connection fails or times out.
    std::vector<RedisReply> pipeline(const std::vector<std::vector<std::string>>& commands);
    /// One command.
    RedisReply command(const std::vector<std::string>& args);

  private:
    void* context_ = nullptr; ///< redisContext*
    std::string where_;       ///< the address, for messages
};

} // namespace kjit
