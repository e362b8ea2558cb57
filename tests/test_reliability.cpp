// The cache's promises at their edges: the key covers everything the compiler can read, and
// freshness checks that touch cannot fool.
#include "jit/compile_cache.hpp"
#include "jit/includes.hpp"
#include "jit/source_provider.hpp"
#include "tests/support.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
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
using kjit::test::Run;
using kjit::test::run_kjit;
using kjit::test::run_shell;
namespace fs = std::filesystem;

namespace {

void write_file(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

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

} // namespace

TEST_SUITE("reliability") {

// ---- 1. the key covers everything the compiler can read -------------------------------------

TEST_CASE("the include scan names every file a directive can reach, and a macro means any") {
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

TEST_CASE("a tree's set holds its kernels, its headers and what an include names, any extension") {
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
