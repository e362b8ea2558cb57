// The tuned table: recorded by sweeps and `kjit tune`, read at start-up per kernel, shape and
// device, shown by `kjit specialize`, audited for entries whose source changed.

#include "jit/shape_file.hpp"
#include "jit/tuned_table.hpp"
#include "runtime/engine.hpp"
#include "tests/support.hpp"
#include "tuning/sweep_cache.hpp"
#include "tuning/sweep_judge.hpp"
#include "tuning/sweep_plan.hpp"
#include "tuning/tuned_record.hpp"

#include "tests/doctest.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace kjit;
using kjit::test::contains;
using kjit::test::Run;
using kjit::test::run_kjit_in;
using kjit::test::TempDir;
using kjit::test::write_file;

namespace {

const std::filesystem::path kExample = KJIT_SOURCE_DIR "/examples/splitk_app";

TunedEntry entry(std::string gpu, std::int64_t rows, std::string block, std::string dtype = "f32") {
    TunedEntry e;
    e.kernel = "splitk_gemv";
    e.shape = {{"rows", rows}, {"cols", 4096}};
    e.dtype = std::move(dtype);
    e.gpu = std::move(gpu);
    e.arch = "sm_90";
    e.source = "0123456789ab";
    e.defines = {{"GEMV_BLOCK", std::move(block)}};
    e.median_us = 10;
    e.baseline_us = 12;
    return e;
}

/// A copy of the example project whose shape file reads `table` for splitk_gemv at the model's
/// d_model x d_ff, with GEMV_BLOCK left to the table.
void tuned_project(const std::filesystem::path& dir, const std::string& table) {
    namespace fs = std::filesystem;
    for (const char* part : {"kernels", "contracts", "sweeps", "kjit.toml"})
        fs::copy(kExample / part, dir / part, fs::copy_options::recursive);
    std::string shape = test::read_file(dir / "kernels/model.toml");
    const std::string from = "defines = { SPLIT_K = \"${split_k}\", GEMV_BLOCK = 256 }";
    REQUIRE(shape.find(from) != std::string::npos);
    shape.replace(shape.find(from), from.size(),
                  "defines = { SPLIT_K = \"${split_k}\" }\n"
                  "tuned = { rows = \"${d_model}\", cols = \"${d_ff}\" }");
    write_file(dir / "kernels/model.toml", "tuned = \"../tuned.toml\"\n" + shape);
    write_file(dir / "tuned.toml", table);
}

/// Loads `dir`/kernels/model.toml with `from` replaced by `to` (as bad.toml) and resolves its
/// first kernel's tuned shape: the error as "MESSAGE at LINE:COL", or "(no error)".
std::string shape_file_error(const std::filesystem::path& dir, const std::string& from,
                             const std::string& to) {
    std::string text = test::read_file(dir / "kernels/model.toml");
    REQUIRE(text.find(from) != std::string::npos);
    text.replace(text.find(from), from.size(), to);
    write_file(dir / "kernels/bad.toml", text);
    try {
        const ShapeFile bad = ShapeFile::load(dir / "kernels/bad.toml");
        (void)resolve_tuned_shape(bad.kernels.front(), bad.shape);
    } catch (const ConfigError& e) {
        return e.message + " at " + std::to_string(e.line) + ":" + std::to_string(e.column);
    }
    return "(no error)";
}

} // namespace

TEST_SUITE("tuned") {

TEST_CASE("a tuned table round-trips and a record replaces its slot") {
    TempDir dir;
    TunedTable t;
    t.file = dir.path() / "t.toml";
    t.record(entry("NVIDIA H200", 4096, "256"));
    t.record(entry("NVIDIA H100", 4096, "128"));
    t.record(entry("NVIDIA H200", 4096, "64")); // the same slot: replaced
    t.record(entry("NVIDIA H200", 4096, "512", "bf16"));
    REQUIRE(t.entries.size() == 3);
    t.save();
    const TunedTable back = TunedTable::load(t.file);
    REQUIRE(back.entries.size() == 3);
    CHECK(back.entries[0].gpu == "NVIDIA H100"); // sorted by kernel, GPU, arch, dtype, shape
    CHECK(back.entries[1].dtype == "bf16");
    CHECK(back.entries[2].defines.at("GEMV_BLOCK") == "64");
    CHECK(back.entries[2].shape.at("cols") == 4096);
    CHECK(back.entries[2].source == "0123456789ab");
    CHECK(back.entries[2].where.line > 1);
    CHECK(contains(test::read_file(t.file), "defines = { GEMV_BLOCK = \"64\" }"));
    // A table that does not exist yet is empty: what `kjit tune` starts from.
    CHECK(TunedTable::load(dir.path() / "none.toml").entries.empty());
}

TEST_CASE("a tuned table's mistakes are errors at their file:line:col") {
    TempDir dir;
    const std::string one = "[[entry]]\nkernel = \"k\"\nshape = { n = 1 }\ngpu = \"G\"\narch = "
                            "\"sm_90\"\ndefines = { B = \"1\" }\n";
    const auto error_of = [&](const std::string& text) {
        write_file(dir.path() / "t.toml", text);
        try {
            (void)TunedTable::load(dir.path() / "t.toml");
        } catch (const ConfigError& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    CHECK(contains(error_of(one + "\n" + one), "t.toml:8:1: error: a second entry for k n=1  on G "
                                               "sm_90 (the first is at line 1)"));
    CHECK(contains(error_of("[[bucket]]\nkernel = \"k\"\nkey = \"n\"\nrule = \"log\"\n"),
                   "t.toml:4:8: error: unknown bucket rule 'log' (known: pow2, nearest)"));
    CHECK(contains(error_of("[[entry]]\nkernl = \"k\"\n"),
                   "t.toml:2:1: error: unknown key 'kernl' in [[entry]]; did you mean 'kernel'?"));
    CHECK(contains(error_of("[[entry]]\nkernel = \"k\"\nshape = { n = 1 }\n"),
                   "error: [[entry]] needs 'gpu'"));
}

TEST_CASE("a lookup takes the exact shape then the bucket rules on the device's GPU and arch") {
    TunedTable t;
    t.record(entry("NVIDIA H200", 4096, "64"));
    t.record(entry("NVIDIA H200", 1024, "128"));
    t.record(entry("NVIDIA H100", 4096, "256"));
    const std::map<std::string, std::int64_t> at4096{{"rows", 4096}, {"cols", 4096}};
    const std::map<std::string, std::int64_t> at3000{{"rows", 3000}, {"cols", 4096}};
    CHECK(t.lookup("splitk_gemv", at4096, "", "NVIDIA H200", "sm_90").entry->defines.at(
              "GEMV_BLOCK") == "64");
    CHECK(t.lookup("splitk_gemv", at4096, "f32", "NVIDIA H100", "sm_90").entry->defines.at(
              "GEMV_BLOCK") == "256");
    CHECK(t.lookup("splitk_gemv", at4096, "", "", "sm_90").entry->gpu == "NVIDIA H200"); // first
    CHECK_FALSE(t.lookup("splitk_gemv", at4096, "", "NVIDIA B200", "sm_100a").entry);
    CHECK_FALSE(t.lookup("splitk_gemv", at4096, "bf16", "NVIDIA H200", "sm_90").entry);
    CHECK_FALSE(t.lookup("splitk_gemv", at3000, "", "NVIDIA H200", "sm_90").entry); // no rule
    t.buckets.push_back({"splitk_gemv", "rows", "pow2"});
    const TunedMatch pow2 = t.lookup("splitk_gemv", at3000, "", "NVIDIA H200", "sm_90");
    REQUIRE(pow2.entry);
    CHECK(pow2.entry->defines.at("GEMV_BLOCK") == "64");
    CHECK(pow2.how == "bucket rows pow2 3000 -> 4096");
    t.buckets[0].rule = "nearest";
    const std::map<std::string, std::int64_t> at1500{{"rows", 1500}, {"cols", 4096}};
    const TunedMatch near = t.lookup("splitk_gemv", at1500, "", "NVIDIA H200", "sm_90");
    REQUIRE(near.entry);
    CHECK(near.how == "bucket rows nearest 1500 -> 1024");
    CHECK(t.lookup("splitk_gemv", at3000, "", "NVIDIA H200", "sm_90").entry->shape.at("rows") ==
          4096);
    // 2048 lies as far from 1024 as from 4096 on a log scale: the larger wins, in either order.
    const std::map<std::string, std::int64_t> at2048{{"rows", 2048}, {"cols", 4096}};
    CHECK(t.lookup("splitk_gemv", at2048, "", "NVIDIA H200", "sm_90").how ==
          "bucket rows nearest 2048 -> 4096");
    std::swap(t.entries[0], t.entries[1]);
    CHECK(t.lookup("splitk_gemv", at2048, "", "NVIDIA H200", "sm_90").how ==
          "bucket rows nearest 2048 -> 4096");
}

TEST_CASE("a GPU with no entry of a kernel and dtype takes another GPU's of the same arch") {
    TunedTable t;
    t.buckets.push_back({"splitk_gemv", "rows", "nearest"});
    t.record(entry("NVIDIA H200", 4096, "64"));
    t.record(entry("NVIDIA H200", 1024, "128"));
    t.record(entry("NVIDIA H100", 4096, "256"));
    t.record(entry("NVIDIA H100", 4096, "32", "bf16"));
    const std::map<std::string, std::int64_t> at1024{{"rows", 1024}, {"cols", 4096}};
    // An H20 has none: the first GPU of sm_90 in the file, named in `how`.
    const TunedMatch h20 = t.lookup("splitk_gemv", at1024, "f32", "NVIDIA H20", "sm_90");
    REQUIRE(h20.entry);
    CHECK(h20.entry->defines.at("GEMV_BLOCK") == "128");
    CHECK(h20.how == "exact, measured on NVIDIA H200 (none on NVIDIA H20)");
    // The H100 has f32 entries: its own, by its bucket rule, never the H200's exact shape.
    const TunedMatch h100 = t.lookup("splitk_gemv", at1024, "f32", "NVIDIA H100", "sm_90");
    REQUIRE(h100.entry);
    CHECK(h100.entry->gpu == "NVIDIA H100");
    CHECK(h100.how == "bucket rows nearest 1024 -> 4096");
    // The H200 has no bf16 entry: the H100's, by the bucket rule among the H100's alone.
    const TunedMatch bf16 = t.lookup("splitk_gemv", at1024, "bf16", "NVIDIA H200", "sm_90");
    REQUIRE(bf16.entry);
    CHECK(bf16.entry->defines.at("GEMV_BLOCK") == "32");
    CHECK(bf16.how == "bucket rows nearest 1024 -> 4096, measured on NVIDIA H100 (none on "
                      "NVIDIA H200)");
    // Another arch never stands in.
    CHECK_FALSE(t.lookup("splitk_gemv", at1024, "f32", "NVIDIA B200", "sm_100a").entry);
}

TEST_CASE("two contracts of one source keep their own entries and buckets") {
    // conv1d.cu holds the sequence kernel and the decode step: a sweep of either records under
    // the source, the step's entries naming their contract, and neither stands in for the other.
    TempDir dir;
    TunedTable t;
    t.file = dir.path() / "t.toml";
    t.record(entry("NVIDIA H200", 4096, "64"));
    TunedEntry step = entry("NVIDIA H200", 4096, "512");
    step.contract = "splitk_small";
    t.record(step);
    REQUIRE(t.entries.size() == 2); // two slots: the contract is part of one
    TunedEntry own = entry("NVIDIA H200", 4096, "128");
    own.contract = "splitk_gemv"; // the source's own contract, named: the same slot
    t.record(own);
    REQUIRE(t.entries.size() == 2);
    CHECK(t.entries[0].contract.empty());
    CHECK(t.entries[0].defines.at("GEMV_BLOCK") == "128");
    t.record(entry("NVIDIA H200", 4096, "64"));
    t.save();
    CHECK(contains(test::read_file(t.file), "kernel = \"splitk_gemv\"\ncontract = \"splitk_small\""));
    TunedTable back = TunedTable::load(t.file);
    REQUIRE(back.entries.size() == 2);
    const std::map<std::string, std::int64_t> at4096{{"rows", 4096}, {"cols", 4096}};
    const auto block = [&](std::string_view contract, const std::map<std::string, std::int64_t>& at) {
        const TunedMatch m = back.lookup("splitk_gemv", at, "", "NVIDIA H200", "sm_90", contract);
        return m.entry ? m.entry->defines.at("GEMV_BLOCK") : std::string("none");
    };
    CHECK(block("", at4096) == "64");
    CHECK(block("splitk_gemv", at4096) == "64"); // the source's own contract
    CHECK(block("splitk_small", at4096) == "512");
    CHECK(block("splitk_other", at4096) == "none");
    // A bucket reads the entries of its contract only.
    const std::map<std::string, std::int64_t> at3000{{"rows", 3000}, {"cols", 4096}};
    back.buckets.push_back({"splitk_gemv", "rows", "pow2", "splitk_small"});
    CHECK(block("splitk_small", at3000) == "512");
    CHECK(block("", at3000) == "none");
    back.save();
    CHECK(TunedTable::load(t.file).buckets.at(0).contract == "splitk_small");
    // A contract named like its source is written as none.
    write_file(dir.path() / "same.toml",
               "[[entry]]\nkernel = \"k\"\ncontract = \"k\"\nshape = { n = 1 }\ngpu = \"G\"\n"
               "arch = \"sm_90\"\ndefines = { B = \"1\" }\n");
    CHECK(TunedTable::load(dir.path() / "same.toml").entries.at(0).contract.empty());
    // kjit tune of a contract named otherwise than its source records it.
    SweepSpec spec;
    spec.kernel = "splitk_gemv";
    spec.contract.name = "splitk_small";
    spec.shape = {{"rows", 64}};
    SweepParam p;
    p.name = "GEMV_BLOCK";
    spec.params = {p};
    SweepResult r;
    SweepRow row;
    row.variant.defines = {{"GEMV_BLOCK", "128"}};
    row.variant.baseline = true;
    row.check = "IDENTICAL";
    r.rows = {row};
    CHECK(tuned_entry(spec, r).contract == "splitk_small");
    spec.contract.name = "splitk_gemv";
    CHECK(tuned_entry(spec, r).contract.empty());
}

TEST_CASE("a shape file names its tuned table and each kernel's tuned shape") {
    TempDir dir;
    tuned_project(dir.path(), "");
    const ShapeFile sf = ShapeFile::load(dir.path() / "kernels/model.toml");
    REQUIRE(sf.tuned);
    const KernelSpec& k = sf.kernels.front();
    CHECK(k.tuned == sf.tuned);
    CHECK(resolve_tuned_shape(k, sf.shape) ==
          std::map<std::string, std::int64_t>{{"rows", 4096}, {"cols", 14336}});
    CHECK(k.tuned_contract.empty());

    const auto error_of = [&](const std::string& from, const std::string& to) {
        return shape_file_error(dir.path(), from, to);
    };
    CHECK(error_of("tuned = \"../tuned.toml\"", "tuned = \"../none.toml\"") ==
          "the tuned table " + (dir.path() / "none.toml").string() + " does not exist at 1:9");
    CHECK(error_of("tuned = \"../tuned.toml\"\n", "") ==
          "kernel 'splitk_gemv' is tuned, and the shape file names no tuned table: add tuned = "
          "\"TABLE.toml\" at its top at 14:9");
    CHECK(error_of("\"${d_model}\"", "\"${dmodel}\"") ==
          "kernel 'splitk_gemv': tuned shape key rows names shape entry 'dmodel', which the shape "
          "lacks; did you mean 'd_model'? at 15:9");
    CHECK(error_of("rows = \"${d_model}\"", "rows = 1.5") ==
          "a tuned shape value is an integer or a string such as \"${rows}\" at 15:18");
    // `contract` names whose entries apply; it is no shape key.
    std::string text = test::read_file(dir.path() / "kernels/model.toml");
    const std::string from = "tuned = { rows";
    text.replace(text.find(from), from.size(), "tuned = { contract = \"splitk_small\", rows");
    write_file(dir.path() / "kernels/other.toml", text);
    const ShapeFile other = ShapeFile::load(dir.path() / "kernels/other.toml");
    CHECK(other.kernels.front().tuned_contract == "splitk_small");
    CHECK(resolve_tuned_shape(other.kernels.front(), other.shape).size() == 2);
}

TEST_CASE("a tuned lookup the table cannot answer is an error where it holds the contract") {
    TempDir dir;
    // Entries of splitk_gemv keyed rows and cols, of its own contract and of splitk_small.
    TunedTable t;
    t.file = dir.path() / "tuned.toml";
    t.record(entry("NVIDIA H200", 4096, "64"));
    TunedEntry small = entry("NVIDIA H200", 4096, "512");
    small.contract = "splitk_small";
    t.record(small);
    t.save();
    tuned_project(dir.path(), test::read_file(t.file));
    const auto error_of = [&](const std::string& from, const std::string& to) {
        return shape_file_error(dir.path(), from, to);
    };
    CHECK(error_of("tuned = { rows", "tuned = { rows") == "(no error)");
    CHECK(error_of("tuned = { rows", "tuned = { contract = \"splitk_small\", rows") ==
          "(no error)");
    const std::string table = (dir.path() / "tuned.toml").string();
    // A misspelt key, a missing one: the lookup could never match.
    CHECK(error_of("cols = \"${d_ff}\"", "colz = \"${d_ff}\"") ==
          "kernel 'splitk_gemv': tuned names shape key(s) colz, rows, and the entries of "
          "splitk_gemv in " +
              table + " are keyed cols, rows at 15:9");
    CHECK(
        error_of(", cols = \"${d_ff}\"", "") ==
        "kernel 'splitk_gemv': tuned names shape key(s) rows, and the entries of splitk_gemv in " +
            table + " are keyed cols, rows at 15:9");
    // A contract the table holds nothing of yet (tuned after the other): its defaults, and
    // start-up says so.
    CHECK(error_of("tuned = { rows", "tuned = { contract = \"splitk_later\", rows") ==
          "(no error)");

    // Entries in two dtypes: a lookup without one would take whichever the file lists first.
    t.record(entry("NVIDIA H200", 4096, "128", "bf16"));
    t.save();
    CHECK(error_of("tuned = { rows", "tuned = { rows") ==
          "kernel 'splitk_gemv': tuned names no dtype, and the entries of splitk_gemv in " + table +
              " are of bf16, f32 (sm_90): the lookup would take whichever comes first; add "
              "dtype = \"bf16\" (or another) to tuned at 15:9");
    CHECK(error_of("tuned = { rows", "tuned = { dtype = \"f32\", rows") == "(no error)");
}

TEST_CASE("kjit audit finds a bucket rule that applies to no entry") {
    TempDir dir;
    TunedTable t;
    t.file = dir.path() / "tuned.toml";
    t.record(entry("NVIDIA H200", 4096, "64"));
    t.save();
    tuned_project(dir.path(), "[[bucket]]\nkernel = \"splitk_gemv\"\nkey = \"row\"\n"
                              "rule = \"pow2\"\n\n[[bucket]]\nkernel = \"splitk_gemvv\"\n"
                              "key = \"rows\"\nrule = \"nearest\"\n\n" +
                                  test::read_file(t.file));
    const std::string env = "KJIT_CACHE_DIR='" + (dir.path() / "cache").string() + "'";
    const Run audit = run_kjit_in(dir.path(), "audit", env);
    INFO(audit.out);
    CHECK(audit.code == 1);
    CHECK(contains(audit.out, "tuned.toml:1:1: error: the pow2 rule on key 'row' applies to no "
                              "entry: the entries of splitk_gemv are keyed cols, rows; did you "
                              "mean rows?"));
    CHECK(contains(audit.out, "tuned.toml:6:1: error: the nearest rule names kernel "
                              "'splitk_gemvv', which the sources lack"));
}

TEST_CASE("kjit audit finds a tuned entry whose defines break its contract at its shape") {
    // SPLIT_K=3 at cols=4096: the contract wants cols % (SPLIT_K * 4) == 0, and start-up would
    // inject it.
    TempDir dir;
    TunedTable t;
    t.file = dir.path() / "tuned.toml";
    TunedEntry e = entry("NVIDIA H200", 4096, "64");
    e.defines["SPLIT_K"] = "3";
    t.record(e);
    t.save();
    tuned_project(dir.path(), test::read_file(t.file));
    const std::string env = "KJIT_CACHE_DIR='" + (dir.path() / "cache").string() + "'";
    const Run audit = run_kjit_in(dir.path(), "audit", env);
    INFO(audit.out);
    CHECK(audit.code == 1);
    CHECK(contains(audit.out, "tuned.toml:6:1: error: tuned entry for splitk_gemv "
                              "cols=4096,rows=4096 GEMV_BLOCK=64 SPLIT_K=3 breaks its contract "
                              "there: splitk_gemv: "));
}

TEST_CASE("start-up injects a tuned entry whole and says where each define came from") {
    TempDir dir;
    tuned_project(dir.path(), "");
    TunedTable t;
    t.file = dir.path() / "tuned.toml";
    TunedEntry e = entry("NVIDIA H200", 4096, "64");
    e.shape = {{"rows", 4096}, {"cols", 14336}};
    e.defines = {{"GEMV_BLOCK", "64"}, {"SPLIT_K", "4"}}; // SPLIT_K as the shape file pins it
    e.source = tuned_source_hash(SourceSet::from_directory(dir.path() / "kernels"), "splitk_gemv");
    t.record(e);
    t.save();
    const ShapeFile sf = ShapeFile::load(dir.path() / "kernels/model.toml");
    EngineOptions options;
    options.cache.use_disk = false;
    Engine engine(nullptr, options, SourceProvider(dir.path() / "kernels"));
    const auto rows = engine.prepare(sf.shape, sf.kernels);
    REQUIRE(rows.size() == 2);
    const PrepareRow& r = rows[0];
    CHECK_FALSE(r.error);
    // GEMV_BLOCK from the table; SPLIT_K the shape file's, the value the entry was measured with.
    CHECK(r.defines == "GEMV_BLOCK=64 SPLIT_K=4");
    CHECK(contains(r.define_origins.at("GEMV_BLOCK"), "tuned: "));
    CHECK(contains(r.define_origins.at("GEMV_BLOCK"), "tuned.toml:"));
    CHECK(contains(r.define_origins.at("SPLIT_K"), "model.toml:14:13"));
    CHECK(contains(r.tuned, "(exact)"));
    CHECK_FALSE(contains(r.tuned, "recorded for source"));
    CHECK(rows[1].tuned.empty()); // row_softmax reads no table

    // An entry measured with another value of a define the spec pins is a configuration nobody
    // timed: not used, and said so.
    e.defines["SPLIT_K"] = "8";
    t.record(e);
    t.save();
    const ShapeFile pinned = ShapeFile::load(dir.path() / "kernels/model.toml");
    const auto conflict = engine.prepare(pinned.shape, pinned.kernels);
    CHECK(conflict[0].defines == "SPLIT_K=4");
    CHECK(contains(conflict[0].tuned, "(exact) not used: the spec sets SPLIT_K=4 and the entry "
                                      "was measured with SPLIT_K=8"));

    // A define of the entry its kernel never reads (a hand-edited typo) fails the kernel at the
    // entry's line, as a shape file's at its own.
    e.defines = {{"GEMV_BLOK", "64"}, {"SPLIT_K", "4"}};
    t.record(e);
    t.save();
    const ShapeFile typo = ShapeFile::load(dir.path() / "kernels/model.toml");
    const auto unread = engine.prepare(typo.shape, typo.kernels);
    REQUIRE(unread[0].error);
    try {
        std::rethrow_exception(unread[0].error);
    } catch (const ConfigError& err) {
        const std::string said = err.what();
        INFO(said);
        const int line = TunedTable::load(t.file).entries.at(0).where.line;
        CHECK(said.starts_with((dir.path() / "tuned.toml").string() + ":" + std::to_string(line) +
                               ":1: error: kernel 'splitk_gemv': define GEMV_BLOK is never read"));
    }
    e.defines = {{"GEMV_BLOCK", "64"}, {"SPLIT_K", "8"}};
    t.record(e);
    t.save();

    // Another shape with no entry and no rule: the kernel's defaults, and said so.
    ModelShape other = sf.shape;
    other.values["d_model"] = 1000;
    const auto none = engine.prepare(other, pinned.kernels);
    CHECK(none[0].defines == "SPLIT_K=4");
    CHECK(contains(none[0].tuned, "no entry in "));
    CHECK(contains(none[0].tuned, "for splitk_gemv cols=14336,rows=1000 on any GPU sm_90: the "
                                  "kernel's defaults"));

    // Two contracts of one source at the same shape: each spec gets its contract's entry, and
    // a contract the table has no entry of at all is named with the ones it has.
    e.defines = {{"GEMV_BLOCK", "64"}, {"SPLIT_K", "4"}};
    t.record(e);
    e.contract = "splitk_small";
    e.defines = {{"GEMV_BLOCK", "512"}, {"SPLIT_K", "4"}};
    t.record(e);
    t.save();
    const ShapeFile two = ShapeFile::load(dir.path() / "kernels/model.toml");
    std::vector<KernelSpec> specs{two.kernels[0], two.kernels[0], two.kernels[0]};
    specs[1].name = "small";
    specs[1].tuned_contract = "splitk_small";
    specs[2].name = "typo";
    specs[2].tuned_contract = "splitk_smal";
    const auto each = engine.prepare(two.shape, specs);
    REQUIRE(each.size() == 3);
    CHECK(each[0].defines == "GEMV_BLOCK=64 SPLIT_K=4");
    CHECK(each[1].defines == "GEMV_BLOCK=512 SPLIT_K=4");
    CHECK(contains(each[1].tuned, "(exact)"));
    CHECK(each[2].defines == "SPLIT_K=4");
    CHECK(contains(each[2].tuned, "no entry in "));
    CHECK(contains(each[2].tuned, "for splitk_gemv (splitk_smal) cols=14336,rows=4096"));
    CHECK(contains(each[2].tuned, "the table has no entry of splitk_smal; its contracts of "
                                  "splitk_gemv: splitk_gemv, splitk_small"));
}

TEST_CASE("kjit audit fails on a tuned entry recorded for another source and specialize shows it") {
    TempDir dir;
    tuned_project(dir.path(), R"([[entry]]
kernel = "splitk_gemv"
shape = { rows = 4096, cols = 14336 }
dtype = "f32"
gpu = "NVIDIA H200"
arch = "sm_90"
source = "000000000000"
defines = { GEMV_BLOCK = "64" }
)");
    const std::string env = "KJIT_CACHE_DIR='" + (dir.path() / "cache").string() + "'";
    const Run audit = run_kjit_in(dir.path(), "audit", env);
    INFO(audit.out);
    CHECK(audit.code == 1);
    CHECK(contains(audit.out, "tuned.toml:1:1: error: tuned entry for splitk_gemv "
                              "cols=14336,rows=4096 on NVIDIA H200 sm_90 was recorded for source "
                              "000000000000, and the source is "));
    CHECK(contains(audit.out, "; tuned: 1 finding(s)"));
    // An entry's defines are a production define set: compiled, and each must be read.
    CHECK(contains(audit.out, "  ok    splitk_gemv (tuned tuned.toml:1)"));
    write_file(dir.path() / "tuned.toml",
               test::read_file(dir.path() / "tuned.toml") +
                   "\n[[entry]]\nkernel = \"splitk_gemv\"\nshape = { rows = 1, cols = 4096 }\n"
                   "gpu = \"G\"\narch = \"sm_90\"\nsource = \"000000000000\"\n"
                   "defines = { GEMV_BLOK = \"64\" }\n");
    const Run typo = run_kjit_in(dir.path(), "audit", env);
    INFO(typo.out);
    CHECK(typo.code == 1);
    CHECK(contains(typo.out, "tuned.toml:10:1: error: "));
    CHECK(contains(typo.out, "GEMV_BLOK"));
    const Run spec = run_kjit_in(dir.path(), "specialize", env);
    INFO(spec.out);
    CHECK(spec.code == 0);
    CHECK(contains(spec.out, "GEMV_BLOCK=64 SPLIT_K=4"));
    CHECK(contains(spec.out, "tuned: tuned.toml:1 (exact), recorded for source 000000000000"));
    CHECK(contains(spec.out, "GEMV_BLOCK             tuned: tuned.toml:1"));
}

TEST_CASE("a sweep's winner is the fastest variant that passed its check") {
    SweepSpec spec;
    spec.file = "s.toml";
    spec.kernel = "splitk_gemv";
    spec.shape = {{"rows", 64}, {"cols", 256}};
    SweepParam block;
    block.name = "GEMV_BLOCK";
    SweepParam rows;
    rows.name = "ROWS_PER_LAUNCH";
    rows.define = false;
    spec.params = {block, rows};
    SweepResult r;
    r.provenance.gpu = "NVIDIA H200";
    r.provenance.arch = "sm_90";
    r.tuned_source = "0123456789ab";
    const auto row = [](std::string b, double ms, std::string check, bool base = false) {
        SweepRow x;
        x.variant.defines = {{"GEMV_BLOCK", std::move(b)}, {"SPLIT_K", "4"}};
        x.variant.baseline = base;
        x.stats.median = ms;
        x.check = std::move(check);
        return x;
    };
    r.rows = {row("256", 0.010, "IDENTICAL", true), row("64", 0.005, "DIFFERS"),
              row("128", 0.008, "IDENTICAL")};
    TempDir dir;
    write_file(dir.path() / "splitk_gemv.cu", "extern \"C\" __global__ void k() {}\n");
    const SourceSet sources = SourceSet::from_directory(dir.path());
    const TunedEntry e = tuned_entry(spec, r);
    CHECK(e.defines == std::map<std::string, std::string>{{"GEMV_BLOCK", "128"}}); // swept
    spec.defines = {{"SPLIT_K", "4"}};
    CHECK(tuned_entry(spec, r).defines ==
          std::map<std::string, std::string>{{"GEMV_BLOCK", "128"}, {"SPLIT_K", "4"}}); // + fixed
    CHECK(e.median_us == doctest::Approx(8));
    CHECK(e.baseline_us == doctest::Approx(10));
    CHECK(e.gpu == "NVIDIA H200");
    CHECK(e.source == "0123456789ab"); // the hash of the sources the run compiled
    for (SweepRow& x : r.rows)
        x.check = "DIFFERS";
    CHECK_THROWS_WITH_AS(tuned_entry(spec, r),
                         "s.toml: error: no variant passed its check: nothing to record",
                         ConfigError);
}

TEST_CASE("a winner inside the noise of the baseline leaves the baseline in the table") {
    SweepSpec spec;
    spec.file = "s.toml";
    spec.kernel = "splitk_gemv";
    SweepParam block;
    block.name = "GEMV_BLOCK";
    spec.params = {block};
    // Repetitions around `ms` with a relative interquartile range of about `iqr`.
    const auto row = [](std::string b, double ms, double iqr, bool base = false) {
        SweepRow x;
        x.variant.defines = {{"GEMV_BLOCK", std::move(b)}};
        x.variant.baseline = base;
        std::vector<double> s;
        for (int i = 0; i < 21; ++i)
            s.push_back(ms * (1 + iqr * (i - 10) / 10.0));
        x.stats = Stats::of(s);
        x.check = "IDENTICAL";
        return x;
    };
    SweepResult r;
    // 0.5 % faster with quiet repetitions: under the 1 % floor.
    r.rows = {row("256", 0.0100, 0.001, true), row("512", 0.00995, 0.001)};
    TunedPick p = tuned_pick(r);
    CHECK(p.row == &r.rows[0]);
    CHECK(p.note == "GEMV_BLOCK=512 ran 0.5 % under the baseline, inside the noise (1.0 %): "
                    "baseline kept");
    CHECK(tuned_entry(spec, r).defines.at("GEMV_BLOCK") == "256");
    CHECK(tuned_entry(spec, r).median_us == doctest::Approx(10));
    // 3 % faster, but the baseline's repetitions spread 8 % between their quartiles: the
    // medians' difference has a standard error of 0.929 * 8 % / sqrt(21) = 1.6 %.
    r.rows = {row("256", 0.0100, 0.08, true), row("512", 0.0097, 0.001)};
    CHECK(tuned_pick(r).row == &r.rows[0]);
    CHECK(tuned_pick(r).note == "GEMV_BLOCK=512 ran 3.0 % under the baseline, inside the noise "
                                "(3.2 %): baseline kept");
    // 13 % faster with a 14 % spread: well outside the medians' noise.
    r.rows = {row("256", 0.0100, 0.14, true), row("512", 0.0087, 0.14)};
    CHECK(tuned_pick(r).row == &r.rows[1]);
    // 3 % faster with quiet repetitions: the variant wins, no note.
    r.rows = {row("256", 0.0100, 0.01, true), row("512", 0.0097, 0.01)};
    p = tuned_pick(r);
    CHECK(p.row == &r.rows[1]);
    CHECK(p.note.empty());
    CHECK(tuned_entry(spec, r).defines.at("GEMV_BLOCK") == "512");
    // The fastest is 6 % faster but noisy (a 40 % spread); the next, 4 % faster and quiet,
    // clears its own noise and is taken.
    r.rows = {row("256", 0.0100, 0.001, true), row("512", 0.0094, 0.4), row("128", 0.0096, 0.001)};
    CHECK(tuned_pick(r).row == &r.rows[2]);
    // A baseline that failed its check is no candidate: the fastest that passed wins.
    r.rows = {row("256", 0.0100, 0.001, true), row("512", 0.00995, 0.001)};
    r.rows[0].check = "DIFFERS at 3 (1 vs 2)";
    CHECK(tuned_pick(r).row == &r.rows[1]);
}

TEST_CASE("a sweep's cached rows are keyed by the dtype and shape it runs at") {
    // kjit tune runs one sweep file at several shapes and dtypes: no row may stand for another.
    SweepSpec spec = SweepSpec::parse("kernel = \"rms_norm\"\n[shape]\nrows = 64\nn = 256\n"
                                      "[sweep]\nRMS_BLOCK = [128]\n",
                                      "s.toml");
    const SweepVariant v = expand(spec).front();
    const std::string f32 = sweep_row_key(spec, v, "k", "gpu", 1);
    spec.dtype = DType::bf16;
    const std::string bf16 = sweep_row_key(spec, v, "k", "gpu", 1);
    spec.shape["rows"] = 128;
    const std::string wider = sweep_row_key(spec, v, "k", "gpu", 1);
    CHECK(f32 != bf16);
    CHECK(bf16 != wider);
}

TEST_CASE("kjit tune of a kernel no sweep file sweeps names the ones they do") {
    TempDir dir;
    tuned_project(dir.path(), "");
    const Run r = run_kjit_in(dir.path(), "tune splitk_gemm --shapes rows=1024,cols=4096");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(contains(r.out, "kjit tune splitk_gemm needs a sweep file of splitk_gemm: --sweep "
                          "FILE, or one among the project file's sweep_files (they sweep "
                          "splitk_gemv, row_softmax); did you mean splitk_gemv?"));
}

} // TEST_SUITE

TEST_SUITE("gpu") {

TEST_CASE("kjit tune records a winner per shape and start-up on that GPU picks it") {
    KJIT_REQUIRE_DEVICE();
    TempDir dir;
    tuned_project(dir.path(), "");
    std::filesystem::remove(dir.path() / "tuned.toml");
    write_file(dir.path() / "kjit.toml", test::read_file(dir.path() / "kjit.toml") + "tuned = \"tuned.toml\"\n");
    // A small sweep: two blocks at two shapes, at the SPLIT_K the shape file pins (an entry
    // measured at another split would not be used: test_tuned's start-up case).
    std::string sweep = test::read_file(dir.path() / "sweeps/splitk_gemv.sweep.toml");
    sweep.replace(sweep.find("SPLIT_K = [1, 2, 4, 7, 8, 14, 16]"), 33, "SPLIT_K = [4]");
    sweep.replace(sweep.find("pow2 = [64, 1024]"), 17, "pow2 = [128, 256]");
    write_file(dir.path() / "sweeps/splitk_gemv.sweep.toml", sweep);
    const std::string env = "KJIT_CACHE_DIR='" + (dir.path() / "cache").string() + "'";
    const Run tune = run_kjit_in(
        dir.path(), "tune splitk_gemv --shapes 'rows=4096,cols=14336;rows=1024,cols=4096'", env);
    INFO(tune.out);
    REQUIRE(tune.code == 0);
    CHECK(contains(tune.out, "recorded in tuned.toml: splitk_gemv cols=14336,rows=4096 f32 on "));
    const TunedTable t = TunedTable::load(dir.path() / "tuned.toml");
    REQUIRE(t.entries.size() == 2);
    write_file(dir.path() / "tuned.toml", test::read_file(dir.path() / "tuned.toml"));
    const Run audit = run_kjit_in(dir.path(), "audit", env);
    CHECK(contains(audit.out, "tuned: tuned.toml: 2 entries, 0 finding(s)"));
    const Run spec = run_kjit_in(dir.path(), "specialize", env);
    INFO(spec.out);
    CHECK(spec.code == 0);
    CHECK(contains(spec.out, "(exact)"));
    CHECK(contains(spec.out, "GEMV_BLOCK             tuned: tuned.toml:"));
}

} // TEST_SUITE
