#include "jit/remote/redis_client.hpp"

#ifdef KJIT_HAVE_HIREDIS
#include <hiredis/hiredis.h>
#endif

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>

#include <cctype>
#include <cstring>
#include <mutex>

namespace kjit {

namespace {

bool parse_number(std::string_view s, int low, int high, int* out) {
    if (s.empty() || s.size() > 5)
        return false;
    int v = 0;
    for (char c : s) {
        if (c < '0' || c > '9')
            return false;
        v = v * 10 + (c - '0');
    }
    if (v < low || v > high)
        return false;
    *out = v;
    return true;
}

/// Writes to a server that closed the connection raise SIGPIPE, which would end the process:
/// blocked in this thread for the call, and a SIGPIPE the call raised is taken back.
class SigpipeBlock {
  public:
    SigpipeBlock() {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGPIPE);
        ::pthread_sigmask(SIG_BLOCK, &set, &old_);
        sigset_t pending;
        sigpending(&pending);
        was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    }
    ~SigpipeBlock() {
        sigset_t pending;
        sigpending(&pending);
        if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1) {
            sigset_t set;
            sigemptyset(&set);
            sigaddset(&set, SIGPIPE);
            const timespec zero{};
            ::sigtimedwait(&set, nullptr, &zero);
        }
        ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    }
    SigpipeBlock(const SigpipeBlock&) = delete;
    SigpipeBlock& operator=(const SigpipeBlock&) = delete;

  private:
    sigset_t old_{};
    bool was_pending_ = false;
};

} // namespace

RedisAddress RedisAddress::parse(std::string_view url) {
    const std::string shown(url);
    const auto bad = [&](const std::string& why) {
        return ConfigError("KJIT_REMOTE_CACHE=" + shown +
                           " is not a Redis address: " + why +
                           " (expected redis://[[USER]:PASSWORD@]HOST[:PORT][/DB])");
    };
    for (char c : url)
        if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f)
            throw bad("it holds a space or a control character");
    constexpr std::string_view kScheme = "redis://";
    if (!url.starts_with(kScheme))
        throw bad(url.find("://") != std::string_view::npos
                      ? "the scheme must be redis:// (TLS and unix sockets are not supported)"
                      : "it does not start with redis://");
    std::string_view rest = url.substr(kScheme.size());
    if (rest.find_first_of("?#") != std::string_view::npos)
        throw bad("query parameters and fragments are not supported");
    RedisAddress a;
    if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
        const std::string_view info = rest.substr(0, at);
        const auto colon = info.find(':');
        if (colon == std::string_view::npos)
            throw bad("credentials must be USER:PASSWORD@ or :PASSWORD@");
        a.user = info.substr(0, colon);
        a.password = info.substr(colon + 1);
        if (a.password.empty())
            throw bad("the password before @ is empty");
        rest = rest.substr(at + 1);
    }
    std::string_view hostport = rest;
    if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
        hostport = rest.substr(0, slash);
        const std::string_view db = rest.substr(slash + 1);
        if (!db.empty() && !parse_number(db, 0, 65535, &a.db))
            throw bad("the database '" + std::string(db) + "' is not a number 0..65535");
    }
    std::string_view port;
    if (hostport.starts_with('[')) { // [IPv6]:port
        const auto close = hostport.find(']');
        if (close == std::string_view::npos)
            throw bad("an IPv6 host lacks its ']'");
        a.host = hostport.substr(1, close - 1);
        const std::string_view after = hostport.substr(close + 1);
        if (!after.empty()) {
            if (after[0] != ':')
                throw bad("'" + std::string(after) + "' follows the IPv6 host");
            port = after.substr(1);
            if (port.empty())
                throw bad("the port is empty");
        }
    } else {
        const auto colon = hostport.rfind(':');
        a.host = hostport.substr(0, colon);
        if (colon != std::string_view::npos) {
            port = hostport.substr(colon + 1);
            if (port.empty())
                throw bad("the port is empty");
        }
    }
    if (a.host.empty())
        throw bad("the host is empty");
    if (!port.empty() && !parse_number(port, 1, 65535, &a.port))
        throw bad("the port '" + std::string(port) + "' is not a number 1..65535");
    return a;
}

std::string RedisAddress::text() const {
    const bool v6 = host.find(':') != std::string::npos;
    return "redis://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + "/" +
           std::to_string(db);
}

#ifdef KJIT_HAVE_HIREDIS

#define KJIT_STRINGIFY_(x) #x
#define KJIT_STRINGIFY(x) KJIT_STRINGIFY_(x)

namespace {

/// The hiredis entry points kjit uses, from the library whose headers it was built with
/// (the reply and context layouts are those headers').
struct Hiredis {
    decltype(&::redisConnectWithTimeout) connect = nullptr;
    decltype(&::redisSetTimeout) set_timeout = nullptr;
    decltype(&::redisAppendCommandArgv) append = nullptr;
    decltype(&::redisGetReply) get_reply = nullptr;
    decltype(&::freeReplyObject) free_reply = nullptr;
    decltype(&::redisFree) free_context = nullptr;
    std::string problem; ///< why it cannot be used; "" when it can
};

constexpr const char* kLibrary = "libhiredis.so." KJIT_STRINGIFY(HIREDIS_SONAME);

const Hiredis& hiredis() {
    static const Hiredis api = [] {
        Hiredis h;
        // Never dlclose'd: one connection may outlive another's library handle otherwise.
        void* lib = ::dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char* e = ::dlerror();
            h.problem = std::string(kLibrary) + " cannot be opened (" + (e ? e : "?") +
                        "; install libhiredis, or copy it into the lib/ folder beside kjit's bin/)";
            return h;
        }
        std::string missing;
        const auto take = [&](auto& fn, const char* name) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib, name));
            if (!fn)
                missing += (missing.empty() ? "" : ", ") + std::string(name);
        };
        take(h.connect, "redisConnectWithTimeout");
        take(h.set_timeout, "redisSetTimeout");
        take(h.append, "redisAppendCommandArgv");
        take(h.get_reply, "redisGetReply");
        take(h.free_reply, "freeReplyObject");
        take(h.free_context, "redisFree");
        if (!missing.empty())
            h.problem = std::string(kLibrary) + " lacks " + missing;
        return h;
    }();
    return api;
}

RedisReply convert(const redisReply* r) {
    RedisReply out;
    switch (r->type) {
    case REDIS_REPLY_STRING:
        out.type = RedisReply::Type::string;
        out.str.assign(r->str, r->len);
        break;
    case REDIS_REPLY_STATUS:
        out.type = RedisReply::Type::status;
        out.str.assign(r->str, r->len);
        break;
    case REDIS_REPLY_ERROR:
        out.type = RedisReply::Type::error;
        out.str.assign(r->str, r->len);
        break;
    case REDIS_REPLY_INTEGER:
        out.type = RedisReply::Type::integer;
        out.integer = r->integer;
        break;
    case REDIS_REPLY_ARRAY:
        out.type = RedisReply::Type::array;
        for (std::size_t i = 0; i < r->elements; ++i)
            out.elements.push_back(convert(r->element[i]));
        break;
    default:
        break;
    }
    return out;
}

timeval to_timeval(std::chrono::milliseconds ms) {
    return {static_cast<time_t>(ms.count() / 1000),
            static_cast<suseconds_t>((ms.count() % 1000) * 1000)};
}

} // namespace

bool RedisClient::available(std::string* why_not) {
    const Hiredis& h = hiredis();
    if (why_not)
        *why_not = h.problem;
    return h.problem.empty();
}

RedisClient::RedisClient(const RedisAddress& address, std::chrono::milliseconds timeout)
    : where_(address.text()) {
    const Hiredis& h = hiredis();
    if (!h.problem.empty())
        throw RemoteStoreError(h.problem);
    redisContext* c = h.connect(address.host.c_str(), address.port, to_timeval(timeout));
    if (!c)
        throw RemoteStoreError("cannot connect to " + where_ + ": out of memory");
    context_ = c;
    if (c->err) {
        const std::string why = c->errstr;
        h.free_context(c);
        context_ = nullptr;
        throw RemoteStoreError("cannot connect to " + where_ + ": " + why);
    }
    h.set_timeout(c, to_timeval(timeout));
    std::vector<std::vector<std::string>> setup;
    if (!address.password.empty()) {
        if (address.user.empty())
            setup.push_back({"AUTH", address.password});
        else
            setup.push_back({"AUTH", address.user, address.password});
    }
    if (address.db != 0)
        setup.push_back({"SELECT", std::to_string(address.db)});
    if (setup.empty())
        return;
    const auto replies = pipeline(setup);
    for (std::size_t i = 0; i < replies.size(); ++i)
        if (replies[i].is_error())
            throw RemoteStoreError(where_ + " refused " + setup[i][0] + ": " + replies[i].str);
}

RedisClient::~RedisClient() {
    if (context_)
        hiredis().free_context(static_cast<redisContext*>(context_));
}

std::vector<RedisReply>
RedisClient::pipeline(const std::vector<std::vector<std::string>>& commands) {
    const Hiredis& h = hiredis();
    auto* c = static_cast<redisContext*>(context_);
    const auto failed = [&]() {
        std::string why = c->errstr;
        if (c->err == REDIS_ERR_IO && (why.find("temporarily unavailable") != std::string::npos ||
                                       why.find("timed out") != std::string::npos))
            why = "no answer in time (" + why + ")";
        else if (c->err == REDIS_ERR_EOF)
            why = "the server closed the connection";
        return RemoteStoreError(where_ + ": " + why);
    };
    if (c->err)
        throw failed();
    SigpipeBlock no_sigpipe;
    std::vector<const char*> argv;
    std::vector<std::size_t> lengths;
    for (const auto& args : commands) {
        argv.clear();
        lengths.clear();
        for (const auto& a : args) {
            argv.push_back(a.data());
            lengths.push_back(a.size());
        }
        if (h.append(c, static_cast<int>(args.size()), argv.data(), lengths.data()) != REDIS_OK)
            throw failed();
    }
    std::vector<RedisReply> out;
    out.reserve(commands.size());
    for (std::size_t i = 0; i < commands.size(); ++i) {
        void* reply = nullptr;
        if (h.get_reply(c, &reply) != REDIS_OK || !reply)
            throw failed();
        out.push_back(convert(static_cast<redisReply*>(reply)));
        h.free_reply(reply);
    }
    return out;
}

#else // built without hiredis's headers: no remote tier

bool RedisClient::available(std::string* why_not) {
    if (why_not)
        *why_not = "this kjit was built without hiredis (install libhiredis-dev and rebuild)";
    return false;
}

RedisClient::RedisClient(const RedisAddress& address, std::chrono::milliseconds)
    : where_(address.text()) {
    std::string why;
    available(&why);
    throw RemoteStoreError(why);
}

RedisClient::~RedisClient() = default;

std::vector<RedisReply> RedisClient::pipeline(const std::vector<std::vector<std::string>>&) {
    std::string why;
    available(&why);
    throw RemoteStoreError(why);
}

#endif

RedisReply RedisClient::command(const std::vector<std::string>& args) {
    return std::move(pipeline({args}).front());
}

} // namespace kjit
