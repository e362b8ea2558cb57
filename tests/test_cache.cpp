#include "core/warnings.hpp"
#include "jit/compile_cache.hpp"
#include "jit/compile_record.hpp"
#include "jit/source_provider.hpp"
#include "tests/support.hpp"

#include "tests/doctest.hpp"

#include <signal.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <thread>

using namespace kjit;
using kjit::test::write_file;
namespace fs = std::filesystem;

namespace {

constexpr const char* kTinyKernel = "#include \"tiny.cuh\"\n"
                                    "extern \"C\" __global__ void tiny(float* y) {\n"
                                    "    y[threadIdx.x] = SCALE * twice(threadIdx.x);\n"
                                    "}\n";
constexpr const char* kTinyHeader = "#pragma once\n"
                                    "#ifndef SCALE\n#define SCALE 1.0f\n#endif\n"
                                    "__device__ float twice(unsigned v) { return 2.0f * v; }\n";

SourceSet tiny_sources(const std::string& kernel = kTinyKernel,
                       const std::string& header = kTinyHeader) {
    SourceSet s;
    s.add({"tiny.cu", "kernels/tiny.cu", kernel, hash128(kernel), 1});
    s.add({"tiny.cuh", "kernels/tiny.cuh", header, hash128(header), 1});
    return s;
}

std::vector<std::string> warnings_of(const std::function<void(WarningSink)>& f) {
    std::vector<std::string> w;
    f([&](const std::string& m) { w.push_back(m); });
    return w;
}

CacheEntry sample_entry(std::size_t payload_bytes = 2000) {
    std::string payload(payload_bytes, '\0');
    for (std::size_t i = 0; i < payload.size(); ++i)
        payload[i] = static_cast<char>(i * 131 + 7);
    return {hash128("sample key"), "kernel=tiny\narch=sm_90\n", payload};
}

bool is_root() { return ::geteuid() == 0; }

using test::skip;

} // namespace

TEST_SUITE("cache") {

TEST_CASE("each key component changed alone changes the key") {
    const SourceSet base = tiny_sources();
    CompileOptions o;
    o.defines = {{"SCALE", "2.0f"}, {"UNUSED", "1"}};
    const CacheKey k = make_cache_key(base, "tiny", o);
    std::set<std::string> keys{k.hex()};
    const auto differs = [&](const CacheKey& other, KeyComponents::Index which) {
        CHECK(keys.insert(other.hex()).second);
        for (std::size_t i = 0; i < KeyComponents::kCount; ++i)
            CHECK((other.components.hashes[i] != k.components.hashes[i]) == (i == which));
    };
    differs(make_cache_key(tiny_sources(std::string(kTinyKernel) + " "), "tiny", o),
            KeyComponents::source);
    differs(make_cache_key(tiny_sources(kTinyKernel, std::string(kTinyHeader) + "\n"), "tiny", o),
            KeyComponents::headers);
    CompileOptions d = o;
    d.defines["SCALE"] = "3.0f";
    differs(make_cache_key(base, "tiny", d), KeyComponents::defines);
    CompileOptions f = o;
    f.fmad = false;
    differs(make_cache_key(base, "tiny", f), KeyComponents::options);
    CompileOptions x = o;
    x.extra = {"--extra-device-vectorization"};
    differs(make_cache_key(base, "tiny", x), KeyComponents::options);
    CompileOptions a = o;
    a.arch = "sm_90a";
    differs(make_cache_key(base, "tiny", a), KeyComponents::arch);
    CompileOptions i = o;
    i.toolkit_include_dirs = {"/usr/local/cuda/include"};
    const CacheKey ki = make_cache_key(base, "tiny", i);
    CHECK(keys.insert(ki.hex()).second);
    CHECK(ki.components.hashes[KeyComponents::toolkit] != k.components.hashes[KeyComponents::toolkit]);
    CompileOptions e = o;
    e.include_dirs = {KJIT_SOURCE_DIR "/kernel_src"};
    const CacheKey ke = make_cache_key(base, "tiny", e);
    CHECK(keys.insert(ke.hex()).second);
    CHECK(ke.components.hashes[KeyComponents::includes] !=
          k.components.hashes[KeyComponents::includes]);
    differs(make_cache_key(base, "tiny", o, nvrtc_version() + 10, kCacheFormatVersion),
            KeyComponents::nvrtc);
    differs(make_cache_key(base, "tiny", o, nvrtc_version(), kCacheFormatVersion + 1),
            KeyComponents::format);
}

TEST_CASE("reordering defines or options and renaming or touching a file keep the key") {
    const SourceSet base = tiny_sources();
    CompileOptions a, b;
    a.defines = {{"A", "1"}, {"B", "2"}};
    b.defines = {{"B", "2"}, {"A", "1"}};
    a.extra = {"--extra-device-vectorization", "-dopt=on"};
    b.extra = {"-dopt=on", "--extra-device-vectorization"};
    CHECK(make_cache_key(base, "tiny", a).hash == make_cache_key(base, "tiny", b).hash);
    SourceSet moved;
    for (SourceFile f : base.files()) {
        f.path = "elsewhere/" + f.name;
        f.mtime_ns = 12345;
        moved.add(f);
    }
    CHECK(make_cache_key(moved, "tiny", a).hash == make_cache_key(base, "tiny", a).hash);
    a.ptx = true; // PTX output does not change the CUBIN
    CHECK(make_cache_key(base, "tiny", a).hash == make_cache_key(base, "tiny", b).hash);
}

TEST_CASE("an entry round-trips and every flipped byte or truncation is detected") {
    const CacheEntry e = sample_entry(300);
    const std::string bytes = encode_entry(e);
    std::string problem;
    const auto back = decode_entry(bytes, e.key, &problem);
    REQUIRE(back);
    CHECK(back->payload == e.payload);
    CHECK(back->meta == e.meta);
    CHECK(meta_value(back->meta, "arch") == "sm_90");
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        std::string bad = bytes;
        bad[i] = static_cast<char>(bad[i] ^ 0x01);
        INFO("flipped byte " << i);
        CHECK_FALSE(decode_entry(bad, e.key, &problem));
    }
    for (std::size_t n = 0; n < bytes.size(); ++n)
        CHECK_FALSE(decode_entry(std::string_view(bytes).substr(0, n), e.key, &problem));
    CHECK_FALSE(decode_entry(bytes + "x", e.key, &problem));
    CHECK_FALSE(decode_entry(bytes, hash128("another key"), &problem));
    CHECK(problem.find("expected") != std::string::npos);
}

TEST_CASE("the disk cache creates its directory 0700 and serves what it stored") {
    test::TempDir tmp;
    const fs::path dir = tmp.path() / "a" / "kjit";
    DiskCache cache(dir);
    REQUIRE(cache.enabled());
    struct stat st {};
    REQUIRE(::stat(dir.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    const CacheEntry e = sample_entry();
    CHECK_FALSE(cache.load(e.key));
    CHECK(cache.store(e));
    const auto back = cache.load(e.key);
    REQUIRE(back);
    CHECK(back->payload == e.payload);
    CHECK(cache.list().size() == 1);
    CHECK(cache.stats().hits == 1);
    CHECK(cache.clear() == 1);
    CHECK(cache.list().empty());
}

TEST_CASE("a damaged entry is deleted and reported once and never served") {
    test::TempDir tmp;
    std::vector<std::string> warnings;
    DiskCache cache(tmp.path(), kDefaultCacheMaxBytes,
                    [&](const std::string& m) { warnings.push_back(m); });
    const CacheEntry e = sample_entry();
    REQUIRE(cache.store(e));
    const fs::path path = cache.entry_path(e.key);
    std::string bytes = encode_entry(e);
    bytes[bytes.size() - 10] ^= 0x40;
    write_file(path, bytes);
    ::chmod(path.c_str(), 0600);
    CHECK_FALSE(cache.load(e.key));
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("payload checksum mismatch") != std::string::npos);
    CHECK(warnings[0].find("deleted") != std::string::npos);
    CHECK_FALSE(fs::exists(path));
    CHECK_FALSE(cache.load(e.key)); // now a plain miss: no second warning
    CHECK(warnings.size() == 1);
    write_file(path, encode_entry(e).substr(0, 100)); // truncated
    CHECK_FALSE(cache.load(e.key));
    CHECK(warnings.back().find("truncated") != std::string::npos);
}

TEST_CASE("a directory that cannot be created degrades to memory only with one warning") {
    test::TempDir tmp;
    write_file(tmp.path() / "file", "x");
    const auto w = warnings_of([&](WarningSink sink) {
        DiskCache cache(tmp.path() / "file" / "kjit", kDefaultCacheMaxBytes, sink);
        CHECK_FALSE(cache.enabled());
        CHECK_FALSE(cache.store(sample_entry()));
        CHECK_FALSE(cache.load(sample_entry().key));
    });
    REQUIRE(w.size() == 1);
    CHECK(w[0].find("disk cache disabled, compiling in memory only: cannot create") == 0);
    // The compile still happens and is correct.
    CacheSettings s;
    s.dir = tmp.path() / "file" / "kjit";
    s.warn = [](const std::string&) {};
    CompileCache cc(s);
    const Specialized r = cc.get(tiny_sources(), {"tiny", {}});
    REQUIRE(r.compiled);
    CHECK(r.compiled->cubin.substr(0, 4) == "\x7f" "ELF");
}

TEST_CASE("a read-only directory degrades to memory only") {
    // Root writes a 0500 directory regardless of its mode: as root, the check runs in a child
    // that has become an unprivileged user (uid and gid 65534), on a directory of that user.
    test::TempDir tmp;
    const fs::path dir = tmp.path() / "ro";
    fs::create_directory(dir);
    ::chmod(tmp.path().c_str(), 0755);
    if (is_root())
        REQUIRE(::chown(dir.c_str(), 65534, 65534) == 0);
    ::chmod(dir.c_str(), 0500);
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(fds[0]);
        std::string report;
        if (is_root() && (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
                          ::setresuid(65534, 65534, 65534) != 0)) {
            report = "SKIP cannot become uid 65534";
        } else {
            const auto w = warnings_of([&](WarningSink sink) {
                DiskCache cache(dir, kDefaultCacheMaxBytes, sink);
                report += cache.enabled() ? "enabled;" : "disabled;";
            });
            for (const auto& m : w)
                report += m + ";";
            report += std::to_string(w.size());
        }
        (void)!::write(fds[1], report.data(), report.size());
        std::_Exit(0);
    }
    ::close(fds[1]);
    std::string report;
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
        report.append(buf, static_cast<std::size_t>(n));
    ::close(fds[0]);
    ::waitpid(pid, nullptr, 0);
    ::chmod(dir.c_str(), 0700);
    if (report.rfind("SKIP", 0) == 0)
        return skip(report.substr(5));
    INFO(report);
    CHECK(report.rfind("disabled;", 0) == 0);
    CHECK(report.find("is not writable") != std::string::npos);
    CHECK(report.ends_with(";1"));
}

TEST_CASE("a cache directory that is a file or lies under one is refused as not a directory") {
    test::TempDir tmp;
    const fs::path file = tmp.path() / "afile";
    test::write_file(file, "x");
    for (const fs::path& dir : {file, file / "below"}) {
        const auto w = warnings_of([&](WarningSink sink) {
            DiskCache cache(dir, kDefaultCacheMaxBytes, sink);
            CHECK_FALSE(cache.enabled());
        });
        REQUIRE(w.size() == 1);
        INFO(w[0]);
        CHECK(w[0].find("disk cache disabled") != std::string::npos);
        CHECK(w[0].find("cannot create " + file.string() +
                        ": it exists and is not a directory") != std::string::npos);
    }
}

TEST_CASE("a directory writable by others is refused") {
    test::TempDir tmp;
    ::chmod(tmp.path().c_str(), 0777);
    const auto w = warnings_of([&](WarningSink sink) {
        DiskCache cache(tmp.path(), kDefaultCacheMaxBytes, sink);
        CHECK_FALSE(cache.enabled());
    });
    REQUIRE(w.size() == 1);
    CHECK(w[0].find("writable by other users (mode 777)") != std::string::npos);
}

TEST_CASE("a directory or an entry owned by another user is refused") {
    if (!is_root())
        return skip("giving files to another user needs root: the ownership refusal is not "
                    "exercised");
    test::TempDir tmp;
    const fs::path dir = tmp.path() / "theirs";
    fs::create_directory(dir);
    REQUIRE(::chown(dir.c_str(), 65534, 65534) == 0);
    auto w = warnings_of([&](WarningSink sink) {
        DiskCache cache(dir, kDefaultCacheMaxBytes, sink);
        CHECK_FALSE(cache.enabled());
    });
    REQUIRE(w.size() == 1);
    CHECK(w[0].find("is owned by uid 65534") != std::string::npos);

    const fs::path mine = tmp.path() / "mine";
    std::vector<std::string> seen;
    DiskCache cache(mine, kDefaultCacheMaxBytes, [&](const std::string& m) { seen.push_back(m); });
    const CacheEntry e = sample_entry();
    REQUIRE(cache.store(e));
    REQUIRE(::chown(cache.entry_path(e.key).c_str(), 65534, 65534) == 0);
    CHECK_FALSE(cache.load(e.key));
    REQUIRE(seen.size() == 1);
    CHECK(seen[0].find("refusing cache entry") != std::string::npos);
    CHECK(fs::exists(cache.entry_path(e.key))); // refused, not deleted
    CHECK_FALSE(cache.store(e));                 // nor replaced
    struct stat st {};
    REQUIRE(::stat(cache.entry_path(e.key).c_str(), &st) == 0);
    CHECK(st.st_uid == 65534);
}

TEST_CASE("a write that fails under RLIMIT_FSIZE leaves nothing behind and the compile stands") {
    test::TempDir tmp;
    CHECK(test::exit_status_with_file_limit(1024, [&] {
              std::vector<std::string> w;
              CacheSettings s;
              s.dir = tmp.path();
              s.warn = [&](const std::string& m) { w.push_back(m); };
              CompileCache cc(s);
              const Specialized r = cc.get(tiny_sources(), {"tiny", {}});
              const bool ok = r.compiled && r.compiled->cubin.size() > 1024 && w.size() == 1 &&
                              w[0].find("File too large") != std::string::npos &&
                              w[0].find("kept in memory only") != std::string::npos;
              return ok ? 0 : 1;
          }) == 0);
    std::size_t files = 0;
    for (const auto& e : fs::directory_iterator(tmp.path()))
        files += e.path().extension() == ".lock" ? 0 : 1;
    CHECK(files == 0); // no entry and no temporary file
}

TEST_CASE("a writer killed with SIGKILL mid-write leaves no entry that is served damaged") {
    test::TempDir tmp;
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        DiskCache cache(tmp.path(), 1ull << 40, [](const std::string&) {});
        for (std::uint64_t i = 0;; ++i) {
            CacheEntry e = sample_entry(48u << 20);
            e.key = hash128("killed " + std::to_string(i));
            cache.store(e);
        }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status));
    std::vector<std::string> warnings;
    DiskCache cache(tmp.path(), 1ull << 40, [&](const std::string& m) { warnings.push_back(m); });
    const auto entries = cache.list(false);
    for (const auto& e : entries)
        CHECK(cache.load(e.key)); // every final file verifies
    CHECK(warnings.empty());
    std::size_t temps = 0;
    for (const auto& e : fs::directory_iterator(tmp.path()))
        temps += e.path().filename().string().find(".tmp.") != std::string::npos ? 1 : 0;
    MESSAGE(entries.size() << " complete entries, " << temps << " temporary file(s) left");
    CHECK(cache.clear() == entries.size());
    for (const auto& e : fs::directory_iterator(tmp.path()))
        FAIL("left after clear: " << e.path());
}

TEST_CASE("past the size cap the least recently used entries are evicted") {
    test::TempDir tmp;
    const std::size_t one = encode_entry(sample_entry(10000)).size();
    DiskCache cache(tmp.path(), 3 * one + 10);
    std::vector<Hash128> keys;
    for (int i = 0; i < 3; ++i) {
        CacheEntry e = sample_entry(10000);
        e.key = hash128("lru " + std::to_string(i));
        keys.push_back(e.key);
        REQUIRE(cache.store(e));
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    REQUIRE(cache.load(keys[0])); // now the most recently used
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CacheEntry e = sample_entry(10000);
    e.key = hash128("lru 3");
    REQUIRE(cache.store(e));
    CHECK(cache.load(keys[0]));
    CHECK_FALSE(cache.load(keys[1])); // the oldest use went
    CHECK(cache.load(keys[2]));
    CHECK(cache.load(e.key));
    CHECK(cache.stats().evicted == 1);
}

TEST_CASE("the compile cache compiles a miss once and serves the hit from disk") {
    test::TempDir tmp;
    CacheSettings s;
    s.dir = tmp.path();
    CompileCache cc(s);
    const SourceSet src = tiny_sources();
    const Specialized a = cc.get(src, {"tiny", {}});
    REQUIRE(a.compiled);
    CHECK(a.origin == Origin::compiled);
    CompileCache again(s);
    const Specialized b = again.get(src, {"tiny", {}});
    REQUIRE(b.compiled);
    CHECK(b.origin == Origin::disk);
    CHECK(b.compiled->cubin == a.compiled->cubin);
    CHECK(b.compiled->kernel == "tiny");
    CHECK(b.compiled->path == "kernels/tiny.cu");
    CHECK(b.compiled->source_hash == a.compiled->source_hash);
    CacheSettings off = s;
    off.use_disk = false;
    CHECK(CompileCache(off).get(src, {"tiny", {}}).origin == Origin::compiled);
}

TEST_CASE("a check-only request is never stored and is served by the full compile's entry") {
    test::TempDir tmp;
    CacheSettings s;
    s.dir = tmp.path();
    CompileCache cc(s);
    const SourceSet src = tiny_sources();
    CompileOptions check;
    check.check_only = true;
    const Specialized a = cc.get(src, {"tiny", check});
    REQUIRE(a.compiled);
    CHECK(a.origin == Origin::compiled);
    CHECK(a.compiled->cubin.empty());
    CHECK(cc.disk()->list().empty()); // nothing loadable to keep
    // Its key names its target (compute_90), not only its -G: a full compile passed -G by
    // hand is another key.
    CompileOptions debug;
    debug.extra = {"-G"};
    CHECK(make_cache_key(src, "tiny", check).hex() != make_cache_key(src, "tiny", debug).hex());
    CHECK(cc.get(src, {"tiny", check}).origin == Origin::compiled);
    // Once the full compile is on disk, it answers the check-only request.
    REQUIRE(cc.get(src, {"tiny", {}}).compiled);
    const Specialized b = cc.get(src, {"tiny", check});
    REQUIRE(b.compiled);
    CHECK(b.origin == Origin::disk);
    CHECK(b.compiled->cubin.empty());
    CHECK(b.compiled->options.check_only);
    REQUIRE(b.compiled->entries.size() == a.compiled->entries.size());
    CHECK(encode_entry_params(b.compiled->entries[0]) == encode_entry_params(a.compiled->entries[0]));
    // A check-only request that wants the PTX compiles: a disk entry keeps none.
    check.ptx = true;
    const Specialized c = cc.get(src, {"tiny", check});
    REQUIRE(c.compiled);
    CHECK(c.origin == Origin::compiled);
    CHECK(c.compiled->ptx.find(".entry tiny") != std::string::npos);
}

TEST_CASE("a compile error is reported through the cache and nothing is stored") {
    test::TempDir tmp;
    CacheSettings s;
    s.dir = tmp.path();
    CompileCache cc(s);
    const Specialized r = cc.get(tiny_sources("extern \"C\" __global__ void tiny() { x }\n"),
                                 {"tiny", {}});
    REQUIRE(r.error);
    CHECK_THROWS_AS(std::rethrow_exception(r.error), CompileError);
    CHECK(cc.disk()->list().empty());
}

TEST_CASE("one record encodes a compiled kernel for the disk and the wire and a failed compile too") {
    CompiledKernel k;
    k.kernel = "tiny";
    k.path = "kernels\\odd\npath/tiny.cu";
    k.source_hash = hash128("src");
    k.options.arch = "sm_90";
    k.options.defines = {{"A", "1"}, {"B", "two words"}};
    k.log = "kernels/tiny.cu:2: warning: w\nnext line \\ with a backslash";
    k.compile_ms = 12.5;
    const std::string meta = kernel_meta(k);
    CHECK(std::count(meta.begin(), meta.end(), '\n') == 8); // one line per value
    CHECK(meta_value(meta, "arch") == "sm_90");
    CHECK(meta_value(meta, "defines") == "A=1 B=two words");
    CompileOptions request;
    request.arch = "sm_90";
    const CompiledKernel back = kernel_from_meta(meta, "CUBIN", "PTX", request);
    CHECK(back.kernel == k.kernel);
    CHECK(back.path == k.path);
    CHECK(back.source_hash == k.source_hash);
    CHECK(back.log == k.log);
    CHECK(back.compile_ms == 12.5);
    CHECK(back.cubin == "CUBIN");
    CHECK(back.ptx == "PTX");
    CHECK(back.options.arch == "sm_90");

    const CompileError e("tiny", "kernels/tiny.cu", {"--gpu-architecture=sm_90", "-DA=1"},
                         {{"A", "1"}, {"B", "x=y"}}, "the log\nline 2",
                         {{"kernels/tiny.cu", 2, 11, Severity::error, "expected\nan expression", {}},
                          {"kernels/tiny.cuh", 3, 0, Severity::note, "a \\ remark", "R1"}},
                         "abc");
    const CompileError f = compile_error_from_meta(compile_error_meta(e));
    CHECK(f.kernel == e.kernel);
    CHECK(f.path == e.path);
    CHECK(f.options == e.options);
    CHECK(f.defines == e.defines);
    CHECK(f.log == e.log);
    CHECK(f.diagnostics == e.diagnostics);
    CHECK(f.source_hash == e.source_hash);
    CHECK(std::string(f.what()) == e.what());
}

TEST_CASE("compile workers give the same CUBIN as an in-process compile and carry errors back") {
    const SourceSet good = tiny_sources();
    const SourceSet bad = tiny_sources("extern \"C\" __global__ void tiny() {\n  int x = ;\n}\n");
    std::vector<CompileJob> jobs;
    for (int i = 0; i < 4; ++i) {
        CompileJob j{&good, "tiny", {}};
        j.options.defines["SCALE"] = std::to_string(i + 1) + ".0f";
        jobs.push_back(j);
    }
    jobs[3].options.check_only = true; // the flag travels: no CUBIN comes back
    jobs.push_back({&bad, "tiny", {}});
    // No entry point: a compile error at the file, through a worker as in process;
    // accepted where the job says so (the flag travels too).
    const SourceSet entryless =
        tiny_sources("__device__ float tiny_helper(float x) { return x; }\n");
    jobs.push_back({&entryless, "tiny", {}});
    jobs.push_back({&entryless, "tiny", {}});
    jobs.back().options.entry_optional = true;
    std::size_t progress_calls = 0;
    const auto remote = compile_all(jobs, 2, KJIT_BINARY,
                                    [&](std::size_t, std::size_t, const std::string&) { ++progress_calls; });
    const auto local = compile_all(jobs, 1, {});
    CHECK(progress_calls == jobs.size());
    for (std::size_t i = 0; i < 4; ++i) {
        REQUIRE(remote[i].compiled);
        REQUIRE(local[i].compiled);
        CHECK(remote[i].compiled->cubin == local[i].compiled->cubin);
        CHECK(remote[i].compiled->cubin.empty() == (i == 3));
    }
    REQUIRE(remote[4].error);
    try {
        std::rethrow_exception(remote[4].error);
    } catch (const CompileError& e) {
        REQUIRE(!e.diagnostics.empty());
        CHECK(e.diagnostics[0].format() == "kernels/tiny.cu:2:11: error: expected an expression");
    }
    for (const auto* outcomes : {&remote, &local}) {
        REQUIRE((*outcomes)[5].error);
        CHECK_THROWS_WITH_AS(std::rethrow_exception((*outcomes)[5].error),
                             doctest::Contains("kernels/tiny.cu: error: the kernel source compiles "
                                               "to no entry point"),
                             CompileError);
        REQUIRE((*outcomes)[6].compiled);
        CHECK((*outcomes)[6].compiled->entries.empty());
    }
    // A worker that cannot start, or that gives no answer: the jobs are compiled here instead,
    // and a warning (one per batch) says why.
    for (const char* worker : {"/nonexistent/kjit", "/bin/true"}) {
        std::vector<std::string> said;
        const DiagnosticSink before =
            set_warning_sink([&](const Diagnostic& d) { said.push_back(d.message); });
        const auto fallback = compile_all(std::span(jobs).first(2), 2, worker);
        set_warning_sink(before);
        CHECK(fallback[0].compiled);
        CHECK(fallback[1].compiled);
        INFO(worker);
        REQUIRE(said.size() == 1);
        CHECK(said[0].starts_with("compile worker " + std::string(worker) + " not used, "));
        CHECK(said[0].ends_with(": compiling on threads"));
    }
}

TEST_CASE("a program accepted without an entry point is keyed apart and served from disk") {
    test::TempDir tmp;
    CacheSettings s;
    s.dir = tmp.path();
    CompileCache cc(s);
    // A file of templates compiled without name expressions (as the audit compiles it), and a
    // helper-only program compiled for what it is (entry_optional): each stored and served.
    const SourceSet templates =
        tiny_sources("template <int N> __global__ void tiny(float* p) { p[0] = N; }\n");
    const SourceSet helpers = tiny_sources("__device__ float tiny_helper(float x) { return x; }\n");
    CompileRequest optional{"tiny", {}};
    optional.options.entry_optional = true;
    CompileRequest later{"tiny", {}};
    later.options.templates_later = true;
    for (const auto& [src, request] :
         {std::pair{&templates, later}, std::pair{&helpers, optional}}) {
        const Specialized first = cc.get(*src, request);
        REQUIRE(first.compiled);
        CHECK(first.compiled->entries.empty());
        CHECK(first.origin == Origin::compiled);
        const Specialized again = cc.get(*src, request);
        REQUIRE(again.compiled);
        CHECK(again.origin == Origin::disk);
    }
    // The same program asked for as a kernel is another key: the compile refuses it, however
    // the cache holds the accepted one.
    CHECK(make_cache_key(helpers, "tiny", optional.options).hex() !=
          make_cache_key(helpers, "tiny", CompileOptions{}).hex());
    const Specialized kernel = cc.get(helpers, CompileRequest{"tiny", {}});
    REQUIRE(kernel.error);
    CHECK_THROWS_AS(std::rethrow_exception(kernel.error), CompileError);
}

TEST_CASE("8 processes asking for the same 32 keys compile each key exactly once") {
    test::TempDir tmp;
    const SourceSet src = tiny_sources();
    std::vector<CompileRequest> requests;
    for (int i = 0; i < 32; ++i) {
        CompileRequest r{"tiny", {}};
        r.options.defines["SCALE"] = std::to_string(i) + ".5f";
        requests.push_back(r);
    }
    std::vector<pid_t> pids;
    std::vector<int> pipes;
    for (int p = 0; p < 8; ++p) {
        int fds[2];
        REQUIRE(::pipe(fds) == 0);
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            ::close(fds[0]);
            CacheSettings s;
            s.dir = tmp.path();
            s.jobs = 2;
            s.worker = KJIT_BINARY;
            CompileCache cc(s);
            const auto results = cc.get_all(src, requests);
            std::string report;
            for (const auto& r : results) {
                const bool ok = r.compiled && r.compiled->cubin.substr(0, 4) == "\x7f" "ELF";
                report += !ok ? 'X' : r.origin == Origin::compiled ? 'C' : 'D';
                report += std::to_string(hash64(ok ? r.compiled->cubin : "")) + ";";
            }
            (void)!::write(fds[1], report.data(), report.size());
            std::_Exit(0);
        }
        ::close(fds[1]);
        pids.push_back(pid);
        pipes.push_back(fds[0]);
    }
    std::vector<std::string> reports;
    for (std::size_t p = 0; p < pids.size(); ++p) {
        std::string r;
        char buf[4096];
        for (ssize_t n; (n = ::read(pipes[p], buf, sizeof buf)) > 0;)
            r.append(buf, static_cast<std::size_t>(n));
        ::close(pipes[p]);
        int status = 0;
        ::waitpid(pids[p], &status, 0);
        CHECK(WIFEXITED(status));
        reports.push_back(r);
    }
    std::size_t compiled = 0, broken = 0;
    for (const auto& r : reports) {
        compiled += static_cast<std::size_t>(std::count(r.begin(), r.end(), 'C'));
        broken += static_cast<std::size_t>(std::count(r.begin(), r.end(), 'X'));
        // Every process saw the same bytes for every key.
        std::string digests = r;
        for (char& c : digests)
            if (c == 'C' || c == 'D')
                c = '-';
        std::string first = reports[0];
        for (char& c : first)
            if (c == 'C' || c == 'D')
                c = '-';
        CHECK(digests == first);
    }
    CHECK(compiled == 32);
    CHECK(broken == 0);
    DiskCache cache(tmp.path());
    CHECK(cache.list(false).size() == 32);
    for (const auto& e : fs::directory_iterator(tmp.path())) {
        const std::string name = e.path().filename().string();
        CHECK_MESSAGE(name.find(".tmp.") == std::string::npos, "torn temporary file " << name);
    }
}

TEST_CASE("a source override picks up an edit by mtime without re-reading unchanged files") {
    test::TempDir tmp;
    write_file(tmp.path() / "tiny.cu", kTinyKernel);
    write_file(tmp.path() / "tiny.cuh", kTinyHeader);
    SourceProvider provider(tmp.path());
    const auto first = provider.current();
    CHECK(provider.current() == first); // nothing changed: the same snapshot
    CHECK(first->kernel("tiny").path == (tmp.path() / "tiny.cu").generic_string());
    const Hash128 before = make_cache_key(*first, "tiny", {}).hash;
    write_file(tmp.path() / "tiny.cu", std::string(kTinyKernel) + "// edited\n");
    const auto second = provider.current();
    REQUIRE(second != first);
    CHECK(second->kernel("tiny").text.find("// edited") != std::string::npos);
    CHECK(&second->find("tiny.cuh")->text != &first->find("tiny.cuh")->text);
    CHECK(second->find("tiny.cuh")->hash == first->find("tiny.cuh")->hash);
    CHECK_FALSE(make_cache_key(*second, "tiny", {}).hash == before);
    CHECK(SourceProvider().current()->find("rms_norm.cu") != nullptr); // embedded
}

} // TEST_SUITE
