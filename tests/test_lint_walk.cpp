// The include resolver the compiler and the linter share, the conditions the linter evaluates
// as NVRTC does, and the rules that read only the branches NVRTC takes.
#include "tests/lint_support.hpp"

#include "jit/compiler.hpp"
#include "jit/include_resolver.hpp"
#include "lint/macros.hpp"
#include "lint/preprocess.hpp"
#include "lint/scanner.hpp"

#include "tests/doctest.hpp"

#include <unistd.h>

namespace {
using kjit::IncludeResolver;
using kjit::ResolvedInclude;
using kjit::SourceSet;
using kjit::test::contains;
using kjit::test::join_lines;
using kjit::test::lint_source;
using kjit::test::Run;
using kjit::test::run_kjit;
using kjit::test::TempDir;
using kjit::test::write_file;
using namespace kjit::lint;

SourceSet set_of(const std::vector<std::pair<std::string, std::string>>& files) {
    SourceSet set;
    for (const auto& [name, text] : files)
        set.add({name, name, text, {}, 0});
    return set;
}

// Whether NVRTC compiles `kernel` of `set` as kjit's compiler does: the set's files in memory
// by name, the toolkit's include directories, no lookup beside the including file.
bool nvrtc_compiles(const SourceSet& set, const std::string& kernel, std::string* log = nullptr) {
    kjit::CompileOptions options;
    for (const auto& dir : IncludeResolver(set).search_dirs())
        options.include_dirs.push_back(dir);
    options.extra = {"--no-source-include"};
    try {
        (void)kjit::compile(set, kernel, options);
        return true;
    } catch (const kjit::CompileError& e) {
        if (log)
            *log = e.log;
        return false;
    }
}

std::optional<long long> condition(const std::string& text, const Macros& macros = {}) {
    return evaluate_condition(tokenize(text), macros, [](const std::string& name, bool) {
        return std::optional<bool>(name == "present.cuh");
    });
}

Macros defines(const std::string& text) {
    Macros out;
    for (const auto& d : scan(text).directives)
        if (auto def = parse_define(d))
            out[def->first] = def->second;
    return out;
}
} // namespace

TEST_SUITE("lint") {

    TEST_CASE("the resolver looks includes up as NVRTC does: by the name as written then -I") {
        const SourceSet set = set_of({{"k.cu", ""},
                                      {"util.cuh", ""},
                                      {"beside.h", ""},
                                      {"sub/a.cuh", "#include \"b.cuh\"\n"},
                                      {"sub/b.cuh", ""}});
        TempDir extra;
        write_file(extra.path() / "third_party.h", "");
        const IncludeResolver r(set, {extra.path()});
        CHECK(r.resolve("util.cuh", true).file == set.find("util.cuh"));
        CHECK(r.resolve("util.cuh", false).file == set.find("util.cuh"));
        CHECK(r.resolve("beside.h", false).where == ResolvedInclude::Where::source);
        // Never beside the including file: the compiler offers "sub/b.cuh" by that name only.
        const ResolvedInclude b = r.resolve("b.cuh", false, "sub/a.cuh");
        CHECK_FALSE(b.found());
        CHECK(b.beside == set.find("sub/b.cuh"));
        CHECK(r.resolve("./util.cuh", false, "k.cu").beside == set.find("util.cuh"));
        CHECK(r.resolve("third_party.h", true).where == ResolvedInclude::Where::include_dir);
        CHECK_FALSE(r.resolve("cstdio", true).found());
        REQUIRE_FALSE(r.search_dirs().empty());
        CHECK(r.search_dirs().front() == extra.path().string());
        if (kjit::toolkit_include_dirs().empty()) {
            MESSAGE("no CUDA toolkit include directory: toolkit headers not resolved");
            return;
        }
        for (const char* h : {"cuda_fp16.h", "cuda_bf16.h", "cuda/std/cstdint",
                              "cub/block/block_reduce.cuh"})
            CHECK(r.resolve(h, true).where == ResolvedInclude::Where::toolkit);
        CHECK(r.headers(*set.find("sub/a.cuh")).empty());
    }

    TEST_CASE("what lints clean compiles and what compiles lints clean") {
        // A header's include of its neighbour, <x.cuh> of a kernel source, an .h beside the
        // kernel: the linter and NVRTC (as kjit compiles) agree on each.
        const std::string kernel = "extern \"C\" __global__ void k(float* y) { y[0] = B + H; }\n";
        const SourceSet broken = set_of({{"k.cu", "#include <sub/a.cuh>\n#include \"x.h\"\n" + kernel},
                                         {"sub/a.cuh", "#pragma once\n#include \"b.cuh\"\n"},
                                         {"sub/b.cuh", "#define B 1\n"},
                                         {"x.h", "#define H 2\n"}});
        std::string log;
        CHECK_FALSE(nvrtc_compiles(broken, "k", &log));
        CHECK(contains(log, "cannot open source file \"b.cuh\""));
        const auto found = kjit::test::formatted(lint({&broken, {}, {}, nullptr, {}}));
        INFO(join_lines(found));
        REQUIRE(found.size() == 1);
        CHECK(found[0] == "sub/a.cuh:2:10: error: #include \"b.cuh\" names no file NVRTC finds: "
                          "it looks headers up by the name as written, not beside the including "
                          "file; write \"sub/b.cuh\" [KJ005]");
        const SourceSet fixed = set_of({{"k.cu", "#include <sub/a.cuh>\n#include \"x.h\"\n" + kernel},
                                        {"sub/a.cuh", "#pragma once\n#include \"sub/b.cuh\"\n"},
                                        {"sub/b.cuh", "#define B 1\n"},
                                        {"x.h", "#define H 2\n"}});
        CHECK(nvrtc_compiles(fixed, "k"));
        CHECK(lint({&fixed, {}, {}, nullptr, {}}).findings.empty());
    }

    TEST_CASE("an include of the toolkit compiles or is flagged as NVRTC says") {
        if (kjit::toolkit_include_dirs().empty()) {
            MESSAGE("no CUDA toolkit include directory: skipped");
            return;
        }
        const std::string kernel = "extern \"C\" __global__ void k(float* y) { y[0] = 1.0f; }\n";
        // cuda_runtime.h includes "target", which NVRTC provides itself; cuda.h needs stdlib.h.
        const SourceSet good = set_of({{"k.cu", "#include <cuda_runtime.h>\n#include "
                                                "<cuda_fp16.h>\n#include <cuda_bf16.h>\n" +
                                                    kernel}});
        CHECK(nvrtc_compiles(good, "k"));
        CHECK(lint({&good, {}, {}, nullptr, {}}).findings.empty());
        const SourceSet host = set_of({{"k.cu", "#include <cuda.h>\n" + kernel}});
        CHECK_FALSE(nvrtc_compiles(host, "k"));
        const auto found = kjit::test::formatted(lint({&host, {}, {}, nullptr, {}}));
        INFO(join_lines(found));
        REQUIRE(found.size() == 1);
        CHECK(contains(found[0], "k.cu:1:10: error: #include <cuda.h>: NVRTC cannot compile it: "));
        CHECK(contains(found[0], "cannot open source file \"stdlib.h\" [KJ005]"));
    }

    TEST_CASE("conditions see NVRTC's predefined macros as checked against NVRTC itself") {
        for (const char* arch : {"sm_90", "sm_80"}) {
            const Macros m = nvrtc_macros(arch, kjit::nvrtc_version());
            CHECK_FALSE(m.contains("__NVCC__"));
            CHECK_FALSE(m.contains("__GNUC__"));
            CHECK_FALSE(m.contains("__clang__"));
            // Every value kjit models, and the names it says are absent, as NVRTC sees them.
            std::string probe;
            for (const auto& [name, macro] : m) {
                if (macro.opaque) {
                    probe += "#if !defined(" + name + ")\n#error " + name + " missing\n#endif\n";
                    continue;
                }
                std::string value;
                for (const auto& t : macro.body)
                    value += t + " ";
                probe += "#if !defined(" + name + ") || (" + name + ") != (" + value + ")\n#error " +
                         name + "\n#endif\n";
            }
            for (const char* absent : {"__NVCC__", "__GNUC__", "__clang__", "__linux__",
                                       "__x86_64__", "CUDA_VERSION", "_WIN32"})
                probe += std::string("#ifdef ") + absent + "\n#error " + absent + "\n#endif\n";
            SourceSet set = set_of({{"probe.cu", probe + "__global__ void k() {}\n"}});
            kjit::CompileOptions options;
            options.arch = arch;
            INFO(arch << "\n" << probe);
            CHECK_NOTHROW((void)kjit::compile(set, "probe", options));
            CHECK(m.at("__CUDA_ARCH__").body == std::vector<std::string>{
                                                    std::string(arch).substr(3) + "0"});
        }
    }

    TEST_CASE("evaluate_condition expands function-like macros and knows what it cannot know") {
        const Macros m = defines("#define VER(a, b) ((a) * 1000 + (b) * 10)\n"
                                 "#define CAT(a, b) a##b\n#define HALF_1 1\n#define ONE 1\n"
                                 "#define LIST(...) (__VA_ARGS__ + 0)\n");
        CHECK(condition("VER(12, 4) == 12040", m) == 1);
        CHECK(condition("CAT(HALF_, 1)", m) == 1);
        CHECK(condition("LIST(2, 3)", m) == 3);
        CHECK(condition("defined(ONE) and not defined TWO", m) == 1);
        CHECK(condition("ONE bitand 3", m) == 1);
        CHECK(condition("UNDEFINED_NAME") == 0);
        CHECK(condition("__has_include(\"present.cuh\") && !__has_include(<absent.h>)") == 1);
        CHECK_FALSE(condition("__has_builtin(__builtin_expect)"));
        CHECK(condition("0 && __has_builtin(__builtin_expect)") == 0);
        CHECK(condition("1 || __has_builtin(__builtin_expect)") == 1);
        Macros opaque = m;
        opaque["MAYBE"].opaque = true;
        CHECK_FALSE(condition("MAYBE > 2", opaque));
        CHECK_FALSE(condition("defined(MAYBE)", opaque));
        CHECK(condition("'a' == 97") == 1);
        CHECK_FALSE(condition("VER(1)", m)); // wrong number of arguments
    }

    TEST_CASE("the scanner reads a byte-order mark and raw strings as the preprocessor does") {
        const auto bom = scan("\xEF\xBB\xBF#ifndef X\n#endif\n");
        CHECK(bom.bom);
        REQUIRE(bom.directives.size() == 2);
        CHECK(bom.directives[0].name == "ifndef");
        CHECK(bom.directives[0].column == 4);
        const auto raw = scan("auto s = R\"x(\n#include <nope>\n)x\";\n#define A 1\n");
        REQUIRE(raw.directives.size() == 1);
        CHECK(raw.directives[0].name == "define");
        CHECK(raw.directives[0].line == 4);
    }

    TEST_CASE("rules read only live branches and keep exact positions") {
        // An include guard named like an implementation macro is live; so is #ifdef __CUDACC__.
        CHECK(lint_source("#ifndef __K_CU__\n#define __K_CU__\n#ifdef __CUDACC__\n"
                          "  #include <missing.h>\n#endif\n#endif\n") ==
              std::vector<std::string>{
                  "k.cu:4:12: error: #include <missing.h>: NVRTC finds no such header (not a "
                  "kernel source" +
                  std::string(kjit::toolkit_include_dirs().empty()
                                  ? "; no CUDA toolkit include directory was found"
                                  : ", not in the CUDA toolkit's include directories") +
                  "): host headers are not available to NVRTC [KJ005]"});
        // Branches NVRTC never takes, and a condition after a missing include.
        CHECK(lint_source("#ifdef __NVCC__\n#include <cstdio>\n#endif\n#ifndef __CUDA_ARCH__\n"
                          "#if HOST_ONLY_KNOB\n#endif\n#endif\n#if defined(A) and not defined(B)\n#endif\n")
                  .empty());
        // A name the outcome does not depend on is not read; one it does depend on is.
        CHECK(lint_source("#if !defined(__HIPCC__) || HIP_ONLY_VERSION < 4\n#endif\n").empty());
        const auto read = lint_source("#if defined(__CUDACC__) && CUDA_ONLY_KNOB\n#endif\n");
        REQUIRE(read.size() == 1);
        CHECK(contains(read[0], "k.cu:1:28: error: #if reads CUDA_ONLY_KNOB"));
        const auto after = lint_source("#include \"gone.cuh\"\n#if FROM_GONE\n#endif\n");
        REQUIRE(after.size() == 1);
        CHECK(contains(after[0], "gone.cuh"));
        // A computed include resolves through its macro.
        CHECK(lint_source("#define HEADER <nowhere.h>\n#include HEADER\n").size() == 1);
        // A one-line body may open a brace; parentheses must balance in any body.
        CHECK(lint_source("#define BEGIN_NS namespace ns {\n#define END_NS }\n").empty());
        CHECK(lint_source("#define CALL(x) f((x)\n") ==
              std::vector<std::string>{"k.cu:1:18: error: unbalanced '(' in the #define of CALL: "
                                       "its body ends on line 1 without closing it; a line "
                                       "continuation '\\' may be missing at the end of line 1 "
                                       "[KJ007]"});
    }

    TEST_CASE("kjit lint --arch evaluates __CUDA_ARCH__ per target architecture") {
        TempDir dir;
        write_file(dir.path() / "k.cu", "#if __CUDA_ARCH__ >= 900\n#include <hopper_only.h>\n"
                                        "#endif\nextern \"C\" __global__ void k() {}\n");
        CHECK(run_kjit("lint --arch sm_80 " + dir.path().string()).code == 0);
        const Run r = run_kjit("lint --arch sm_80 --arch sm_90 " + dir.path().string());
        CHECK(r.code == 1);
        CHECK(contains(r.out, "k.cu:2:10: error: #include <hopper_only.h>"));
        // -I: a header in an extra include directory is found, as `kjit compile -I` finds it.
        write_file(dir.path() / "k.cu", "#include <third_party.h>\nextern \"C\" __global__ void "
                                        "k() {}\n");
        TempDir extra;
        write_file(extra.path() / "third_party.h", "#pragma once\n");
        CHECK(run_kjit("lint " + dir.path().string()).code == 1);
        CHECK(run_kjit("lint -I " + extra.path().string() + " " + dir.path().string()).code == 0);
    }

    TEST_CASE("an unreadable directory is an environment error (exit 2) that names it") {
        TempDir dir;
        write_file(dir.path() / "k.cu", "extern \"C\" __global__ void k() {}\n");
        const auto locked = dir.path() / "locked";
        std::filesystem::create_directories(locked / "deeper");
        std::filesystem::permissions(dir.path(), std::filesystem::perms::owner_all |
                                                     std::filesystem::perms::group_read |
                                                     std::filesystem::perms::group_exec |
                                                     std::filesystem::perms::others_read |
                                                     std::filesystem::perms::others_exec);
        std::filesystem::permissions(locked, std::filesystem::perms::none);
        std::string prefix;
        if (::geteuid() == 0) {
            // root reads any directory: run as nobody, for whom `locked` is unreadable.
            if (std::system("command -v setpriv >/dev/null 2>&1") != 0) {
                MESSAGE("running as root without setpriv: skipped");
                std::filesystem::permissions(locked, std::filesystem::perms::owner_all);
                return;
            }
            prefix = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
        }
        const Run r = kjit::test::run_shell(prefix + KJIT_BINARY + " lint " + dir.path().string());
        std::filesystem::permissions(locked, std::filesystem::perms::owner_all);
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK(contains(r.out, locked.string() + ": error: cannot read kernel source tree: "
                                                "Permission denied"));
    }

} // TEST_SUITE
