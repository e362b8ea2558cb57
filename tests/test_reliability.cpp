// The cache's promises at their edges: the key covers everything the compiler can read, kjit
// deletes only what is its own, nothing hangs, and freshness checks that touch cannot fool.
#include "jit/cache_files.hpp"
#include "jit/compile_cache.hpp"
#include "jit/includes.hpp"
#include "jit/source_provider.hpp"
#include "tests/support.hpp"

#include "tests/doctest.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

using namespace kjit;
using kjit::test::contains;
using kjit::test::write_file;
using kjit::test::Run;
using kjit::test::run_kjit;
using kjit::test::run_shell;
namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

using test::skip;

/// A kernel that includes one file of each kind; each defines a value the kernel stores.
const std::vector<std::pair<std::string, std::string>> kIncluded = {
    {"a.h", "A"}, {"b.hpp", "B"}, {"c.cuh", "C"}, {"d.inc", "D"}, {"sub/e", "E"}};

void write_tree(const fs::path& dir) {
    std::string kernel;
    std::string sum;
    for (const auto& [file, macro] : kIncluded) {
        kernel += "#include \"" + file + "\"\n";
        sum += (sum.empty() ? "" : " + ") + macro;
        write_file(dir / file, "#define " + macro + " 1\n");
    }
    kernel += "extern \"C\" __global__ void k(int* y) { y[0] = " + sum + "; }\n";
    write_file(dir / "k.cu", kernel);
    write_file(dir / "notes.md", "# not included by anything\n");
}

/// The key `kjit compile` printed, and whether it served the entry from the cache.
struct Compiled {
    std::string key;
    bool cached = false;
    std::string cubin;
};

Compiled kjit_compile(const std::string& args, const fs::path& cache, const fs::path& out) {
    const Run r = run_kjit("compile " + args + " -o " + out.string(),
                           "KJIT_CACHE_DIR=" + cache.string());
    INFO(r.out);
    REQUIRE(r.code == 0);
    std::smatch m;
    REQUIRE(std::regex_search(r.out, m, std::regex("key: ([0-9a-f]{32})")));
    return {m[1], contains(r.out, "cached, compiled"), read_file(out)};
}

std::string hex8(std::uint32_t v) {
    char s[9];
    std::snprintf(s, sizeof s, "%08x", v);
    return s;
}

CacheEntry entry_of(const std::string& seed, std::size_t bytes) {
    return {hash128(seed), "kernel=" + seed + "\n", std::string(bytes, 'x')};
}

/// A child process that takes `key`'s lock in `dir` and stops itself (SIGSTOP) holding it.
pid_t stopped_holder(const fs::path& dir, const Hash128& key) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(fds[0]);
        DiskCache cache(dir, kDefaultCacheMaxBytes, [](const std::string&) {});
        DiskCache::Lock lock = cache.lock(key, false);
        const char held = lock.held() ? '1' : '0';
        (void)!::write(fds[1], &held, 1);
        ::raise(SIGSTOP);
        std::_Exit(0);
    }
    ::close(fds[1]);
    char held = '0';
    REQUIRE(::read(fds[0], &held, 1) == 1);
    ::close(fds[0]);
    REQUIRE(held == '1');
    int status = 0;
    REQUIRE(::waitpid(pid, &status, WUNTRACED) == pid);
    REQUIRE(WIFSTOPPED(status));
    return pid;
}

void end_child(pid_t pid) {
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
}

} // namespace

TEST_SUITE("cache") {

// ---- 1. the key covers everything the compiler can read -------------------------------------

TEST_CASE("the include scan names every file a directive can reach and a macro means any") {
    const IncludeScan s = scan_includes("#include \"a.h\"\n"
                                        "  #  include <b/c.hpp>\n"
                                        "#include_next \"n.inc\"\n"
                                        "#inc\\\nlude \"spliced.h\"\n"
                                        "%:include \"digraph.h\"\n"
                                        "# /* comment */ include \"commented.h\"\n"
                                        "/* a comment\n"
                                        "   over lines */ #include \"after_comment.h\"\n"
                                        "#if __has_include(\"maybe.h\") && __has_include_next(<q>)\n"
                                        "#endif\n"
                                        "int x; // #include guards are a habit\n"
                                        "#if 0\n#include \"dead.h\"\n#endif\n");
    CHECK(s.names == std::vector<std::string>{"a.h", "b/c.hpp", "n.inc", "spliced.h",
                                              "digraph.h", "commented.h", "after_comment.h",
                                              "maybe.h", "q", "dead.h"});
    CHECK_FALSE(s.computed);
    CHECK(scan_includes("#define H \"x.h\"\n#include H\n").computed);
    CHECK(scan_includes("#if __has_include(H)\n#endif\n").computed);
    CHECK_FALSE(scan_includes("#includes \"x\"\n").computed);
    CHECK(scan_includes("#includes \"x\"\n").names.empty());
}

TEST_CASE("a tree's set holds its kernels and its headers and what an include names of any extension") {
    test::TempDir tmp;
    write_tree(tmp.path());
    write_file(tmp.path() / "lib.hh", "// a header no kernel includes yet\n");
    write_file(tmp.path() / "table.toml", "x = 1\n");
    const SourceSet set = SourceSet::from_directory(tmp.path(), "src");
    std::vector<std::string> names;
    for (const auto& f : set.files())
        names.push_back(f.name);
    CHECK(names == std::vector<std::string>{"a.h", "b.hpp", "c.cuh", "d.inc", "k.cu", "lib.hh",
                                            "sub/e"});
    std::vector<std::string> reach;
    for (const auto* f : set.includable(set.kernel("k")))
        reach.push_back(f->name);
    CHECK(reach == std::vector<std::string>{"a.h", "b.hpp", "c.cuh", "d.inc", "sub/e"});
    // A header the kernel cannot reach is outside its key.
    const Hash128 before = make_cache_key(set, "k", {}).hash;
    write_file(tmp.path() / "lib.hh", "// edited\n");
    CHECK(make_cache_key(SourceSet::from_directory(tmp.path()), "k", {}).hash == before);
    // A computed #include can name anything: every file of the tree is offered and keyed.
    write_file(tmp.path() / "m.cu", "#define WHICH \"table.toml\"\n#include WHICH\n");
    const SourceSet all = SourceSet::from_directory(tmp.path());
    CHECK(all.find("table.toml") != nullptr);
    CHECK(all.find("notes.md") != nullptr);
    CHECK(all.includable(all.kernel("m")).size() == all.files().size() - 1);
}

TEST_CASE("editing any kind of included file changes the key and kjit compile --src recompiles") {
    test::TempDir tmp;
    const fs::path src = tmp.path() / "src", cache = tmp.path() / "cache";
    const fs::path out = tmp.path() / "k.cubin";
    write_tree(src);
    const std::string args = "k --src " + src.string();
    Compiled last = kjit_compile(args, cache, out);
    CHECK_FALSE(last.cached);
    CHECK(kjit_compile(args, cache, out).cached); // the same tree is served from the cache
    int value = 1;
    for (const auto& [file, macro] : kIncluded) {
        CAPTURE(file);
        ++value; // the same size: only the digit changes
        write_file(src / file, "#define " + macro + " " + std::to_string(value) + "\n");
        const Compiled now = kjit_compile(args, cache, out);
        CHECK(now.key != last.key);
        CHECK_FALSE(now.cached);
        CHECK(now.cubin != last.cubin);
        last = now;
    }
}

TEST_CASE("a file in an extra include directory is keyed by content: an edit recompiles") {
    test::TempDir tmp;
    const fs::path src = tmp.path() / "src", inc = tmp.path() / "inc";
    const fs::path cache = tmp.path() / "cache", out = tmp.path() / "m.cubin";
    write_file(src / "m.cu", "#include <lib/x.h>\n"
                             "extern \"C\" __global__ void m(int* y) { y[0] = X; }\n");
    write_file(inc / "lib" / "x.h", "#include \"lib/deep.inc\"\n#define X DEEP\n");
    write_file(inc / "lib" / "deep.inc", "#define DEEP 1\n");
    const std::string args = "m --src " + src.string() + " -I " + inc.string();
    const Compiled first = kjit_compile(args, cache, out);
    CHECK(kjit_compile(args, cache, out).cached);
    write_file(inc / "lib" / "deep.inc", "#define DEEP 2\n");
    const Compiled second = kjit_compile(args, cache, out);
    CHECK(second.key != first.key);
    CHECK_FALSE(second.cached);
    CHECK(second.cubin != first.cubin);

    // Library: only the `includes` component moves when a file under the directory changes.
    SourceSet set;
    set.add(read_source_file(src, "m.cu"));
    CompileOptions o;
    o.include_dirs = {inc.string()};
    const CacheKey a = make_cache_key(set, "m", o);
    write_file(inc / "lib" / "unrelated.txt", "anything under the directory counts\n");
    const CacheKey b = make_cache_key(set, "m", o);
    for (std::size_t i = 0; i < KeyComponents::kCount; ++i)
        CHECK((a.components.hashes[i] != b.components.hashes[i]) == (i == KeyComponents::includes));
    // The toolkit's include directory is keyed by the toolkit's version beside it.
    test::TempDir toolkit;
    write_file(toolkit.path() / "include" / "cuda.h", "#define CUDA_VERSION 12040\n");
    write_file(toolkit.path() / "version.json", "{\"cuda\": \"12.4.1\"}\n");
    CompileOptions t;
    t.toolkit_include_dirs = {(toolkit.path() / "include").string()};
    const CacheKey k1 = make_cache_key(set, "m", t);
    write_file(toolkit.path() / "include" / "cuda_bf16.h", "// a header of the same toolkit\n");
    CHECK(make_cache_key(set, "m", t).hash == k1.hash);
    write_file(toolkit.path() / "version.json", "{\"cuda\": \"12.4.2\"}\n");
    const CacheKey k2 = make_cache_key(set, "m", t);
    for (std::size_t i = 0; i < KeyComponents::kCount; ++i)
        CHECK((k1.components.hashes[i] != k2.components.hashes[i]) == (i == KeyComponents::toolkit));
}

TEST_CASE("a header on disk beside the kernel but not in its set cannot be read") {
    test::TempDir tmp;
    write_file(tmp.path() / "x.h", "#define X 1\n");
    const std::string text = "#include \"x.h\"\nextern \"C\" __global__ void k(int* y) { y[0] = X; }\n";
    write_file(tmp.path() / "k.cu", text);
    SourceSet set; // the kernel alone, named by its real path as the key does not cover x.h
    set.add({"k.cu", (tmp.path() / "k.cu").string(), text, hash128(text), 0});
    // In a child whose current directory is the kernel's too: NVRTC searches neither.
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(fds[0]);
        std::string result = "compiled";
        if (::chdir(tmp.path().c_str()) != 0)
            result = "chdir failed";
        try {
            (void)compile(set, "k", {});
        } catch (const CompileError& e) {
            result = e.what();
        } catch (const std::exception& e) {
            result = std::string("other error: ") + e.what();
        }
        (void)!::write(fds[1], result.data(), result.size());
        std::_Exit(0);
    }
    ::close(fds[1]);
    std::string result;
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
        result.append(buf, static_cast<std::size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    INFO(result);
    CHECK(contains(result, "could not open source file \"x.h\""));
    CHECK(contains(result, "--no-source-include"));
    // Given in the set, the same header compiles.
    set.add({"x.h", (tmp.path() / "x.h").string(), "#define X 1\n", hash128("#define X 1\n"), 0});
    CHECK(compile(set, "k", {}).cubin.size() > 0);
}

TEST_CASE("kjit-embed embeds a tree by the same rule as --src") {
    test::TempDir tmp;
    const fs::path src = tmp.path() / "src";
    write_tree(src);
    write_file(src / "lib.hh", "#pragma once\n");
    std::string files;
    for (const auto& name : list_tree(src))
        files += " " + (src / name).string();
    const fs::path out = tmp.path() / "embedded.cpp";
    const Run r = run_shell(std::string(KJIT_EMBED) + " --out " + out.string() + " --dir " +
                            src.string() + " --prefix src" + files);
    REQUIRE_MESSAGE(r.code == 0, r.out);
    const std::string generated = read_file(out);
    const SourceSet set = SourceSet::from_directory(src);
    for (const auto& f : set.files())
        CHECK_MESSAGE(contains(generated, "{\"" + f.name + "\", \"src/" + f.name + "\""), f.name);
    CHECK_FALSE(contains(generated, "notes.md"));
}

// ---- 2. delete only what is ours -------------------------------------------------------------

TEST_CASE("cache file names match kjit's patterns exactly or not at all") {
    const Hash128 key = hash128("names");
    const std::string k = key.hex();
    CHECK(parse_cache_file_name(entry_file_name(key)).kind == CacheFileKind::entry);
    CHECK(parse_cache_file_name(lock_file_name(key)).kind == CacheFileKind::lock);
    const CacheFileName t = parse_cache_file_name(temp_file_name(key, 42));
    CHECK(t.kind == CacheFileKind::temp);
    CHECK(t.pid == static_cast<std::uint64_t>(::getpid()));
    CHECK(t.host == cache_host_id());
    CHECK(t.key == key);
    std::string upper = k;
    for (char& c : upper)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (const std::string& name :
         {std::string("thesis.tmp.docx"), k + ".tmp.123.456", k.substr(1) + ".kjit",
          upper + ".kjit", k + ".kjit.bak", k + ".kjitx", k + ".lock.old", "x" + k + ".kjit",
          k + ".kjit.tmp.0000000g.1.2", k + ".kjit.tmp.00000000.0.2",
          k + ".kjit.tmp.00000000.01.2", k + ".kjit.tmp.00000000.1.", k + ".kjit.tmp.00000000.1",
          k + ".kjit.tmp.00000000.1.2.3", k + ".kjit.tmp.0000000.1.2"}) {
        CAPTURE(name);
        CHECK(parse_cache_file_name(name).kind == CacheFileKind::other);
    }
}

TEST_CASE("clear and eviction remove only kjit's own files and reclaim dead writers' temp files") {
    test::TempDir tmp;
    const fs::path dir = tmp.path() / "cache";
    DiskCache cache(dir, kDefaultCacheMaxBytes, [](const std::string&) {});
    REQUIRE(cache.enabled());
    const std::string k = hash128("planted").hex();
    const std::string host = hex8(cache_host_id()), other_host = hex8(cache_host_id() ^ 1u);
    const pid_t dead = ::fork();
    REQUIRE(dead >= 0);
    if (dead == 0)
        std::_Exit(0);
    ::waitpid(dead, nullptr, 0); // gone: kill(dead, 0) fails with ESRCH
    const std::string dead_temp = k + ".kjit.tmp." + host + "." + std::to_string(dead) + ".1";
    const std::string live_temp = k + ".kjit.tmp." + host + "." + std::to_string(::getpid()) + ".2";
    const std::string far_temp = k + ".kjit.tmp." + other_host + "." + std::to_string(dead) + ".3";
    const std::vector<std::string> foreign = {
        "thesis.tmp.docx", k + ".tmp.123.456", "notes.kjit", k + ".kjit.bak", live_temp, far_temp};
    for (const auto& name : foreign)
        write_file(dir / name, "someone's work");
    fs::create_directory(dir / (hash128("a directory").hex() + ".kjit"));
    write_file(dir / (hash128("a directory").hex() + ".kjit") / "inside", "kept");
    write_file(tmp.path() / "target", "outside the cache");
    fs::create_symlink(tmp.path() / "target", dir / (hash128("a link").hex() + ".kjit"));

    write_file(dir / dead_temp, "a writer that died");
    REQUIRE(cache.store(entry_of("one", 100))); // eviction after a store reclaims the dead one
    CHECK_FALSE(fs::exists(dir / dead_temp));
    write_file(dir / dead_temp, "a writer that died");
    CHECK(cache.clear() == 1);
    CHECK_FALSE(fs::exists(dir / dead_temp));
    for (const auto& name : foreign)
        CHECK_MESSAGE(read_file(dir / name) == "someone's work", name);
    CHECK(read_file(dir / (hash128("a directory").hex() + ".kjit") / "inside") == "kept");
    CHECK(fs::is_symlink(dir / (hash128("a link").hex() + ".kjit")));
    CHECK(read_file(tmp.path() / "target") == "outside the cache");

    // A file of kjit's pattern owned by another user is not ours either.
    if (::geteuid() != 0)
        return skip("creating a file owned by another user needs root: the ownership check of "
                    "clear is not exercised");
    const fs::path theirs = dir / entry_file_name(hash128("theirs"));
    write_file(theirs, "their entry");
    REQUIRE(::chown(theirs.c_str(), 65534, 65534) == 0);
    cache.clear();
    REQUIRE(cache.store(entry_of("two", 100)));
    CHECK(read_file(theirs) == "their entry");
}

TEST_CASE("kjit cache clear refuses a directory the cache refused and removes nothing there") {
    test::TempDir tmp;
    const fs::path dir = tmp.path() / "shared";
    fs::create_directory(dir);
    const Hash128 key = hash128("in a shared directory");
    write_file(dir / entry_file_name(key), "an entry");
    write_file(dir / lock_file_name(key), "");
    write_file(dir / "thesis.tmp.docx", "someone's work");
    ::chmod(dir.c_str(), 01777);
    // --dir before the verb or after it.
    for (const std::string& args :
         {"cache --dir " + dir.string() + " clear", "cache clear --dir " + dir.string()}) {
        const Run r = run_kjit(args);
        CHECK(r.code == 2);
        CHECK(r.out == "kjit: error: cache clear refused: " + dir.string() +
                           " is writable by other users (mode 777): a CUBIN planted there would "
                           "run on the GPU; nothing was removed\n");
    }
    CHECK(fs::exists(dir / entry_file_name(key)));
    CHECK(fs::exists(dir / lock_file_name(key)));
    CHECK(fs::exists(dir / "thesis.tmp.docx"));
    ::chmod(dir.c_str(), 0700);
}

TEST_CASE("cache clear during a compile keeps the lock: another process still cannot take it") {
    test::TempDir tmp;
    const Hash128 key = hash128("being compiled");
    const pid_t holder = stopped_holder(tmp.path(), key);
    const Run r = run_kjit("cache --dir " + tmp.path().string() + " clear");
    CHECK(r.code == 0);
    CHECK(fs::exists(tmp.path() / lock_file_name(key)));
    DiskCache cache(tmp.path(), kDefaultCacheMaxBytes, [](const std::string&) {});
    const DiskCache::Lock lock = cache.lock(key, false);
    CHECK_FALSE(lock.held());
    CHECK(lock.busy());
    CHECK(lock_holder(cache.lock_path(key)) == "process " + std::to_string(holder));
    end_child(holder);
    // The holder gone, its lock is free, and the next clear removes it.
    CHECK(cache.lock(key, false).held());
    CHECK(cache.clear() == 0);
    CHECK_FALSE(fs::exists(tmp.path() / lock_file_name(key)));
}

TEST_CASE("locks go with their entries and count toward the cap") {
    test::TempDir tmp;
    const std::size_t one = encode_entry(entry_of("lru 0", 10000)).size();
    DiskCache cache(tmp.path(), 3 * one + 10, [](const std::string&) {});
    std::vector<Hash128> keys;
    for (int i = 0; i < 3; ++i) {
        const CacheEntry e = entry_of("lru " + std::to_string(i), 10000);
        keys.push_back(e.key);
        { const DiskCache::Lock l = cache.lock(e.key, false); } // leaves the lock file
        REQUIRE(cache.store(e));
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    // Three entries and three lock files of ~20 bytes: the locks tip it over the cap.
    CHECK(cache.list(false).size() == 2);
    CHECK_FALSE(fs::exists(cache.entry_path(keys[0])));
    CHECK_FALSE(fs::exists(cache.lock_path(keys[0])));
    CHECK(fs::exists(cache.lock_path(keys[1])));
    CHECK(fs::exists(cache.lock_path(keys[2])));
    // A lock a process holds stays even when its entry goes.
    const DiskCache::Lock held = cache.lock(keys[1], false);
    REQUIRE(held.held());
    REQUIRE(cache.store(entry_of("lru 3", 10000)));
    CHECK_FALSE(fs::exists(cache.entry_path(keys[1])));
    CHECK(fs::exists(cache.lock_path(keys[1])));
}

TEST_CASE("an entry larger than the cap is refused with one warning and evicts nothing") {
    test::TempDir tmp;
    std::vector<std::string> warnings;
    DiskCache cache(tmp.path(), 1 << 20, [&](const std::string& m) { warnings.push_back(m); });
    const CacheEntry small = entry_of("small", 1000);
    REQUIRE(cache.store(small));
    CHECK_FALSE(cache.store(entry_of("big", 2 << 20)));
    CHECK_FALSE(cache.store(entry_of("bigger", 3 << 20)));
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0] == "not caching kernel big: its entry of " +
                             std::to_string(encode_entry(entry_of("big", 2 << 20)).size()) +
                             " bytes is larger than the cache's cap of 1048576 bytes "
                             "(KJIT_CACHE_MAX_BYTES); it is compiled again when next needed");
    CHECK(cache.load(small.key));
    CHECK(cache.list(false).size() == 1);
}

TEST_CASE("a directory at an entry's path is foreign: one warning per run and no false delete") {
    test::TempDir tmp;
    const SourceSet set = [] {
        SourceSet s;
        const std::string text = "extern \"C\" __global__ void f(int* y) { y[0] = 1; }\n";
        s.add({"f.cu", "src/f.cu", text, hash128(text), 0});
        return s;
    }();
    const CacheKey key = make_cache_key(set, "f", {});
    const fs::path at = tmp.path() / entry_file_name(key.hash);
    write_file(at / "something", "not an entry");
    for (int run = 0; run < 2; ++run) {
        std::vector<std::string> warnings;
        CacheSettings s;
        s.dir = tmp.path();
        s.warn = [&](const std::string& m) { warnings.push_back(m); };
        CompileCache cc(s);
        const Specialized r = cc.get(set, {"f", {}});
        REQUIRE(r.compiled);
        CHECK(r.origin == Origin::compiled);
        REQUIRE(warnings.size() == 1);
        CHECK(warnings[0] == at.string() + " is a directory, not a file kjit wrote: it is left "
                                           "alone and this kernel is compiled without the cache");
        CHECK(read_file(at / "something") == "not an entry");
    }
}

// ---- 3. never hang ---------------------------------------------------------------------------

TEST_CASE("a FIFO at an entry's path neither blocks kjit compile nor kjit cache why") {
    test::TempDir tmp;
    const fs::path src = tmp.path() / "src", cache = tmp.path() / "cache";
    write_tree(src);
    const CacheKey key = make_cache_key(SourceSet::from_directory(src), "k", {});
    fs::create_directories(cache);
    ::chmod(cache.c_str(), 0700);
    REQUIRE(::mkfifo((cache / entry_file_name(key.hash)).c_str(), 0600) == 0);
    const std::string env = "KJIT_CACHE_DIR=" + cache.string();
    const std::string fifo_warning = (cache / entry_file_name(key.hash)).string() +
                                     " is a FIFO, not a file kjit wrote: it is left alone and "
                                     "this kernel is compiled without the cache";
    Run r = run_shell(env + " timeout 60 " KJIT_BINARY " compile k --src " + src.string());
    CHECK(r.code == 0);
    CHECK(contains(r.out, "key: " + key.hex()));
    CHECK(contains(r.out, "kjit: warning: " + fifo_warning));
    r = run_shell(env + " timeout 60 " KJIT_BINARY " cache why k --src " + src.string());
    CHECK(r.code == 0);
    CHECK(contains(r.out, "kjit: warning: " + fifo_warning));
    CHECK(contains(r.out, "miss: no entry for kernel k"));
    struct stat st {};
    REQUIRE(::lstat((cache / entry_file_name(key.hash)).c_str(), &st) == 0);
    CHECK(S_ISFIFO(st.st_mode));
}

TEST_CASE("a FIFO at a lock's path: the kernel is compiled and stored without the lock") {
    test::TempDir tmp;
    SourceSet set;
    const std::string text = "extern \"C\" __global__ void g(int* y) { y[0] = 2; }\n";
    set.add({"g.cu", "src/g.cu", text, hash128(text), 0});
    const CacheKey key = make_cache_key(set, "g", {});
    const fs::path lock = tmp.path() / lock_file_name(key.hash);
    REQUIRE(::mkfifo(lock.c_str(), 0600) == 0);
    std::vector<std::string> warnings;
    CacheSettings s;
    s.dir = tmp.path();
    s.warn = [&](const std::string& m) { warnings.push_back(m); };
    const Specialized first = CompileCache(s).get(set, {"g", {}});
    REQUIRE(first.compiled);
    CHECK(first.origin == Origin::compiled);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0] == lock.string() + " is a FIFO, not a file kjit wrote: it is left alone and "
                                         "this kernel is compiled without the lock");
    const Specialized second = CompileCache(s).get(set, {"g", {}});
    CHECK(second.origin == Origin::disk);
    CHECK(warnings.size() == 1);
    CHECK(fs::is_fifo(lock));
}

TEST_CASE("a stopped process holding a key's lock delays kjit compile by the lock wait and no more") {
    test::TempDir tmp;
    const fs::path src = tmp.path() / "src", cache = tmp.path() / "cache";
    write_tree(src);
    const CacheKey key = make_cache_key(SourceSet::from_directory(src), "k", {});
    const pid_t holder = stopped_holder(cache, key.hash);
    const std::string process = "process " + std::to_string(holder);
    const std::string lock = (cache / lock_file_name(key.hash)).string();
    const auto start = std::chrono::steady_clock::now();
    Run r = run_shell("KJIT_CACHE_DIR=" + cache.string() + " KJIT_CACHE_LOCK_WAIT=6 timeout 120 " +
                      KJIT_BINARY " compile k --src " + src.string());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(seconds < 100);
    CHECK(contains(r.out, "kjit: warning: waiting for " + process + ", which holds the lock " +
                              lock + " (compiling that kernel); after 6 s (KJIT_CACHE_LOCK_WAIT) "
                              "it is compiled here instead\n"));
    CHECK(contains(r.out, "kjit: warning: " + process + " still holds the lock " + lock +
                              " after 6 s (KJIT_CACHE_LOCK_WAIT): the kernel is compiled here "
                              "without waiting for it\n"));
    CHECK(contains(r.out, ": compiled for sm_90"));
    // 0: no wait at all; the entry stored meanwhile is then served.
    r = run_shell("KJIT_CACHE_DIR=" + cache.string() + " KJIT_CACHE_LOCK_WAIT=0 timeout 120 " +
                  KJIT_BINARY " compile k --src " + src.string());
    CHECK(r.code == 0);
    CHECK(contains(r.out, "cached, compiled"));
    fs::remove(cache / entry_file_name(key.hash));
    r = run_shell("KJIT_CACHE_DIR=" + cache.string() + " KJIT_CACHE_LOCK_WAIT=0 timeout 120 " +
                  KJIT_BINARY " compile k --src " + src.string());
    CHECK(r.code == 0);
    CHECK(contains(r.out, process + " still holds the lock " + lock + " after 0 s"));
    end_child(holder);
}

TEST_CASE("KJIT_CACHE_LOCK_WAIT is a declared flag with a range") {
    const Run r = run_kjit("compile k --src /nonexistent", "KJIT_CACHE_LOCK_WAIT=-1");
    CHECK(r.code == 2);
    CHECK(r.out == "kjit: error: KJIT_CACHE_LOCK_WAIT=-1 is out of range; accepted values: "
                   "integers 0..86400\n");
}

// ---- 5. freshness that touch cannot fool -----------------------------------------------------

TEST_CASE("a same-size edit with its old mtime restored is picked up by the source override") {
    test::TempDir tmp;
    const std::string before = "extern \"C\" __global__ void t(int* y) { y[0] = 1; }\n";
    const std::string after = "extern \"C\" __global__ void t(int* y) { y[0] = 2; }\n";
    const fs::path file = tmp.path() / "t.cu";
    const auto edit_keeping_mtime = [&](const std::string& text) {
        struct stat st {};
        REQUIRE(::stat(file.c_str(), &st) == 0);
        write_file(file, text);
        const struct timespec times[2] = {st.st_atim, st.st_mtim};
        REQUIRE(::utimensat(AT_FDCWD, file.c_str(), times, 0) == 0);
        struct stat now {};
        REQUIRE(::stat(file.c_str(), &now) == 0);
        REQUIRE(now.st_size == st.st_size);
        REQUIRE(now.st_mtim.tv_sec == st.st_mtim.tv_sec);
        REQUIRE(now.st_mtim.tv_nsec == st.st_mtim.tv_nsec);
    };
    write_file(file, before);
    SourceProvider provider(tmp.path());
    CHECK(provider.current()->kernel("t").text == before);
    // At once (within the clock tick of the first write: compared by content) ...
    edit_keeping_mtime(after);
    CHECK(provider.current()->kernel("t").text == after);
    // ... and later, when the stamp alone decides (the ctime moved).
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    const auto settled = provider.current();
    CHECK(provider.current() == settled); // nothing changed: the same snapshot
    edit_keeping_mtime(before);
    CHECK(provider.current()->kernel("t").text == before);
}

} // TEST_SUITE
