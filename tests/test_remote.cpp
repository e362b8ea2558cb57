// The remote cache tier in one process: addresses and secrets are checked, entries are signed
// and every poisoned one refused, a remote hit is verified and written to disk, leases make
// hosts (here: threads with a cache each) compile a key once, and a store that is down, slow
// or full costs one warning and never a failed or blocked start-up. Each test that needs a
// store starts its own redis-server; without one installed it reports itself skipped.
#include "jit/compile_cache.hpp"
#include "jit/remote/remote_cache.hpp"
#include "tests/remote_support.hpp"

#include "tests/doctest.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <thread>

using namespace kjit;
using kjit::test::contains;
using kjit::test::RedisServer;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

constexpr const char* kTiny = "#ifndef V\n#define V 1\n#endif\n"
                              "extern \"C\" __global__ void tiny(int* y) {\n"
                              "    y[threadIdx.x] = V * (int)threadIdx.x;\n"
                              "}\n";
constexpr const char* kSecret = "0123456789abcdef0123456789abcdef";

SourceSet tiny_sources() {
    SourceSet s;
    s.add({"tiny.cu", "kernels/tiny.cu", kTiny, hash128(kTiny), 1});
    return s;
}

CompileRequest tiny(int v) {
    CompileRequest r{"tiny", {}};
    r.options.defines["V"] = std::to_string(v);
    return r;
}

fs::path write_secret(const fs::path& dir, const std::string& text = kSecret,
                      mode_t mode = 0600) {
    const fs::path p = dir / "secret";
    std::ofstream(p, std::ios::binary) << text;
    ::chmod(p.c_str(), mode);
    return p;
}

/// Warnings collected from any thread.
struct Warnings {
    std::mutex mutex;
    std::vector<std::string> seen;
    WarningSink sink() {
        return [this](const std::string& m) {
            std::lock_guard lock(mutex);
            seen.push_back(m);
        };
    }
    std::size_t count(const std::string& part) {
        std::lock_guard lock(mutex);
        std::size_t n = 0;
        for (const auto& w : seen)
            n += contains(w, part) ? 1 : 0;
        return n;
    }
    std::string all() {
        std::lock_guard lock(mutex);
        std::string s;
        for (const auto& w : seen)
            s += w + "\n";
        return s;
    }
};

RemoteSettings remote_at(const std::string& url, const fs::path& secret) {
    RemoteSettings r;
    r.url = url;
    r.secret = secret;
    r.timeout = milliseconds(2000);
    return r;
}

CacheSettings cache_settings(const fs::path& dir, const RemoteSettings& remote,
                             const WarningSink& warn = {}) {
    CacheSettings s;
    s.dir = dir;
    s.jobs = 2;
    s.remote = remote;
    s.warn = warn;
    s.lock_wait = milliseconds(20000);
    return s;
}

std::string config_error(const std::function<void()>& f) {
    try {
        f();
    } catch (const ConfigError& e) {
        return e.message;
    }
    return "(no error)";
}

double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

CacheKey key_of(int v) {
    const CompileRequest r = tiny(v);
    return make_cache_key(tiny_sources(), r.kernel, r.options);
}

} // namespace

TEST_SUITE("cache") {

TEST_CASE("a Redis address is parsed and a malformed one is refused saying what is wrong") {
    RedisAddress a = RedisAddress::parse("redis://127.0.0.1:6390/3");
    CHECK(a.host == "127.0.0.1");
    CHECK(a.port == 6390);
    CHECK(a.db == 3);
    a = RedisAddress::parse("redis://cache.example");
    CHECK(a.port == 6379);
    CHECK(a.db == 0);
    a = RedisAddress::parse("redis://kjit:pw@[::1]:7000/");
    CHECK(a.host == "::1");
    CHECK(a.user == "kjit");
    CHECK(a.password == "pw");
    CHECK(a.text() == "redis://[::1]:7000/0"); // never the password
    CHECK(RedisAddress::parse("redis://:pw@h").user.empty());
    const std::string tail = " (expected redis://[[USER]:PASSWORD@]HOST[:PORT][/DB])";
    const auto refused = [&](const std::string& url) {
        return config_error([&] { (void)RedisAddress::parse(url); });
    };
    CHECK(refused("redis://h:70000") ==
          "KJIT_REMOTE_CACHE=redis://h:70000 is not a Redis address: the port '70000' is not a "
          "number 1..65535" + tail);
    CHECK(contains(refused("rediss://h"), "the scheme must be redis:// (TLS and unix sockets"));
    CHECK(contains(refused("h:6379"), "it does not start with redis://"));
    CHECK(contains(refused("redis://"), "the host is empty"));
    CHECK(contains(refused("redis://:6379"), "the host is empty"));
    CHECK(contains(refused("redis://h:0"), "the port '0' is not a number 1..65535"));
    CHECK(contains(refused("redis://h:x1"), "the port 'x1' is not a number"));
    CHECK(contains(refused("redis://h:"), "the port is empty"));
    CHECK(contains(refused("redis://h/db1"), "the database 'db1' is not a number 0..65535"));
    CHECK(contains(refused("redis://h/?x=1"), "query parameters and fragments are not supported"));
    CHECK(contains(refused("redis://pw@h"), "credentials must be USER:PASSWORD@ or :PASSWORD@"));
    CHECK(contains(refused("redis://u:@h"), "the password before @ is empty"));
    CHECK(contains(refused("redis://h :1"), "it holds a space or a control character"));
    CHECK(contains(refused("redis://[::1:7"), "an IPv6 host lacks its ']'"));
}

TEST_CASE("a secret file must be the user's own and long enough and readable by no one else") {
    test::TempDir dir;
    const fs::path ok = write_secret(dir.path(), std::string(kSecret) + "\n");
    const SigningKey key = SigningKey::from_file(ok);
    CHECK(key.origin() == ok.string());
    // The trailing newline is not part of the secret.
    CHECK(key.sign("m") == SigningKey::from_bytes(kSecret).sign("m"));
    CHECK(SigningKey::from_bytes(kSecret).sign("m") != SigningKey::from_bytes("x" + std::string(kSecret)).sign("m"));
    ::chmod(ok.c_str(), 0400);
    CHECK_NOTHROW((void)SigningKey::from_file(ok));
    const auto refused = [](const fs::path& p) {
        return config_error([&] { (void)SigningKey::from_file(p); });
    };
    ::chmod(ok.c_str(), 0644);
    CHECK(refused(ok) == "remote cache secret " + ok.string() +
                             " (KJIT_REMOTE_SECRET) is readable by group or others (mode 644): "
                             "the secret would not be secret; chmod 600 it");
    ::chmod(ok.c_str(), 0640);
    CHECK(contains(refused(ok), "is readable by group or others (mode 640)"));
    ::chmod(ok.c_str(), 0604);
    CHECK(contains(refused(ok), "is readable by group or others (mode 604)"));
    ::chmod(ok.c_str(), 0620);
    CHECK(contains(refused(ok), "is writable by group or others (mode 620)"));
    const fs::path short_one = write_secret(dir.path(), "tooshort\n");
    CHECK(contains(refused(short_one), "holds 8 bytes; a secret needs at least 16"));
    CHECK(contains(refused(dir.path() / "none"), "cannot be opened: No such file or directory"));
    CHECK(contains(refused(dir.path()), "is a directory, not a file"));
    const fs::path fifo = dir.path() / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK(contains(refused(fifo), "is a FIFO, not a file")); // and it did not block
    CHECK(contains(config_error([] { (void)SigningKey::from_bytes("short"); }),
                   "holds 5 bytes; a secret needs at least 16"));
}

TEST_CASE("a secret file of another user is refused") {
    if (::geteuid() != 0) {
        test::skip_test("needs root to give a file to another user");
        return;
    }
    test::TempDir dir;
    const fs::path p = write_secret(dir.path());
    REQUIRE(::chown(p.c_str(), 65534, 65534) == 0);
    CHECK(config_error([&] { (void)SigningKey::from_file(p); }) ==
          "remote cache secret " + p.string() +
              " (KJIT_REMOTE_SECRET) is owned by uid 65534, not by uid 0: only its owner's "
              "secret is used");
}

TEST_CASE("a remote entry round-trips signed and every changed byte of it is refused") {
    const SigningKey key = SigningKey::from_bytes(kSecret);
    const CacheEntry e{hash128("k"), "kernel=tiny\narch=sm_90\n", std::string(100, '\x5a')};
    const std::string bytes = encode_remote_entry(e, &key);
    std::string problem;
    const auto back = decode_remote_entry(bytes, e.key, &key, &problem);
    REQUIRE(back);
    CHECK(back->meta == e.meta);
    CHECK(back->payload == e.payload);
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        std::string bad = bytes;
        bad[i] = static_cast<char>(bad[i] ^ 0x01);
        problem.clear();
        CHECK_MESSAGE(!decode_remote_entry(bad, e.key, &key, &problem), "byte " << i);
        CHECK(!problem.empty());
    }
    CHECK_FALSE(decode_remote_entry(bytes.substr(0, bytes.size() - 1), e.key, &key, &problem));
    CHECK(contains(problem, "signature does not verify"));
    CHECK_FALSE(decode_remote_entry(bytes.substr(0, 10), e.key, &key, &problem));
    CHECK(problem == "truncated: 10 bytes, shorter than the envelope's header");
    CHECK_FALSE(decode_remote_entry("GARBAGE-GARBAGE-" + std::string(60, 'x'), e.key, &key,
                                    &problem));
    CHECK(problem == "not a kjit remote entry (bad magic)");
    std::size_t need = 0;
    CHECK(peek_remote_meta(bytes) == e.meta);
    // Shorter than the headers: the headers are needed first; then the whole meta text.
    CHECK(peek_remote_meta(bytes.substr(0, 100), &need).empty());
    CHECK(need == 128);
    CHECK(peek_remote_meta(bytes.substr(0, 130), &need).empty());
    CHECK(need == 128 + e.meta.size());
    CHECK(peek_remote_meta(bytes.substr(0, need), &need) == e.meta);
    CHECK(need == 0);
}

TEST_CASE("poisoned entries are refused: another secret or a swapped payload or a replay or unsigned") {
    const SigningKey key = SigningKey::from_bytes(kSecret);
    const SigningKey other = SigningKey::from_bytes("another secret, 32 bytes long...");
    const CacheEntry a{hash128("a"), "kernel=a\n", std::string(64, 'A')};
    const CacheEntry b{hash128("b"), "kernel=b\n", std::string(64, 'B')};
    std::string problem;
    CHECK_FALSE(decode_remote_entry(encode_remote_entry(a, &other), a.key, &key, &problem));
    CHECK(problem == "signature does not verify (signed with another secret, or altered)");
    // A's signed header over an entry of A's key with B's payload, checksums made to match.
    const std::string signed_a = encode_remote_entry(a, &key);
    const std::string swapped =
        signed_a.substr(0, kRemoteHeaderBytes) + encode_entry({a.key, a.meta, b.payload});
    CHECK_FALSE(decode_remote_entry(swapped, a.key, &key, &problem));
    CHECK(problem == "signature does not verify (signed with another secret, or altered)");
    // A's entry, correctly signed, stored under B's key.
    CHECK_FALSE(decode_remote_entry(signed_a, b.key, &key, &problem));
    CHECK(problem == "holds key " + a.key.hex() + " under key " + b.key.hex() +
                         " (an entry replayed under another key)");
    CHECK_FALSE(decode_remote_entry(encode_remote_entry(a, nullptr), a.key, &key, &problem));
    CHECK(problem == "unsigned, and a secret is set (KJIT_REMOTE_SECRET): only entries signed "
                     "with it are served");
    // Unsigned mode checks what it can: the key and the entry's own checksums.
    CHECK(decode_remote_entry(encode_remote_entry(a, nullptr), a.key, nullptr, &problem));
    CHECK_FALSE(decode_remote_entry(signed_a, b.key, nullptr, &problem));
    std::string flipped = encode_remote_entry(a, nullptr);
    flipped.back() = 'Z';
    CHECK_FALSE(decode_remote_entry(flipped, a.key, nullptr, &problem));
    CHECK(problem == "entry payload checksum mismatch");
}

TEST_CASE("without a secret the remote tier is off with one warning unless unsigned is allowed") {
    Warnings w;
    RemoteSettings s;
    s.url = "redis://127.0.0.1:1";
    RemoteCache off(s, w.sink());
    CHECK_FALSE(off.enabled());
    CHECK(w.all() == "remote cache redis://127.0.0.1:1/0 prefix kjit is off: KJIT_REMOTE_SECRET is "
                     "not set: entries must be signed (set it to an owner-only secret file, or "
                     "KJIT_REMOTE_UNSIGNED=1 to trust every writer of the store)\n");
    s.allow_unsigned = true;
    Warnings quiet;
    RemoteCache on(s, quiet.sink());
    CHECK(on.enabled());
    CHECK(quiet.seen.empty());
    CHECK(contains(on.signing(), "UNSIGNED"));
    s.prefix = "bad prefix";
    CHECK(config_error([&] { RemoteCache bad(s); }) ==
          "KJIT_REMOTE_PREFIX='bad prefix' must be 1 to 64 letters, digits and _ - . : /");
    // A configuration error stops the cache from being made at all.
    test::TempDir dir;
    const fs::path secret = write_secret(dir.path(), kSecret, 0644);
    CHECK(contains(config_error([&] {
                       CompileCache c(cache_settings(dir.path() / "c",
                                                     remote_at("redis://127.0.0.1:1", secret)));
                   }),
                   "is readable by group or others (mode 644)"));
}

TEST_CASE("a remote hit is verified and written to disk and a compile is written to both tiers") {
    KJIT_REQUIRE_REDIS();
    RedisServer redis;
    test::TempDir dir;
    const RemoteSettings remote = remote_at(redis.url(), write_secret(dir.path()));
    const SourceSet src = tiny_sources();
    Warnings w;
    CompileCache first(cache_settings(dir.path() / "a", remote, w.sink()));
    const Specialized a = first.get(src, tiny(7));
    REQUIRE(a.compiled);
    CHECK(a.origin == Origin::compiled);
    CHECK(fs::exists(dir.path() / "a" / (a.key.hex() + ".kjit")));
    RedisClient store = redis.client();
    const RedisReply stored = store.command({"GET", "kjit:e:" + a.key.hex()});
    REQUIRE(stored.type == RedisReply::Type::string);
    CHECK(stored.str.substr(0, 8) == "KJITSIGN");
    CHECK(first.remote()->stats().stores == 1);

    CompileCache second(cache_settings(dir.path() / "b", remote, w.sink()));
    const Specialized b = second.get(src, tiny(7));
    REQUIRE(b.compiled);
    CHECK(b.origin == Origin::remote);
    CHECK(b.compiled->cubin == a.compiled->cubin);
    CHECK(b.compiled->kernel == "tiny");
    CHECK(fs::exists(dir.path() / "b" / (a.key.hex() + ".kjit")));
    CompileCache third(cache_settings(dir.path() / "b", remote, w.sink()));
    CHECK(third.get(src, tiny(7)).origin == Origin::disk);
    // No lease is left behind.
    CHECK(store.command({"EXISTS", "kjit:l:" + a.key.hex()}).integer == 0);
    CHECK(w.seen.empty());
    // --no-cache (use_disk off) leaves the remote tier alone too.
    CacheSettings off = cache_settings(dir.path() / "c", remote);
    off.use_disk = false;
    CompileCache none(off);
    CHECK(none.remote() == nullptr);
    CHECK(none.get(src, tiny(7)).origin == Origin::compiled);
}

TEST_CASE("poisoned remote entries are refused and reported and never served and then replaced") {
    KJIT_REQUIRE_REDIS();
    RedisServer redis;
    test::TempDir dir;
    const fs::path secret = write_secret(dir.path());
    const RemoteSettings remote = remote_at(redis.url(), secret);
    const SourceSet src = tiny_sources();
    std::vector<CompileRequest> requests;
    for (int v = 0; v < 6; ++v)
        requests.push_back(tiny(100 + v));
    // The honest compiles, on a cache without a remote tier.
    CompileCache honest(cache_settings(dir.path() / "honest", RemoteSettings{}));
    const auto good = honest.get_all(src, requests);
    for (const auto& g : good)
        REQUIRE(g.compiled);
    const SigningKey key = SigningKey::from_file(secret);
    const SigningKey other = SigningKey::from_bytes("an attacker's secret of 32 bytes");
    const auto entry = [&](std::size_t i) {
        return CacheEntry{good[i].key.hash, entry_meta(good[i].key, *good[i].compiled),
                          good[i].compiled->cubin};
    };
    const auto name = [&](std::size_t i) { return "kjit:e:" + good[i].key.hex(); };
    RedisClient store = redis.client();
    store.command({"SET", name(0), encode_remote_entry(entry(0), &other)});
    const std::string signed1 = encode_remote_entry(entry(1), &key);
    CacheEntry swapped = entry(1);
    swapped.payload = good[2].compiled->cubin;
    store.command({"SET", name(1), signed1.substr(0, kRemoteHeaderBytes) + encode_entry(swapped)});
    store.command({"SET", name(2), encode_remote_entry(entry(3), &key)}); // replayed
    store.command({"SET", name(3), encode_remote_entry(entry(3), nullptr)});
    store.command({"SET", name(4), "not an entry at all"});
    store.command({"RPUSH", name(5), "a list"});

    Warnings w;
    CompileCache victim(cache_settings(dir.path() / "victim", remote, w.sink()));
    const auto got = victim.get_all(src, requests);
    INFO(w.all());
    for (std::size_t i = 0; i < got.size(); ++i) {
        REQUIRE(got[i].compiled);
        CHECK(got[i].origin == Origin::compiled);
        CHECK(got[i].compiled->cubin == good[i].compiled->cubin);
    }
    const std::string from = " from redis://127.0.0.1:" + std::to_string(redis.port()) + "/0: ";
    const std::string end = "; it is not served, the kernel is compiled here";
    CHECK(w.count("refusing remote cache entry " + name(0) + from +
                  "signature does not verify (signed with another secret, or altered)" + end) == 1);
    CHECK(w.count("refusing remote cache entry " + name(1) + from +
                  "signature does not verify") == 1);
    CHECK(w.count("refusing remote cache entry " + name(2) + from + "holds key " +
                  good[3].key.hex() + " under key " + good[2].key.hex()) == 1);
    CHECK(w.count("refusing remote cache entry " + name(3) + from + "unsigned, and a secret") == 1);
    CHECK(w.count("refusing remote cache entry " + name(4) + from +
                  "truncated: 19 bytes, shorter than the envelope's header") == 1);
    CHECK(w.count("refusing remote cache entry " + name(5) + from + "not an entry (WRONGTYPE") ==
          1);
    CHECK(w.seen.size() == 6);
    CHECK(victim.remote()->stats().refused == 6);
    // The compiles were written through over the poisoned entries: the next host hits.
    CompileCache next(cache_settings(dir.path() / "next", remote, w.sink()));
    for (const auto& r : next.get_all(src, requests))
        CHECK(r.origin == Origin::remote);
    CHECK(w.seen.size() == 6);
}

TEST_CASE("hosts missing the same keys at once compile each key once") {
    KJIT_REQUIRE_REDIS();
    RedisServer redis;
    test::TempDir dir;
    const RemoteSettings remote = remote_at(redis.url(), write_secret(dir.path()));
    const SourceSet src = tiny_sources();
    std::vector<CompileRequest> requests;
    for (int v = 0; v < 12; ++v)
        requests.push_back(tiny(200 + v));
    constexpr int kHosts = 4;
    std::vector<std::vector<Specialized>> results(kHosts);
    Warnings w;
    std::vector<std::thread> hosts;
    for (int h = 0; h < kHosts; ++h)
        hosts.emplace_back([&, h] {
            CompileCache c(cache_settings(dir.path() / ("host" + std::to_string(h)), remote,
                                          w.sink()));
            results[h] = c.get_all(src, requests);
        });
    for (auto& t : hosts)
        t.join();
    std::map<std::string, int> compiles;
    for (const auto& host : results)
        for (const auto& r : host) {
            REQUIRE(r.compiled);
            CHECK((r.origin == Origin::compiled || r.origin == Origin::remote));
            compiles[r.key.hex()] += r.origin == Origin::compiled ? 1 : 0;
            CHECK(r.compiled->cubin == results[0][&r - host.data()].compiled->cubin);
        }
    CHECK(compiles.size() == requests.size());
    for (const auto& [key, n] : compiles)
        CHECK_MESSAGE(n == 1, key << " compiled " << n << " times");
    CHECK(w.seen.empty());
}

TEST_CASE("a lease is renewed while held and released after and another holder's is not taken") {
    KJIT_REQUIRE_REDIS();
    RedisServer redis;
    test::TempDir dir;
    RemoteSettings s = remote_at(redis.url(), write_secret(dir.path()));
    s.lease = milliseconds(1500); // renewed every 500 ms: a loaded CI machine keeps up
    const Hash128 k = hash128("a key");
    auto a = std::make_unique<RemoteCache>(s);
    RemoteCache b(s);
    REQUIRE(a->claim(std::span(&k, 1), 4) == std::vector<std::size_t>{0});
    std::this_thread::sleep_for(milliseconds(4500)); // three lease lives
    CHECK(b.claim(std::span(&k, 1), 4) == std::vector<std::size_t>{});
    CHECK(contains(b.lease_holder(k), "process " + std::to_string(::getpid()) + " on host "));
    RedisClient store = redis.client();
    CHECK(store.command({"PTTL", "kjit:l:" + k.hex()}).integer > 0);
    a->release(std::span(&k, 1));
    CHECK(store.command({"EXISTS", "kjit:l:" + k.hex()}).integer == 0);
    REQUIRE(b.claim(std::span(&k, 1), 4) == std::vector<std::size_t>{0});
    // a no longer holds it: releasing again (or a's end) leaves b's lease alone.
    a->release(std::span(&k, 1));
    a.reset();
    CHECK(store.command({"GET", "kjit:l:" + k.hex()}).type == RedisReply::Type::string);
}

TEST_CASE("a dead holder's lease expires and a waiter compiles the key") {
    KJIT_REQUIRE_REDIS();
    RedisServer redis;
    test::TempDir dir;
    const RemoteSettings remote = remote_at(redis.url(), write_secret(dir.path()));
    RedisClient store = redis.client();
    store.command({"SET", "kjit:l:" + key_of(300).hex(), "4242@deadhost/0", "PX", "700"});
    Warnings w;
    CompileCache c(cache_settings(dir.path() / "c", remote, w.sink()));
    const auto start = Clock::now();
    const Specialized r = c.get(tiny_sources(), tiny(300));
    const double took = seconds_since(start);
    REQUIRE(r.compiled);
    CHECK(r.origin == Origin::compiled);
    CHECK(took >= 0.6);
    CHECK(took < 10);
    CHECK(w.seen.empty());
    CHECK(store.command({"EXISTS", "kjit:e:" + r.key.hex()}).integer == 1);
}

TEST_CASE("a holder that never finishes delays a compile by the lock wait and no more") {
    KJIT_REQUIRE_REDIS();
    RedisServer redis;
    test::TempDir dir;
    const RemoteSettings remote = remote_at(redis.url(), write_secret(dir.path()));
    RedisClient store = redis.client();
    store.command({"SET", "kjit:l:" + key_of(301).hex(), "4242@deadhost/0", "PX", "600000"});
    Warnings w;
    CacheSettings s = cache_settings(dir.path() / "c", remote, w.sink());
    s.lock_wait = milliseconds(1000);
    CompileCache c(s);
    const auto start = Clock::now();
    const Specialized r = c.get(tiny_sources(), tiny(301));
    const double took = seconds_since(start);
    REQUIRE(r.compiled);
    CHECK(r.origin == Origin::compiled);
    CHECK(took >= 1.0);
    CHECK(took < 10);
    CHECK(w.all() == "process 4242 on host deadhost still holds the remote lease of kernel tiny "
                     "(redis://127.0.0.1:" + std::to_string(redis.port()) +
                         "/0 prefix kjit) after 1 s (KJIT_CACHE_LOCK_WAIT): 1 kernel(s) are "
                         "compiled here without waiting\n");
    // Written through all the same: the next host hits.
    CompileCache next(cache_settings(dir.path() / "n", remote, w.sink()));
    CHECK(next.get(tiny_sources(), tiny(301)).origin == Origin::remote);
}

TEST_CASE("a store that is down costs one warning and never a failed or blocked compile") {
    test::TempDir dir;
    const int port = test::free_port();
    const RemoteSettings remote =
        remote_at("redis://127.0.0.1:" + std::to_string(port), write_secret(dir.path()));
    Warnings w;
    CompileCache c(cache_settings(dir.path() / "c", remote, w.sink()));
    const auto results = c.get_all(tiny_sources(), std::vector{tiny(400), tiny(401)});
    for (const auto& r : results) {
        REQUIRE(r.compiled);
        CHECK(r.origin == Origin::compiled);
    }
    CHECK(c.get(tiny_sources(), tiny(402)).compiled);
    CHECK(w.all() == "remote cache redis://127.0.0.1:" + std::to_string(port) +
                         "/0 prefix kjit is off for this process: cannot connect to "
                         "redis://127.0.0.1:" + std::to_string(port) +
                         "/0: Connection refused; kernels are compiled and cached on this host "
                         "only\n");
    CHECK_FALSE(c.remote()->enabled());
}

TEST_CASE("a store killed between requests then restarted fails nothing") {
    KJIT_REQUIRE_REDIS();
    RedisServer redis;
    test::TempDir dir;
    const RemoteSettings remote = remote_at(redis.url(), write_secret(dir.path()));
    Warnings w;
    CompileCache c(cache_settings(dir.path() / "c", remote, w.sink()));
    CHECK(c.get(tiny_sources(), tiny(500)).origin == Origin::compiled);
    redis.kill();
    const auto after = c.get_all(tiny_sources(), std::vector{tiny(501), tiny(502)});
    for (const auto& r : after) {
        REQUIRE(r.compiled);
        CHECK(r.origin == Origin::compiled);
    }
    CHECK(w.seen.size() == 1);
    CHECK(contains(w.all(), "is off for this process: redis://127.0.0.1:"));
    redis.start(); // empty: nothing was saved
    CompileCache again(cache_settings(dir.path() / "d", remote, w.sink()));
    CHECK(again.get(tiny_sources(), tiny(501)).origin == Origin::compiled);
    CompileCache next(cache_settings(dir.path() / "e", remote, w.sink()));
    CHECK(next.get(tiny_sources(), tiny(501)).origin == Origin::remote);
    CHECK(w.seen.size() == 1);
}

TEST_CASE("a full store is still read and writes and leases stop with one warning") {
    KJIT_REQUIRE_REDIS();
    RedisServer redis;
    test::TempDir dir;
    const RemoteSettings remote = remote_at(redis.url(), write_secret(dir.path()));
    CompileCache writer(cache_settings(dir.path() / "w", remote));
    REQUIRE(writer.get(tiny_sources(), tiny(600)).origin == Origin::compiled);
    RedisClient store = redis.client();
    test::fill_to_maxmemory(store);
    Warnings w;
    CompileCache c(cache_settings(dir.path() / "c", remote, w.sink()));
    const auto got = c.get_all(tiny_sources(), std::vector{tiny(600), tiny(601), tiny(602)});
    for (const auto& r : got)
        REQUIRE(r.compiled);
    CHECK(got[0].origin == Origin::remote);
    CHECK(got[1].origin == Origin::compiled);
    CHECK(got[2].origin == Origin::compiled);
    CHECK(w.seen.size() == 1);
    CHECK(contains(w.all(), " is full (OOM command not allowed when used memory > 'maxmemory'"));
    CHECK(contains(w.all(), "compiled kernels are no longer written to it and no leases are "
                            "taken; it is still read"));
}

TEST_CASE("a store that answers slowly is given up after the timeout once") {
    KJIT_REQUIRE_REDIS();
    RedisServer redis;
    test::TempDir dir;
    const fs::path secret = write_secret(dir.path());
    CompileCache writer(cache_settings(dir.path() / "w", remote_at(redis.url(), secret)));
    REQUIRE(writer.get(tiny_sources(), tiny(700)).compiled);
    {
        // Slower than the timeout: off after one timeout, and the start-up goes on.
        test::DelayProxy slow(redis.port(), milliseconds(1500));
        RemoteSettings remote = remote_at(slow.url(), secret);
        remote.timeout = milliseconds(200);
        Warnings w;
        CompileCache c(cache_settings(dir.path() / "c", remote, w.sink()));
        const auto start = Clock::now();
        const auto got = c.get_all(tiny_sources(), std::vector{tiny(700), tiny(701)});
        CHECK(seconds_since(start) < 5);
        for (const auto& r : got) {
            REQUIRE(r.compiled);
            CHECK(r.origin == Origin::compiled);
        }
        CHECK(w.seen.size() == 1);
        CHECK(contains(w.all(), "is off for this process: redis://127.0.0.1:"));
        CHECK(contains(w.all(), "no answer in time"));
    }
    {
        // Slow but within the timeout: served.
        test::DelayProxy slow(redis.port(), milliseconds(50));
        RemoteSettings remote = remote_at(slow.url(), secret);
        remote.timeout = milliseconds(1000);
        Warnings w;
        CompileCache c(cache_settings(dir.path() / "d", remote, w.sink()));
        CHECK(c.get(tiny_sources(), tiny(700)).origin == Origin::remote);
        CHECK(w.seen.empty());
    }
}

} // TEST_SUITE
