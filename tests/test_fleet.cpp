// The remote tier as a fleet sees it: `kjit` processes, each with a disk cache of its own (its
// own "host"), sharing one real redis-server; a store killed, restarted, full or slow under
// them; `kjit cache stats|ls|why|push|pull`; configuration errors; a machine without
// libhiredis. bench/run_remote.sh runs the fleet with its figures (wall time, bytes moved).
#include "jit/remote/redis_client.hpp"
#include "jit/remote/remote_entry.hpp"
#include "tests/remote_support.hpp"

#include "tests/doctest.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

using namespace kjit;
using kjit::test::contains;
using kjit::test::RedisServer;
using kjit::test::Run;
using kjit::test::run_kjit;
using kjit::test::run_shell;
namespace fs = std::filesystem;

namespace {

constexpr const char* kSecret = "0123456789abcdef0123456789abcdef";

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// A kernel tree with one tiny kernel, a shape file asking for `keys` variants of it (one
/// define value each: distinct keys), and the signing secret.
struct FleetTree {
    test::TempDir dir;
    fs::path src = dir.path() / "src";
    fs::path shape = dir.path() / "fleet.toml";
    fs::path secret = dir.path() / "secret";
    explicit FleetTree(int keys) {
        fs::create_directories(src);
        std::ofstream(src / "k.cu") << "#ifndef V\n#define V 0\n#endif\n"
                                       "extern \"C\" __global__ void k(int* y) {\n"
                                       "    y[threadIdx.x] = V + (int)threadIdx.x;\n}\n";
        std::ofstream s(shape);
        s << "[shape]\nfleet = 1\n";
        for (int i = 0; i < keys; ++i)
            s << "\n[[kernel]]\nname = \"k" << i << "\"\nsource = \"k\"\ndefines = { V = " << i
              << " }\n";
        std::ofstream(secret) << kSecret;
        ::chmod(secret.c_str(), 0600);
    }
    /// The remote tier at `url`, signed with the secret. The timeout is long: 16 processes
    /// compiling on a CI machine's few cores (and the server among them) must not read as a
    /// slow store; the slow store's test sets its own after this.
    [[nodiscard]] std::string env(const std::string& url) const {
        return "KJIT_REMOTE_CACHE=" + url + " KJIT_REMOTE_SECRET=" + secret.string() +
               " KJIT_REMOTE_TIMEOUT_MS=10000";
    }
};

/// One `kjit specialize` process: its exit code, output, and each kernel's cache column.
struct Host {
    int code = -1;
    std::string out;
    std::map<std::string, std::string> origin; ///< kernel -> miss / remote / hit / FAILED
    double ms = 0;                             ///< what it printed as its total
};

/// Runs `hosts` `kjit specialize` processes at once, host i with KJIT_CACHE_DIR=DIR/NAMEi.
std::vector<Host> run_wave(const FleetTree& tree, int hosts, const std::string& env,
                           const std::string& name) {
    const fs::path dir = tree.dir.path();
    std::string script;
    for (int i = 0; i < hosts; ++i) {
        const std::string h = (dir / (name + std::to_string(i))).string();
        script += "(KJIT_CACHE_DIR=" + h + " " + env + " " KJIT_BINARY " specialize --src " +
                  tree.src.string() + " " + tree.shape.string() + " >" + h + ".out 2>&1; echo $? >" +
                  h + ".rc) & ";
    }
    run_shell(script + "wait");
    std::vector<Host> out(static_cast<std::size_t>(hosts));
    const std::regex row(R"(^  (k\d+)\s+(\S+)\s)");
    const std::regex total(R"(specialize: \d+ prepared, \d+ failed, ([0-9.]+) ms)");
    for (int i = 0; i < hosts; ++i) {
        Host& h = out[static_cast<std::size_t>(i)];
        const fs::path base = dir / (name + std::to_string(i));
        h.out = read_file(base.string() + ".out");
        h.code = std::atoi(read_file(base.string() + ".rc").c_str());
        std::istringstream lines(h.out);
        std::smatch m;
        for (std::string line; std::getline(lines, line);) {
            if (std::regex_search(line, m, row))
                h.origin[m[1]] = m[2];
            else if (std::regex_search(line, m, total))
                h.ms = std::stod(m[1]);
        }
    }
    return out;
}

std::size_t count_origin(const std::vector<Host>& hosts, const std::string& origin) {
    std::size_t n = 0;
    for (const auto& h : hosts)
        for (const auto& [k, o] : h.origin)
            n += o == origin ? 1 : 0;
    return n;
}

} // namespace

TEST_SUITE("fleet") {

TEST_CASE("a fleet of 16 hosts compiles each of 64 keys once and a second wave only hits") {
    KJIT_REQUIRE_REDIS();
    RedisServer redis;
    constexpr int kHosts = 16, kKeys = 64;
    FleetTree tree(kKeys);
    const std::vector<Host> first = run_wave(tree, kHosts, tree.env(redis.url()), "first");
    std::map<std::string, int> compiles;
    for (const auto& h : first) {
        INFO(h.out);
        CHECK(h.code == 0);
        CHECK(h.origin.size() == static_cast<std::size_t>(kKeys));
        for (const auto& [kernel, origin] : h.origin) {
            CHECK((origin == "miss" || origin == "remote"));
            compiles[kernel] += origin == "miss" ? 1 : 0;
        }
        CHECK_FALSE(contains(h.out, "warning"));
    }
    CHECK(compiles.size() == static_cast<std::size_t>(kKeys));
    for (const auto& [kernel, n] : compiles)
        CHECK_MESSAGE(n == 1, kernel << " was compiled " << n << " times");
    const std::vector<Host> second = run_wave(tree, kHosts, tree.env(redis.url()), "second");
    for (const auto& h : second) {
        INFO(h.out);
        CHECK(h.code == 0);
        CHECK(h.origin.size() == static_cast<std::size_t>(kKeys));
    }
    CHECK(count_origin(second, "remote") == static_cast<std::size_t>(kHosts * kKeys));
    double slowest_first = 0, slowest_second = 0;
    for (std::size_t i = 0; i < first.size(); ++i) {
        slowest_first = std::max(slowest_first, first[i].ms);
        slowest_second = std::max(slowest_second, second[i].ms);
    }
    MESSAGE("fleet: " << kHosts << " hosts x " << kKeys << " keys: " << count_origin(first, "miss")
                      << " compiles; slowest host " << slowest_first << " ms, second wave "
                      << slowest_second << " ms");
}

TEST_CASE("a store killed under a running fleet then restarted fails no start-up") {
    KJIT_REQUIRE_REDIS();
    RedisServer redis;
    FleetTree tree(32);
    std::vector<Host> wave;
    std::thread fleet([&] { wave = run_wave(tree, 6, tree.env(redis.url()), "h"); });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    redis.kill();
    fleet.join();
    for (const auto& h : wave) {
        INFO(h.out);
        CHECK(h.code == 0);
        CHECK(h.origin.size() == 32);
        for (const auto& [kernel, origin] : h.origin)
            CHECK((origin == "miss" || origin == "remote"));
        // At most one warning per process: the store's.
        std::size_t warnings = 0;
        for (std::size_t at = 0; (at = h.out.find("kjit: warning: ", at)) != std::string::npos;
             ++at)
            ++warnings;
        CHECK(warnings <= 1);
        if (warnings == 1)
            CHECK(contains(h.out, "is off for this process"));
    }
    redis.start();
    const std::vector<Host> after = run_wave(tree, 1, tree.env(redis.url()), "after");
    CHECK(after[0].code == 0);
    CHECK(count_origin(after, "miss") == 32); // the restarted store is empty
    const std::vector<Host> again = run_wave(tree, 2, tree.env(redis.url()), "again");
    CHECK(count_origin(again, "remote") == 64);
}

TEST_CASE("a full store and a slow store cost one warning and fail no start-up") {
    KJIT_REQUIRE_REDIS();
    RedisServer redis;
    FleetTree tree(8);
    {
        RedisClient store = redis.client();
        test::fill_to_maxmemory(store);
    }
    std::vector<Host> full = run_wave(tree, 2, tree.env(redis.url()), "full");
    for (const auto& h : full) {
        INFO(h.out);
        CHECK(h.code == 0);
        CHECK(h.origin.size() == 8);
        CHECK(std::regex_search(h.out, std::regex("kjit: warning: remote cache .* is full \\(OOM")));
    }
    CHECK(count_origin(full, "miss") == 16); // no leases: each host compiles its own
    test::DelayProxy slow(redis.port(), std::chrono::milliseconds(2000));
    std::vector<Host> late =
        run_wave(tree, 2, tree.env(slow.url()) + " KJIT_REMOTE_TIMEOUT_MS=200", "slow");
    for (const auto& h : late) {
        INFO(h.out);
        CHECK(h.code == 0);
        CHECK(count_origin({h}, "miss") == 8);
        CHECK(contains(h.out, "no answer in time"));
    }
}

TEST_CASE("kjit cache stats ls why push and pull show and move the remote tier") {
    KJIT_REQUIRE_REDIS();
    RedisServer redis;
    FleetTree tree(3);
    const std::string where = redis.url() + "/0";
    const std::string local = "KJIT_CACHE_DIR=" + (tree.dir.path() / "a").string();
    // A cache filled without the remote tier, then pushed.
    REQUIRE(run_kjit("specialize --src " + tree.src.string() + " " + tree.shape.string(), local)
                .code == 0);
    Run r = run_kjit("cache push", local + " " + tree.env(redis.url()));
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(std::regex_search(r.out, std::regex("^pushed 3 entries \\([0-9.]+ KiB\\) from " +
                                              (tree.dir.path() / "a").string() + " to " + where +
                                              " prefix kjit\n$")));
    const std::string remote = "KJIT_CACHE_DIR=" + (tree.dir.path() / "b").string() + " " +
                               tree.env(redis.url());
    r = run_kjit("cache stats", remote);
    CHECK(contains(r.out, "remote     " + where + " prefix kjit\n"));
    CHECK(contains(r.out, "  state    on; entries signed, HMAC-SHA-256 with the secret in " +
                              tree.secret.string() + "\n"));
    CHECK(contains(r.out, "  entries  3, "));
    CHECK(contains(r.out, "  server   redis "));
    r = run_kjit("cache ls", remote);
    CHECK(contains(r.out, "remote " + where + " prefix kjit: 3 entries (metas shown unverified)"));
    CHECK(contains(r.out, " k                sm_90 "));
    CHECK(contains(r.out, "V=2"));
    r = run_kjit("cache why k -D V=1 --src " + tree.src.string(), remote);
    CHECK(contains(r.out, "hit: a verified entry with this key is in the remote cache " + where));
    r = run_kjit("cache why k -D V=9 --src " + tree.src.string(), remote);
    CHECK(contains(r.out, "in the remote cache differs in:"));
    CHECK(contains(r.out, "defines  DIFFERENT"));
    CHECK(contains(r.out, "source   same"));
    r = run_kjit("cache pull", remote);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "pulled 3 entries ("));
    CHECK(contains(r.out, "; 0 already there, 0 refused"));
    CHECK(contains(run_kjit("cache pull", remote).out, "pulled 0 entries (0.0 KiB) from " + where +
                                                           " prefix kjit into " +
                                                           (tree.dir.path() / "b").string() +
                                                           "; 3 already there, 0 refused"));
    CHECK(contains(run_kjit("cache stats", remote).out, "entries    3\n"));
    // A poisoned entry is refused by pull: reported, not written, exit 1.
    redis.client().command({"SET", "kjit:e:" + hash128("x").hex(), "poison"});
    const std::string fresh = "KJIT_CACHE_DIR=" + (tree.dir.path() / "c").string() + " " +
                              tree.env(redis.url());
    r = run_kjit("cache pull", fresh);
    CHECK(r.code == 1);
    CHECK(contains(r.out, "kjit: warning: refusing remote cache entry kjit:e:" + hash128("x").hex()));
    CHECK(contains(r.out, "pulled 3 entries"));
    CHECK(contains(r.out, "1 refused"));
    // Without a usable store, push and pull are errors.
    r = run_kjit("cache push", local);
    CHECK(r.code == 2);
    CHECK(r.out == "kjit: error: no remote cache: set KJIT_REMOTE_CACHE=redis://HOST:PORT/DB (and "
                   "KJIT_REMOTE_SECRET to the file of the secret entries are signed with)\n");
    r = run_kjit("cache pull", local + " " + tree.env("redis://127.0.0.1:" +
                                                      std::to_string(test::free_port())));
    CHECK(r.code == 2);
    CHECK(contains(r.out, "cannot be used: cannot connect to redis://127.0.0.1:"));
    r = run_kjit("cache stats", local);
    CHECK(contains(r.out, "remote     none (KJIT_REMOTE_CACHE=redis://HOST:PORT/DB"));
}

TEST_CASE("a malformed remote configuration is an error and a missing secret a warning") {
    FleetTree tree(1);
    const std::string local = "KJIT_CACHE_DIR=" + (tree.dir.path() / "c").string();
    const std::string compile = "compile k --src " + tree.src.string();
    Run r = run_kjit(compile, local + " KJIT_REMOTE_CACHE=http://cache:6379");
    CHECK(r.code == 2);
    // Every compiling verb first says where its sources come from (a note on stderr).
    const std::string note = "sources: --src " + tree.src.string() + "/\n";
    CHECK(r.out == note +
                       "kjit: error: KJIT_REMOTE_CACHE=http://cache:6379 is not a Redis address: "
                       "the scheme must be redis:// (TLS and unix sockets are not supported) "
                       "(expected redis://[[USER]:PASSWORD@]HOST[:PORT][/DB])\n");
    ::chmod(tree.secret.c_str(), 0644);
    r = run_kjit(compile, local + " " + tree.env("redis://127.0.0.1:1"));
    CHECK(r.code == 2);
    CHECK(r.out == note + "kjit: error: remote cache secret " + tree.secret.string() +
                       " (KJIT_REMOTE_SECRET) is readable by group or others (mode 644): the "
                       "secret would not be secret; chmod 600 it\n");
    r = run_kjit(compile, local + " KJIT_REMOTE_CACHE=redis://127.0.0.1:1");
    CHECK(r.code == 0);
    CHECK(contains(r.out, "kjit: warning: remote cache redis://127.0.0.1:1/0 prefix kjit is off: "
                          "KJIT_REMOTE_SECRET is not set"));
    r = run_kjit(compile, local + " KJIT_REMOTE_CACHE=redis://h KJIT_REMOTE_TIMEOUT_MS=0");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "KJIT_REMOTE_TIMEOUT_MS=0 is out of range; accepted values: integers "
                          "1..60000"));
    r = run_kjit(compile, local + " KJIT_REMOTE_CACHE=redis://h KJIT_REMOTE_LEASE_MS=5");
    CHECK(r.code == 2);
    r = run_kjit(compile, local + " KJIT_REMOTE_CACHE=redis://h KJIT_REMOTE_PREFIX='a b'");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "KJIT_REMOTE_PREFIX='a b' must be 1 to 64 letters, digits"));
}

TEST_CASE("a kjit carried to a machine without libhiredis starts and says it has no remote tier") {
    std::string why;
    if (!RedisClient::available(&why)) {
        test::skip_test("this kjit has no remote tier to lose: " + why);
        return;
    }
    FleetTree tree(1);
    // The stand-in hides libhiredis from dlopen as an absent library would.
    const std::string env = "LD_PRELOAD=" KJIT_NO_HIREDIS
                            " ASAN_OPTIONS=${ASAN_OPTIONS}:verify_asan_link_order=0 KJIT_CACHE_DIR=" +
                            (tree.dir.path() / "c").string();
    Run r = run_kjit("cache stats", env);
    CHECK(r.code == 0);
    CHECK(std::regex_search(r.out, std::regex("remote     unavailable: libhiredis\\.so\\.\\S+ "
                                              "cannot be opened \\(")));
    r = run_kjit("compile k --src " + tree.src.string(),
                 env + " " + tree.env("redis://127.0.0.1:1"));
    CHECK(r.code == 0);
    CHECK(contains(r.out, "kjit: warning: remote cache redis://127.0.0.1:1/0 prefix kjit is off: "
                          "libhiredis.so."));
    CHECK(contains(r.out, ": compiled for sm_90"));
}

} // TEST_SUITE
