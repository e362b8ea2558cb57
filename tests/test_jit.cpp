#include "jit/compiler.hpp"
#include "jit/freshness.hpp"
#include "jit/shape_file.hpp"
#include "tests/support.hpp"

#include "tests/doctest.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

using namespace kjit;
using kjit::test::write_file;

namespace {
std::string read_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}
} // namespace

TEST_SUITE("jit") {

TEST_CASE("every kernel_src file is embedded with its repo path and hash and build-time mtime") {
    const SourceSet set = SourceSet::embedded();
    const SourceSet disk = SourceSet::from_directory(KJIT_SOURCE_DIR "/kernel_src", "kernel_src");
    REQUIRE(set.find("rms_norm.cu") != nullptr);
    REQUIRE(set.find("common.cuh") != nullptr);
    CHECK(set.files().size() == disk.files().size());
    for (const auto& f : disk.files()) {
        const SourceFile* e = set.find(f.name);
        REQUIRE_MESSAGE(e != nullptr, f.name << " is on disk but not embedded");
        CHECK(e->path == "kernel_src/" + f.name);
        CHECK(e->text == f.text); // the build embedded the current copy
        CHECK(e->hash == hash128(e->text));
        CHECK(e->hash == f.hash);
        CHECK(e->mtime_ns > 0);
    }
    CHECK(set.kernel("rms_norm").kernel_name() == "rms_norm");
    CHECK(set.kernel("rms_norm.cu").is_kernel());
}

TEST_CASE("an unknown kernel is a NotFoundError that lists the known ones") {
    const SourceSet set = SourceSet::embedded();
    try {
        (void)set.kernel("rms_nrom");
        FAIL("expected NotFoundError");
    } catch (const NotFoundError& e) {
        CHECK(std::string(e.what()).find("unknown kernel 'rms_nrom'") != std::string::npos);
        CHECK(std::string(e.what()).find("rms_norm") != std::string::npos);
    }
}

TEST_CASE("hash128 is xxh3-128: fixed known values") {
    CHECK(hash128("").hex() == "99aa06d3014798d86001c324468d497f");
    CHECK(hash128("kjit") != hash128("kjiT"));
    CHECK(hash64("") == 0x2d06800538d394c2ull);
    const Hash128 h = hash128("kjit");
    CHECK(Hash128::parse(h.hex()) == h);
    CHECK(hex64(0x00ab) == "00000000000000ab");
    CHECK(parse_hex64("00000000000000AB") == 0xabull);
    CHECK_FALSE(parse_hex64("ab"));
    CHECK_FALSE(Hash128::parse(h.hex().substr(1)));
    CHECK_FALSE(Hash128::parse(std::string(32, 'g')));
}

TEST_CASE("CompileOptions renders NVRTC flags in a fixed order with sorted defines") {
    CompileOptions o;
    o.arch = "sm_90a";
    add_define(o.defines, "T_SPLIT=16");
    add_define(o.defines, "MAX_DSTATE=16");
    add_define(o.defines, "USE_TC");
    o.fmad = false;
    o.lineinfo = true;
    o.extra = {"--extra-device-vectorization"};
    const std::vector<std::string> want = {
        "--gpu-architecture=sm_90a", "-std=c++17",   "--fmad=false",      "-lineinfo",
        "-DMAX_DSTATE=16",           "-DT_SPLIT=16", "-DUSE_TC=1",        "--extra-device-vectorization"};
    CHECK(o.argv() == want);
    CHECK(o.defines_text() == "MAX_DSTATE=16 T_SPLIT=16 USE_TC=1");
    CHECK_THROWS_AS(add_define(o.defines, "1BAD=3"), ConfigError);
    CHECK_THROWS_AS(add_define(o.defines, "=3"), ConfigError);
    CHECK_THROWS_AS(add_define(o.defines, "A-B=3"), ConfigError);
}

TEST_CASE("rms_norm compiles to sm_90 CUBIN with PTX on request") {
    CompileOptions o;
    o.ptx = true;
    const CompiledKernel c = compile(SourceSet::embedded(), "rms_norm", o);
    REQUIRE(c.cubin.size() > 4);
    CHECK(c.cubin.substr(0, 4) == "\x7f" "ELF");
    CHECK(c.ptx.find(".entry rms_norm_f32") != std::string::npos);
    CHECK(c.ptx.find(".entry rms_norm_bf16") != std::string::npos);
    CHECK(c.path == "kernel_src/rms_norm.cu");
    CHECK(c.compile_ms > 0);
}

TEST_CASE("a check-only compile gives the full compile's entry points and bounds and no CUBIN") {
    CompileOptions full;
    full.defines["RMS_BLOCK"] = "128";
    CompileOptions check = full;
    check.check_only = true;
    check.lineinfo = true; // -G carries the line table: not passed twice
    const std::vector<std::string> argv = check.argv();
    CHECK(argv[0] == "--gpu-architecture=compute_90");
    CHECK(std::count(argv.begin(), argv.end(), "-G") == 1);
    CHECK(std::count(argv.begin(), argv.end(), "-lineinfo") == 0);
    for (const char* kernel : {"rms_norm", "conv1d", "delta_rule"}) {
        CAPTURE(kernel);
        const CompiledKernel a = compile(SourceSet::embedded(), kernel, full);
        const CompiledKernel b = compile(SourceSet::embedded(), kernel, check);
        CHECK(b.cubin.empty());
        REQUIRE(a.entries.size() == b.entries.size());
        REQUIRE(!a.entries.empty());
        for (std::size_t i = 0; i < a.entries.size(); ++i) {
            CHECK(encode_entry_params(a.entries[i]) == encode_entry_params(b.entries[i]));
        }
    }
    const CompiledKernel r = compile(SourceSet::embedded(), "rms_norm", check);
    REQUIRE(r.entry("rms_norm_f32"));
    CHECK(r.entry("rms_norm_f32")->max_threads == 128);
    // The front end still refuses what the source asserts: RMS_WIDTH % RMS_BLOCK.
    check.defines["RMS_BLOCK"] = "96";
    CHECK_THROWS_AS(compile(SourceSet::embedded(), "rms_norm", check), CompileError);
}

TEST_CASE("kjit's kernels compile for the oldest and the newest architecture NVRTC knows") {
    // Instructions an older architecture lacks (cvt.rn.bf16x2 before sm_80) are guarded by
    // __CUDA_ARCH__: a kernel that builds only for the GPU it was tuned on fails its users.
    const std::vector<std::string> archs = supported_archs();
    REQUIRE(!archs.empty());
    for (const std::string& arch : {archs.front(), archs.back()})
        for (const char* kernel : {"rms_norm", "conv1d", "delta_rule"}) {
            CAPTURE(arch);
            CAPTURE(kernel);
            CompileOptions o;
            o.arch = arch;
            CHECK_NOTHROW(compile(SourceSet::embedded(), kernel, o));
        }
}

TEST_CASE("an injected define reaches the kernel: RMS_BLOCK changes the launch bounds") {
    const SourceSet set = SourceSet::embedded();
    CompileOptions a, b;
    a.ptx = b.ptx = true;
    a.defines["RMS_BLOCK"] = "128";
    b.defines["RMS_BLOCK"] = "1024";
    const auto pa = compile(set, "rms_norm", a).ptx;
    const auto pb = compile(set, "rms_norm", b).ptx;
    CHECK(pa.find(".maxntid 128, 1, 1") != std::string::npos);
    CHECK(pb.find(".maxntid 1024, 1, 1") != std::string::npos);
}

TEST_CASE("rms_norm with RMS_N holds a copy for that width and RMS_N = 0 compiles the default's code") {
    // The GPU bit test cannot tell which path ran (both give the same bits): the code can.
    const SourceSet set = SourceSet::embedded();
    CompileOptions none, zero, width;
    none.ptx = zero.ptx = width.ptx = true;
    zero.defines["RMS_N"] = "0";
    width.defines["RMS_N"] = "1000";
    const auto p0 = compile(set, "rms_norm", none).ptx;
    CHECK(compile(set, "rms_norm", zero).ptx == p0);
    const auto pn = compile(set, "rms_norm", width).ptx;
    CHECK(pn.find(", 1000;") != std::string::npos); // the launch's width against the constant
    CHECK(p0.find(", 1000;") == std::string::npos);
    CHECK(pn.size() > p0.size() * 3 / 2); // the width-constant copy beside the run-time one
}

TEST_CASE("a syntax error is reported at the kernel's own file:line:col with options and defines") {
    test::TempDir dir;
    write_file(dir.path() / "common.cuh",
               read_file(KJIT_SOURCE_DIR "/kernel_src/common.cuh"));
    write_file(dir.path() / "bad.cu", "#include \"common.cuh\"\n"
                                      "extern \"C\" __global__ void bad(float* y) {\n"
                                      "    float v = 1.0f\n"
                                      "    y[0] = v;\n"
                                      "}\n");
    const SourceSet set = SourceSet::from_directory(dir.path(), "kernels");
    CompileOptions o;
    o.defines["FOO"] = "3";
    try {
        (void)compile(set, "bad", o);
        FAIL("expected CompileError");
    } catch (const CompileError& e) {
        CHECK(e.kernel == "bad");
        CHECK(e.path == "kernels/bad.cu");
        REQUIRE(!e.diagnostics.empty());
        CHECK(e.diagnostics[0].format() == "kernels/bad.cu:4:5: error: expected a \";\"");
        const std::string what = e.what();
        CHECK(what.find("defines: FOO=3") != std::string::npos);
        CHECK(what.find("--gpu-architecture=sm_90") != std::string::npos);
        CHECK(what.find("kernels/bad.cu:4:5: error") != std::string::npos);
        CHECK(e.source_hash == set.kernel("bad").hash.hex());
    }
}

TEST_CASE("an error inside a header is reported at the header's path") {
    test::TempDir dir;
    write_file(dir.path() / "util.cuh", "#pragma once\n__device__ int f() { return zz; }\n");
    write_file(dir.path() / "k.cu", "#include \"util.cuh\"\n"
                                    "extern \"C\" __global__ void k(int* y) { y[0] = f(); }\n");
    try {
        (void)compile(SourceSet::from_directory(dir.path(), "src"), "k", {});
        FAIL("expected CompileError");
    } catch (const CompileError& e) {
        REQUIRE(!e.diagnostics.empty());
        CHECK(e.diagnostics[0].path == "src/util.cuh");
        CHECK(e.diagnostics[0].line == 2);
        CHECK(e.diagnostics[0].column == 29);
        CHECK(e.diagnostics[0].message == "identifier \"zz\" is undefined");
    }
}

TEST_CASE("rewrite_log keeps non-diagnostic lines and maps warnings with numbers") {
    SourceSet set;
    set.add({"h.cuh", "kernel_src/h.cuh", "", {}, 0});
    std::vector<Diagnostic> d;
    const std::string out = rewrite_log("h.cuh(3): warning #177-D: variable \"y\" was declared\n"
                                        "      int y = 3\n"
                                        "          ^\n"
                                        "\n1 warning\n",
                                        set, &d);
    REQUIRE(d.size() == 1);
    CHECK(d[0].format() == "kernel_src/h.cuh:3:9: warning: variable \"y\" was declared");
    CHECK(out.find("1 warning") != std::string::npos);
}

TEST_CASE("a shape file keeps the position of each spec and of each define") {
    test::TempDir dir;
    const auto file = dir.path() / "model.toml";
    write_file(file, "[shape]\nd_model = 7168\n\n[[kernel]]\nname = \"norm\"\n"
                     "defines = { RMS_BLOCK = \"${d_model}\", WIDE = true }\n");
    const ShapeFile shape = ShapeFile::load(file);
    REQUIRE(shape.kernels.size() == 1);
    const KernelSpec& k = shape.kernels[0];
    CHECK(k.where == SourceLocation{file.string(), 4, 1});
    REQUIRE(k.define_sources.size() == 2);
    CHECK(k.define_sources.at("RMS_BLOCK").name == SourceLocation{file.string(), 6, 13});
    CHECK(k.define_sources.at("RMS_BLOCK").value == SourceLocation{file.string(), 6, 25});
    CHECK(k.define_sources.at("WIDE").value == SourceLocation{file.string(), 6, 46});
    CHECK(resolve_defines(k, shape.shape) ==
          std::map<std::string, std::string>{{"RMS_BLOCK", "7168"}, {"WIDE", "1"}});
}

TEST_CASE("a ${name} the shape lacks or an unclosed ${ is an error at the define's file:line:col") {
    test::TempDir dir;
    const auto file = dir.path() / "model.toml";
    const auto error_of = [&](const std::string& value) -> std::string {
        write_file(file, "[shape]\nd_model = 7168\n[[kernel]]\nname = \"norm\"\n"
                         "defines = { RMS_BLOCK = \"" + value + "\" }\n");
        const ShapeFile shape = ShapeFile::load(file);
        try {
            (void)resolve_defines(shape.kernels.at(0), shape.shape);
        } catch (const ConfigError& e) {
            CHECK(e.file == file.string());
            CHECK(e.line == 5);
            CHECK(e.column == 25);
            return e.what();
        }
        return "(no error)";
    };
    CHECK(error_of("${d_modle}") ==
          file.string() + ":5:25: error: kernel 'norm': define RMS_BLOCK names shape entry "
                          "'d_modle', which the shape lacks; did you mean 'd_model'?");
    CHECK(error_of("${zz}") == file.string() +
                                   ":5:25: error: kernel 'norm': define RMS_BLOCK names shape "
                                   "entry 'zz', which the shape lacks");
    CHECK(error_of("${d_model") ==
          file.string() + ":5:25: error: kernel 'norm': define RMS_BLOCK has an unclosed '${'");
    // A spec written in code has no position: the error names no file.
    const KernelSpec in_code{"norm", "rms_norm", {{"RMS_BLOCK", "${x}"}}};
    CHECK_THROWS_WITH_AS((void)resolve_defines(in_code, {}),
                         "error: kernel 'norm': define RMS_BLOCK names shape entry 'x', which "
                         "the shape lacks",
                         ConfigError);
}

TEST_CASE("a fallback that names no [[kernel]] is an error where it is named") {
    test::TempDir dir;
    const auto file = dir.path() / "model.toml";
    write_file(file, "[[kernel]]\nname = \"a\"\nfallback = \"b\"\n");
    CHECK_THROWS_WITH_AS((void)ShapeFile::load(file),
                         (file.string() + ":3:12: error: kernel 'a' names fallback 'b', which is "
                                          "not a [[kernel]] of this file")
                             .c_str(),
                         ConfigError);
}

TEST_CASE("freshness compares a binary's manifest with the sources by content") {
    const auto file = [](std::string name, std::string text, std::int64_t mtime) {
        return SourceFile{name, "src/" + name, text, hash128(text), mtime};
    };
    SourceSet embedded, disk;
    embedded.add(file("a.cu", "same", 10));
    embedded.add(file("b.cu", "old", 20));
    embedded.add(file("gone.cuh", "x", 30));
    disk.add(file("a.cu", "same", 11));
    // An edit that keeps the size and sets the mtime back is still seen: content is compared.
    disk.add(file("b.cu", "new", 5));
    disk.add(file("c.cuh", "added", 12));

    const FreshnessReport r = check_freshness(manifest_of(embedded, "src"), disk);
    CHECK_FALSE(r.fresh());
    CHECK(r.embedded_files == 3);
    REQUIRE(r.entries.size() == 3);
    CHECK(r.entries[0].kind == Staleness::stale);
    CHECK(r.entries[0].path == "src/b.cu");
    CHECK(r.entries[0].embedded_hash == hash128("old"));
    CHECK(r.entries[0].disk_hash == hash128("new"));
    CHECK(r.entries[0].embedded_mtime_ns == 20);
    CHECK(r.entries[1].kind == Staleness::new_file);
    CHECK(r.entries[1].path == "src/c.cuh");
    CHECK(r.entries[2].kind == Staleness::missing);
    CHECK(r.entries[2].path == "src/gone.cuh");
    CHECK(check_freshness(manifest_of(embedded), embedded).fresh());
}

TEST_CASE("a manifest is found in a binary's bytes and round-trips") {
    EmbedManifest m;
    m.prefix = "kernels";
    m.files = {{"a.cu", hash128("a"), 17}, {"sub dir/b:2.cuh", hash128("b"), -1}};
    const std::string text = format_manifest(m);
    EmbedManifest other_tree = m;
    other_tree.prefix = "other";
    // Among other bytes, after a header that leads nowhere; the same manifest twice (as debug
    // information repeats it) counts once.
    std::string bytes = std::string("\x7f" "ELF\0\0", 6) + text.substr(0, 30) + '\0' + text +
                        std::string(100, '\0') + text + format_manifest(other_tree);
    const auto found = find_manifests(bytes);
    REQUIRE(found.size() == 2);
    CHECK(found[1].prefix == "other");
    CHECK(found[0].prefix == "kernels");
    REQUIRE(found[0].files.size() == 2);
    CHECK(found[0].files[1].name == "sub dir/b:2.cuh");
    CHECK(found[0].files[1].hash == hash128("b"));
    CHECK(found[0].files[1].mtime_ns == -1);
    CHECK(format_manifest(found[0]) == text);
    // A name that could forge a report line or leave the tree is not a manifest's.
    const std::vector<std::string> bad_names = {"x\nfresh: up to date", "../etc/passwd", "/abs.cu",
                                                "a/../../b", std::string(4097, 'n')};
    for (const std::string& bad : bad_names) {
        EmbedManifest forged = m;
        forged.files[0].name = bad;
        CHECK(find_manifests(format_manifest(forged)).empty());
    }
    EmbedManifest twice = m;
    twice.files[1].name = twice.files[0].name;
    CHECK(find_manifests(format_manifest(twice)).empty());
    // A cut or altered manifest is not read as one.
    CHECK(find_manifests(text.substr(0, text.size() - 1)).empty());
    std::string bad = text;
    bad[bad.find("a.cu") - 2] = 'x'; // the length before the name
    CHECK(find_manifests(bad).empty());

    test::TempDir dir;
    write_file(dir.path() / "app", bytes);
    CHECK(read_manifests(dir.path() / "app").size() == 2);
    SourceSet disk;
    disk.add({"a.cu", "kernels/a.cu", "a", hash128("a"), 0});
    CHECK(manifest_for(dir.path() / "app", disk).prefix == "kernels");
    SourceSet other;
    other.add({"z.cu", "z.cu", "z", hash128("z"), 0});
    CHECK_THROWS_WITH_AS((void)manifest_for(dir.path() / "app", other),
                         doctest::Contains("which holds none of the files compared with it"),
                         ConfigError);
    write_file(dir.path() / "plain", "no manifest here");
    CHECK_THROWS_WITH_AS((void)manifest_for(dir.path() / "plain", disk),
                         doctest::Contains("the binary embeds no kernel sources"), ConfigError);
    CHECK_THROWS_WITH_AS((void)read_manifests(dir.path() / "none"),
                         doctest::Contains("cannot read binary: No such file or directory"),
                         ConfigError);
    CHECK_THROWS_WITH_AS((void)read_manifests(dir.path()),
                         doctest::Contains("cannot read binary: Is a directory"), ConfigError);
}

TEST_CASE("a missing source directory is a ConfigError naming it") {
    CHECK_THROWS_WITH_AS((void)SourceSet::from_directory("/nonexistent/kjit"),
                         doctest::Contains("/nonexistent/kjit"), ConfigError);
}

} // TEST_SUITE
