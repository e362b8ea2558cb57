// A user's kernel contract written in TOML (a contract file the project file names): read,
// validated at file:line:col, planned like kjit's own contracts, and run by check, bench,
// digest and sweep.

#include "core/names.hpp"
#include "jit/sources.hpp"
#include "kernels/contract_toml.hpp"
#include "kernels/launch_case.hpp"
#include "kernels/plan.hpp"
#include "kernels/registry.hpp"
#include "kernels/shape.hpp"
#include "runtime/context.hpp"
#include "tests/support.hpp"
#include "tuning/selfcheck.hpp"
#include "tuning/sweep_plan.hpp"
#include "tuning/sweep_spec.hpp"

#include "tests/doctest.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace kjit;
using kjit::test::contains;
using kjit::test::Run;
using kjit::test::run_kjit_in;
using kjit::test::TempDir;

namespace {

const std::filesystem::path kExample = KJIT_SOURCE_DIR "/examples/splitk_app";

/// The example's split-K contract with the first `from` replaced by `to`, parsed as "c.toml".
KernelContract edited(const std::string& from, const std::string& to) {
    std::string text = test::read_file(kExample / "contracts/splitk_gemv.toml");
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    return parse_contract(text, "c.toml");
}

/// The message of the ConfigError parse_contract throws for the edited contract, with its
/// location: "c.toml:LINE:COL: MESSAGE".
std::string error_of(const std::string& from, const std::string& to) {
    try {
        (void)edited(from, to);
    } catch (const ConfigError& e) {
        return e.file + ":" + std::to_string(e.line) + ":" + std::to_string(e.column) + ": " +
               e.message;
    }
    return "(no error)";
}

/// A copy of the example project (its kernels, contracts, sweeps, shape and project file).
void copy_example(const std::filesystem::path& to) {
    namespace fs = std::filesystem;
    for (const char* part : {"kernels", "contracts", "sweeps", "kjit.toml"})
        fs::copy(kExample / part, to / part, fs::copy_options::recursive);
}

/// Registers the example's two contracts in this process, once.
void register_example_contracts() {
    static const bool once = [] {
        register_contract(load_contract(kExample / "contracts/splitk_gemv.toml"));
        register_contract(load_contract(kExample / "contracts/row_softmax.toml"));
        return true;
    }();
    (void)once;
}

/// `path` with the first `from` replaced by `to` (which must be there); the 1-based line where
/// it stood.
int edit(const std::filesystem::path& path, const std::string& from, const std::string& to) {
    std::string text = test::read_file(path);
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    test::write_file(path, text);
    return 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
}

/// `kjit audit` and `kjit check` (which runs the audit) in `dir` both fail on `finding`, counted
/// as one contract finding.
void check_contract_finding(const std::filesystem::path& dir, const std::string& finding) {
    for (const char* verb : {"audit", "check"}) {
        const Run r = run_kjit_in(dir, verb);
        INFO(verb << ": " << r.out);
        CHECK(r.code == 1);
        CHECK(contains(r.out, finding));
        CHECK(contains(r.out, "; contracts: 1 finding(s)"));
    }
}

} // namespace

TEST_SUITE("contract_file") {

TEST_CASE("a contract file declares a two-launch pipeline with a workspace") {
    const KernelContract c = load_contract(kExample / "contracts/splitk_gemv.toml");
    CHECK(c.name == "splitk_gemv");
    CHECK(c.source_name() == "splitk_gemv");
    CHECK(c.shape_keys == std::vector<std::string>{"rows", "cols"});
    REQUIRE(c.pipeline.size() == 2);
    CHECK(c.pipeline[0].entry.at(DType::f32) == "splitk_partial");
    CHECK(c.pipeline[1].args == std::vector<std::string>{"y", "partial", "rows"});
    REQUIRE(c.args.size() == 6);
    CHECK(c.args[0].role == ArgRole::output);
    CHECK(c.args[0].tolerance == 1e-5);
    CHECK(c.args[1].role == ArgRole::workspace);
    CHECK(c.args[4].role == ArgRole::scalar);
    CHECK(c.reference_defines == Defines{{"SPLIT_K", "1"}});
    CHECK(c.bench_shape == "rows=4096,cols=14336");
    CHECK(c.digest_shapes == std::vector<std::string>{"rows=4096,cols=14336", "rows=1000,cols=4096"});
    REQUIRE(c.check_shapes.size() == 2);
    CHECK(c.check_shapes[1].defines == std::vector<std::string>{"GEMV_BLOCK=128", "SPLIT_K=8"});

    // Planned as kjit's own contracts are: the geometry follows the defines.
    const CasePlan p = plan_case(c, parse_shape(c, "rows=1000,cols=4096"), DType::f32,
                                 merge_defines(c.defines, std::vector<std::string>{"SPLIT_K=8"}));
    REQUIRE(p.steps.size() == 2);
    CHECK(p.steps[0].grid.x == 125); // ceil(1000 / (256 / 32))
    CHECK(p.steps[0].grid.y == 8);
    CHECK(p.steps[1].grid.x == 4);
    CHECK(p.find_buffer("partial")->count == 8000);
    CHECK(p.find_buffer("partial")->role == ArgRole::workspace);
    CHECK(p.entry() == "splitk_partial"); // marked main: what reports describe
    CHECK(p.launches_text() == "splitk_partial + splitk_reduce");
    CHECK(p.outputs.size() == 1);
    CHECK(p.bytes == 4.0 * (1000 * 4096 + 4096 + 2 * 8 * 1000 + 1000));
    CHECK_THROWS_WITH_AS(plan_case(c, parse_shape(c, "rows=8,cols=100"), DType::f32),
                         doctest::Contains("cols=100 must be a multiple of 4 * SPLIT_K=4"), ConfigError);

    // The same file, the same contract; another file, another text.
    CHECK(contract_text(c) == contract_text(load_contract(kExample / "contracts/splitk_gemv.toml")));
    CHECK(contract_text(c) != contract_text(load_contract(kExample / "contracts/row_softmax.toml")));
}

TEST_CASE("a contract file's random inputs take a scale and an offset") {
    const KernelContract c = load_contract(kExample / "contracts/row_softmax.toml");
    const CasePlan p = plan_case(c, parse_shape(c, "rows=7,cols=1000"), DType::f32);
    CHECK(p.find_buffer("x")->scale == 8.0f);
    CHECK(p.find_buffer("x")->offset == -4.0f);
    CHECK(p.steps.size() == 1);
    CHECK(p.steps[0].params.size() == 3); // no `args`: every argument in order
}

TEST_CASE("every mistake in a contract file is reported at its file:line:col") {
    const struct {
        std::string from, to, want;
    } cases[] = {
        {"grid = \"ceil_div(rows, GEMV_BLOCK)\"", "grid = \"ceil_div(rows, GEMV_BLOK)\"",
         "c.toml:65:24: contract splitk_gemv, step 2 grid[0]: bad expression"},
        {"args = [\"y\", \"partial\", \"rows\"]", "args = [\"y\", \"partials\", \"rows\"]",
         "c.toml:67:14: step 2 passes 'partials', which is no [[args]] name"},
        {"type = \"i32\"", "type = \"int\"", "c.toml:48:8: unknown type 'int'"},
        {"entry = \"splitk_reduce\"", "entri = \"splitk_reduce\"",
         "c.toml:64:1: unknown key 'entri' in [[step]]; did you mean 'entry'?"},
        {"shape = { rows = 1000, cols = 4096 }", "shape = { rows = 1000, cols = 4095 }",
         "c.toml:73:9: shape: splitk_gemv: cols=4095 must be a multiple of 4 * SPLIT_K=8"},
        {"shape = { rows = 1000, cols = 4096 }", "shape = { rows = 1000, col = 4096 }",
         "c.toml:73:9: shape: bad shape"},
        {"reference_defines = { SPLIT_K = 1 }", "",
         "c.toml:1:1: contract splitk_gemv: check shapes need a float64 reference or reference "
         "defines"},
        {"reference_defines = { SPLIT_K = 1 }", "reference = \"gemv\"",
         "c.toml:13:13: no float64 reference is registered as 'gemv'"},
        {"workspace = true", "workspace = true\noutput = true",
         "c.toml:34:13: 'partial' is an output and a workspace"},
        {"workspace = true", "workspace = true\nvalue = \"0\"",
         "c.toml:35:9: 'value' does not apply to workspace 'partial' (filled with the canary "
         "before each run)"},
        {"expr = \"cols % (SPLIT_K * 4) == 0\"", "expr = \"cols % (SPLIT_KK * 4) == 0\"",
         "c.toml:20:17: contract splitk_gemv, precondition 1: bad expression"},
        {"bytes = \"4 * (rows", "bytes = \"4 * (rowz",
         "c.toml:7:15: contract splitk_gemv, bytes: bad expression"},
        {"value = \"rows\"", "value = \"rows\"\ncount = \"1\"",
         "c.toml:50:9: 'count' is for buffers; scalar 'rows' takes 'value'"},
        // A scalar that overflows its type at a declared shape: at its value, not the shape.
        {"value = \"rows\"", "value = \"rows * 4194304\"",
         "c.toml:49:10: bench_shape rows=4096,cols=14336 (line 9): splitk_gemv: scalar rows = "
         "17179869184 does not fit i32"},
        {"name = \"x\"\ntype = \"f32*\"", "name = \"x\"\ntype = \"f32*\"\nvalue = \"3\"",
         "'value' fills buffer 'x' only with init = \"value\"; it is init = \"random\" (the "
         "default)"},
        {"dtypes = [\"f32\"]", "dtypes = [\"f16\"]",
         "c.toml:6:11: unknown dtype 'f16' (known: f32, bf16)"},
        {"entry = \"splitk_partial\"", "entry = { f32 = \"splitk_partial\", bf16 = \"p\" }",
         "entry point for dtype bf16, which 'dtypes' does not list"},
        {"[[step]]\nentry = \"splitk_partial\"",
         "[[step]]\nfrom = \"w\"\nto = \"x\"\n[[step]]\nentry = \"splitk_partial\"",
         "c.toml:9:15: bench_shape: splitk_gemv: step 1 copies w (234881024 bytes) into x"},
        {"name = \"splitk_gemv\"", "nme = \"splitk_gemv\"", "c.toml:4:1: unknown key 'nme'"},
        {"reference_defines = { SPLIT_K = 1 }", "reference_defines = { SPLITK = 1 }",
         "c.toml:13:23: reference define SPLITK is none of the contract's [defines]; did you "
         "mean SPLIT_K (line 16)?"},
        // The misspelling in [defines]: the expressions that read the right name say so, not
        // the reference define that spells it right.
        {"[defines]\nSPLIT_K = 4", "[defines]\nSPLT_K = 4",
         "c.toml:20:17: contract splitk_gemv, precondition 1: bad expression 'cols % (SPLIT_K * "
         "4) == 0': unknown name 'SPLIT_K'; did you mean SPLT_K?"},
        {"[defines]\nSPLIT_K = 4", "[defines]\nSPLIT_K = \"(2+2)\"",
         "c.toml:20:9: contract splitk_gemv, precondition 1: 'cols % (SPLIT_K * 4) == 0' reads "
         "define SPLIT_K = '(2+2)' (line 16), which is not a number: the contract's expressions "
         "read defines as numbers"},
        {"[defines]\nSPLIT_K = 4", "[defines]\nSPLIT_K = \"2+2\"",
         "c.toml:16:1: defines: bad define 'SPLIT_K': the value '2+2' is an expression with '+' "
         "outside parentheses: a define expands as text, so the source's own SPLIT_K / 2 would "
         "read '2+2 / 2'; write SPLIT_K=(2+2)"},
        {"grid = \"ceil_div(rows, GEMV_BLOCK)\"", "grid = \"ceildiv(rows, GEMV_BLOCK)\"",
         "c.toml:65:9: contract splitk_gemv, step 2 grid[0]: bad expression 'ceildiv(rows, "
         "GEMV_BLOCK)': unknown function 'ceildiv'; did you mean ceil_div? (functions: "
         "ceil_div, f32, min, max, floor, ceil, abs, sqrt)"},
        {"reference_defines = { SPLIT_K = 1 }", "reference_defines = { SPLIT_K = 1, TILE = 2 }",
         "c.toml:13:36: reference define TILE is none of the contract's [defines]"},
        // A launch the contract writes that fails at a declared shape: at the expression,
        // naming the shape.
        {"block = \"GEMV_BLOCK\"\nargs = [\"y\", \"partial\", \"rows\"]",
         "block = \"GEMV_BLOCK * 16\"\nargs = [\"y\", \"partial\", \"rows\"]",
         "c.toml:66:10: bench_shape rows=4096,cols=14336 (line 9): splitk_gemv: block.x "
         "'GEMV_BLOCK * 16' = 4096 is not a valid launch dimension (1..1024)"},
        // A case at the reference's own defines would compare the pipeline with itself.
        {"defines = { SPLIT_K = 8, GEMV_BLOCK = 128 }",
         "defines = { SPLIT_K = 1, GEMV_BLOCK = 128 }",
         "c.toml:72:1: this check case compares nothing: its defines already hold the reference "
         "defines (SPLIT_K=1), so kjit check would compare the pipeline with itself and pass any "
         "kernel"},
        {"[defines]\nSPLIT_K = 4", "[defines]\nSPLIT_K = 1",
         "c.toml:69:1: this check case compares nothing"},

        {"entry = \"splitk_reduce\"", "entry = \"splitk_reduce\"\nmain = true",
         "c.toml:65:8: another step is marked main already"},
        {"bench_shape = { rows = 4096, cols = 14336 }", "bench_shape = \"rows=4096,cols=14336\"",
         "c.toml:9:15: 'bench_shape' must be a table"},
    };
    for (const auto& c : cases) {
        INFO(c.from << " -> " << c.to);
        CHECK(contains(error_of(c.from, c.to), c.want));
    }
    // A misspelt knob leaves a case at the reference's defines: the misspelling is named.
    KernelContract at_reference = load_contract(kExample / "contracts/splitk_gemv.toml");
    at_reference.reference_defines = {{"SPLIT_K", "4"}};
    CHECK(self_reference_problem(at_reference, {{"SPLITK", "8"}}) ==
          "its define SPLITK is none of the contract's; did you mean SPLIT_K? As written, the "
          "case's defines already hold the reference defines (SPLIT_K=4), so kjit check would "
          "compare the pipeline with itself and pass any kernel; give the case a define that "
          "differs");
    CHECK(self_reference_problem(at_reference, {{"SPLIT_K", "8"}}).empty());
    CHECK_THROWS_WITH_AS(parse_contract("name = \"x\"\nshape = [\"n\"\n", "c.toml"),
                         doctest::Contains("c.toml:2:14: error: Error while parsing array"), ConfigError);
}

TEST_CASE("kjit reads the contracts its project file names") {
    TempDir dir;
    copy_example(dir.path());
    // No GPU needed for a bad contract: check, bench, digest and sweep stop at its line.
    std::string text = test::read_file(dir.path() / "contracts/splitk_gemv.toml");
    text.replace(text.find("\"partial\", \"rows\"]"), 9, "\"partials\"");
    test::write_file(dir.path() / "contracts/splitk_gemv.toml", text);
    for (const char* verb : {"check", "bench splitk_gemv", "digest record splitk_gemv",
                             "sweep --dry-run"}) {
        INFO(verb);
        const Run r = run_kjit_in(dir.path(), verb);
        CHECK(r.code == 2);
        CHECK(contains(r.out, "contracts/splitk_gemv.toml:67:14: error: step 2 passes 'partials'"));
    }
    // A contract named twice: the second place is named.
    test::write_file(dir.path() / "contracts/splitk_gemv.toml",
                     test::read_file(kExample / "contracts/splitk_gemv.toml"));
    std::string project = test::read_file(dir.path() / "kjit.toml");
    project.replace(project.find("\"contracts/row_softmax.toml\""), 28,
                    "\"contracts/splitk_gemv.toml\"");
    test::write_file(dir.path() / "kjit.toml", project);
    const Run twice = run_kjit_in(dir.path(), "bench splitk_gemv");
    CHECK(twice.code == 2);
    CHECK(contains(twice.out, "kjit.toml:6:44: error: contract splitk_gemv is registered twice"));
}

TEST_CASE("a contract define its kernel never reads is reported at the contract's line") {
    TempDir dir;
    copy_example(dir.path());
    const int line = edit(dir.path() / "contracts/row_softmax.toml", "SOFTMAX_BLOCK = 512\n",
                          "SOFTMAX_BLCOK = 256\nSOFTMAX_BLOCK = 512\n");
    const std::string where = "contracts/row_softmax.toml:" + std::to_string(line) + ":1: error: ";
    const std::string what = "define SOFTMAX_BLCOK is never read by kernels/row_softmax.cu or "
                             "the files it includes; did you mean SOFTMAX_BLOCK?";
    // The audit (and check, which runs it) as a finding; a sweep of the kernel before it
    // compiles anything (it blamed the sweep file, with no line, before).
    check_contract_finding(dir.path(), where + "kernel 'row_softmax (contract)': " + what);
    // Each check case's define set fails to compile for it: at the same line, not at the
    // case's (the second case's define is not the cause) or nowhere (the first has none).
    Run c = run_kjit_in(dir.path(), "check");
    INFO(c.out);
    CHECK(contains(c.out, where +
                              "case row_softmax rows=32,cols=4096 MAX_COLS=4096 "
                              "SOFTMAX_BLCOK=256 SOFTMAX_BLOCK=512: the define set does not "
                              "compile: " +
                              what));
    CHECK(contains(c.out, where +
                              "case row_softmax rows=7,cols=1000 MAX_COLS=4096 "
                              "SOFTMAX_BLCOK=256 SOFTMAX_BLOCK=128: the define set does not "
                              "compile: " +
                              what));
    const std::string sweep = "sweep sweeps/row_softmax.sweep.toml --dry-run";
    Run r = run_kjit_in(dir.path(), sweep);
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(contains(r.out, where + "kernel 'row_softmax (contract)': " + what));
    // KJIT_ALLOW_UNREAD_DEFINES (a define only a toolkit header reads): warnings, as at a compile.
    r = run_kjit_in(dir.path(), "audit", "KJIT_ALLOW_UNREAD_DEFINES=1");
    CHECK(r.code == 0);
    CHECK(contains(r.out, where.substr(0, where.size() - 7) + "warning: kernel 'row_softmax"));
    CHECK_FALSE(contains(r.out, "contracts: "));
    r = run_kjit_in(dir.path(), sweep, "KJIT_ALLOW_UNREAD_DEFINES=1");
    CHECK(r.code == 0);
    CHECK(contains(r.out, "warning: kernel 'row_softmax (contract)': " + what));
}

TEST_CASE("a name only a contract injects is no KJ003 finding but one nothing injects still is") {
    TempDir dir;
    copy_example(dir.path());
    // SOFTMAX_FAST is injected by the contract's [defines] alone (no #ifndef default);
    // SOFTMAX_FASTER by nothing.
    (void)edit(dir.path() / "contracts/row_softmax.toml", "SOFTMAX_BLOCK = 512\n",
               "SOFTMAX_BLOCK = 512\nSOFTMAX_FAST = 1\n");
    const int line = edit(dir.path() / "kernels/row_softmax.cu", "#ifndef MAX_COLS\n",
                          "#if SOFTMAX_FAST\n#endif\n#if SOFTMAX_FASTER\n#endif\n#ifndef "
                          "MAX_COLS\n");
    for (const char* verb : {"lint", "audit"}) {
        const Run r = run_kjit_in(dir.path(), verb);
        INFO(verb << ": " << r.out);
        CHECK(r.code == 1);
        CHECK_FALSE(contains(r.out, "reads SOFTMAX_FAST,"));
        CHECK(contains(r.out, "kernels/row_softmax.cu:" + std::to_string(line + 2) +
                                  ":5: error: #if reads SOFTMAX_FASTER, which is neither "
                                  "defined in the source nor injected"));
        CHECK(contains(r.out, "lint: 3 file(s), 1 error(s)"));
    }
}

TEST_CASE("a check case's define its kernel never reads is reported at the case's line") {
    TempDir dir;
    copy_example(dir.path());
    const std::filesystem::path contract = dir.path() / "contracts/row_softmax.toml";
    const int line = edit(contract, "defines = { SOFTMAX_BLOCK = 128 }",
                          "defines = { SOFTMAX_BLOCK = 128, SOFTMAX_BLOKC = 64 }");
    const std::string where = "contracts/row_softmax.toml:" + std::to_string(line) + ":34: ";
    const std::string what = "kernel 'row_softmax ([[check]] 2)': define SOFTMAX_BLOKC is never "
                             "read by kernels/row_softmax.cu or the files it includes; did you "
                             "mean SOFTMAX_BLOCK?";
    // The audit, and check, which runs it, name the case's line (check's case still fails to
    // compile, as before); the define reaches no sweep, which runs as before.
    check_contract_finding(dir.path(), where + "error: " + what);
    // Its define sets (its own, its reference's) that fail to compile are named by the case,
    // at the same place, without a GPU as with one.
    Run r = run_kjit_in(dir.path(), "check");
    CHECK(contains(r.out, where + "error: case row_softmax rows=7,cols=1000 MAX_COLS=4096 "
                                  "SOFTMAX_BLOCK=128 SOFTMAX_BLOKC=64: the define set does not "
                                  "compile: define SOFTMAX_BLOKC is never read by"));
    CHECK(contains(r.out, "SOFTMAX_BLOCK=32 SOFTMAX_BLOKC=64 (its reference defines): the define "
                          "set does not compile"));
    CHECK_FALSE(contains(r.out, "row_softmax/MAX_COLS"));
    r = run_kjit_in(dir.path(), "sweep sweeps/row_softmax.sweep.toml --dry-run");
    CHECK(r.code == 0);
    r = run_kjit_in(dir.path(), "audit", "KJIT_ALLOW_UNREAD_DEFINES=1");
    CHECK(r.code == 0);
    CHECK(contains(r.out, where + "warning: " + what));
    // A case's define that the contract's [defines] also has is reported there, once.
    edit(contract, "SOFTMAX_BLOCK = 512\n", "SOFTMAX_BLOKC = 32\nSOFTMAX_BLOCK = 512\n");
    r = run_kjit_in(dir.path(), "audit");
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(contains(r.out, "kernel 'row_softmax (contract)': define SOFTMAX_BLOKC"));
    CHECK_FALSE(contains(r.out, "[[check]] 2"));
    CHECK(contains(r.out, "; contracts: 1 finding(s)"));
}

TEST_CASE("a launch argument's C++ type is checked where the PTX cannot tell it") {
    TempDir dir;
    test::write_file(dir.path() / "k.cu",
                     "#include <cuda_bf16.h>\n"
                     "typedef float real;\n"
                     "extern \"C\" __global__ void k(real* __restrict__ y, long long n,\n"
                     "    const __nv_bfloat16* b, void* v, const float4* f, int m) {}\n");
    const SourceSet set = SourceSet::from_directory(dir.path());
    const auto problem = [&](const std::string& y, const std::string& n, const std::string& b,
                             std::string* where_key = nullptr) {
        const std::string text = "name = \"k\"\nshape = [\"n\"]\n"
                                 "[[args]]\nname = \"y\"\n" +
                                 y +
                                 "\n"
                                 "[[args]]\nname = \"n\"\n" +
                                 n +
                                 "\n"
                                 "[[args]]\nname = \"b\"\n" +
                                 b +
                                 "\n"
                                 "[[args]]\nname = \"v\"\ntype = \"f32*\"\ncount = \"n\"\n"
                                 "[[args]]\nname = \"f\"\ntype = \"f32*\"\ncount = \"n\"\n"
                                 "[[args]]\nname = \"m\"\ntype = \"i32\"\nvalue = \"n\"\n"
                                 "[[step]]\nentry = \"k\"\ngrid = 1\nblock = 32\n";
        const CasePlan plan =
            plan_case(parse_contract(text, "k.toml"), ShapeValues{{"n", 64}}, DType::f32);
        CompileOptions options;
        options.arch = "sm_90";
        options.toolkit_headers = true;
        std::string key;
        std::string out = launch_type_problem(plan, set, options, key);
        if (where_key)
            *where_key = key;
        return out;
    };
    const std::string y = "type = \"f32*\"\ncount = \"n\"\noutput = true";
    const std::string n = "type = \"i64\"\nvalue = \"n\"";
    const std::string b = "type = \"bf16*\"\ncount = \"n\"";
    // void* and float4* take any buffer; the element types the check knows must agree.
    CHECK(problem(y, n, b) == "");
    std::string where_key;
    CHECK(problem("type = \"bf16*\"\ncount = \"n\"\noutput = true", n, b, &where_key) ==
          "step 1 (k): argument 'y', bf16*, is parameter 1, which k.cu declares as 'float *': "
          "the PTX keeps no element type, so it would launch and read the bytes as "
          "another type");
    CHECK(where_key == "argument y type");
    CHECK(contains(problem(y, "type = \"f32*\"\ncount = \"n\"", b),
                   "argument 'n', f32*, is parameter 2, which k.cu declares as 'long long': the "
                   "kernel would read the address as a number"));
    CHECK(contains(problem(y, n, "type = \"f32*\"\ncount = \"n\""),
                   "argument 'b', f32*, is parameter 3, which k.cu declares as "
                   "'const __nv_bfloat16 *'"));

    // A template instantiation is named as its name expression; an overload set cannot be,
    // which is said, not passed unchecked.
    TempDir tdir;
    test::write_file(tdir.path() / "t.cu",
                     "template <class T> __global__ void t(T* y, long long n) {}\n"
                     "__global__ void o(float* y, long long n) {}\n"
                     "__global__ void o(double* y, long long n) {}\n");
    const SourceSet tset = SourceSet::from_directory(tdir.path());
    const auto template_problem = [&](const std::string& entry, const std::string& n_type) {
        const std::string text = "name = \"t\"\nshape = [\"n\"]\n"
                                 "[[args]]\nname = \"y\"\ntype = \"f32*\"\ncount = \"n\"\n"
                                 "output = true\n"
                                 "[[args]]\nname = \"n\"\ntype = \"" +
                                 n_type +
                                 "\"\n"
                                 "count = \"n\"\n"
                                 "[[step]]\nentry = \"" +
                                 entry + "\"\ngrid = 1\nblock = 32\n";
        const CasePlan plan =
            plan_case(parse_contract(text, "t.toml"), ShapeValues{{"n", 64}}, DType::f32);
        CompileOptions options;
        options.arch = "sm_90";
        std::string key;
        return launch_type_problem(plan, tset, options, key);
    };
    CHECK(template_problem("t<float>", "f32*") ==
          "step 1 (t<float>): argument 'n', f32*, is parameter 2, which t.cu declares as "
          "'long long': the kernel would read the address as a number");
    CHECK(contains(template_problem("o", "f32*"),
                   "the types of the launches' parameters could not be read from t.cu (NVRTC: "));
}

TEST_CASE("a project's contracts are the ones kjit check launches and without a GPU it says so") {
    TempDir dir;
    copy_example(dir.path());
    // A kernel named as one of kjit's own does not pick up kjit's contract in this project.
    test::write_file(dir.path() / "kernels/rms_norm.cu",
                     "extern \"C\" __global__ void rms_norm_f32(float* y) { y[0] = 1; }\n");
    const Run r = run_kjit_in(dir.path(), "check");
    INFO(r.out);
    CHECK(r.code == 0);
    // ... and is said to be launched by nothing.
    CHECK(contains(r.out, "note: 1 kernel(s) without a contract, compiled by the audit but "
                          "never launched: rms_norm (a contract file says how"));
    if (contains(r.out, "launches skipped")) {
        // No device here: the gpu suite launches them; the plans were still held against the
        // compiled entry points.
        CHECK(contains(r.out, "launch plans: 0 problem(s), 0 define set(s) failed to compile"));
        return;
    }
    CHECK(contains(r.out, "splitk_partial/y"));
    CHECK(contains(r.out, "(vs SPLIT_K=1)"));
    CHECK(contains(r.out, "row_softmax/y"));
    CHECK_FALSE(contains(r.out, "rms_norm_f32"));
    CHECK(contains(r.out, "check: 0 failed"));
}

TEST_CASE("a contract step names a template instantiation as written") {
    // No explicit instantiation in the file: the step's name expression makes NVRTC
    // instantiate it, and every verb finds the entry point by that spelling.
    TempDir dir;
    copy_example(dir.path());
    test::write_file(
        dir.path() / "kernels/tscale.cu",
        "#ifndef TS_BLOCK\n#define TS_BLOCK 128\n#endif\n"
        "namespace ts {\ntemplate <typename T>\n"
        "__global__ void __launch_bounds__(TS_BLOCK) scale(T* y, const T* x, int n) {\n"
        "    int i = blockIdx.x * TS_BLOCK + threadIdx.x;\n"
        "    if (i < n) y[i] = x[i] * T(2);\n}\n}\n");
    test::write_file(dir.path() / "contracts/tscale.toml",
                     "name = \"tscale\"\nshape = [\"n\"]\ndtypes = [\"f32\"]\n"
                     "bytes = \"8 * n\"\nbench_shape = { n = 4096 }\n"
                     "reference_defines = { TS_BLOCK = 64 }\n[defines]\nTS_BLOCK = 128\n"
                     "[[args]]\nname = \"y\"\ntype = \"f32*\"\ncount = \"n\"\noutput = true\n"
                     "tolerance = 1e-6\n"
                     "[[args]]\nname = \"x\"\ntype = \"f32*\"\ncount = \"n\"\n"
                     "[[args]]\nname = \"n\"\ntype = \"i32\"\nvalue = \"n\"\n"
                     "[[step]]\nentry = \"ts::scale<float>\"\ngrid = \"ceil(n / TS_BLOCK)\"\n"
                     "block = \"TS_BLOCK\"\n"
                     "[[check]]\nshape = { n = 4096 }\n");
    test::write_file(dir.path() / "sweeps/tscale.sweep.toml",
                     "kernel = \"tscale\"\n[shape]\nn = 4096\n[sweep]\nTS_BLOCK = [64, 256]\n");
    edit(dir.path() / "kjit.toml", "\"contracts/row_softmax.toml\"]",
         "\"contracts/row_softmax.toml\", \"contracts/tscale.toml\"]");
    const std::string env = "KJIT_CACHE_DIR='" + (dir.path() / "cache").string() + "'";
    const Run sweep = run_kjit_in(dir.path(), "sweep --dry-run sweeps/tscale.sweep.toml", env);
    INFO(sweep.out);
    CHECK(sweep.code == 0);
    CHECK(contains(sweep.out, "TS_BLOCK=256                     (16,1,1)       (256,1,1)"));
    CHECK(contains(sweep.out, "sweep plan: 2 variants, 0 failed to compile"));
    // kjit check without a GPU holds every case's launches against the compiled entry points.
    const Run check = run_kjit_in(dir.path(), "check", env);
    INFO(check.out);
    CHECK(contains(check.out, "launch plans: 0 problem(s), 0 define set(s) failed to compile"));
    // A misspelt instantiation is refused at the step, with NVRTC's reason.
    edit(dir.path() / "contracts/tscale.toml", "ts::scale<float>", "ts::scale<flaot>");
    const Run bad = run_kjit_in(dir.path(), "sweep --dry-run sweeps/tscale.sweep.toml", env);
    INFO(bad.out);
    CHECK(bad.code != 0);
    CHECK(contains(bad.out, "flaot"));
}

TEST_CASE("a kernel in a namespace is named with it by sig and by a step that misses it") {
    CHECK(readable_entry("_ZN4blas4axpyEPfPKffi") == "blas::axpy");
    CHECK(readable_entry("_ZN2ts5scaleIfEEvPT_PKS1_i") == "ts::scale<float>");
    CHECK(readable_entry("splitk_reduce") == "splitk_reduce");
    // An extern "C" name that spells a mangled type is no C++ symbol.
    CHECK(readable_entry("x") == "x");
    CHECK(readable_entry("f") == "f");
    TempDir dir;
    copy_example(dir.path());
    test::write_file(dir.path() / "kernels/axpy.cu",
                     "#ifndef AXPY_BLOCK\n#define AXPY_BLOCK 256\n#endif\n"
                     "namespace blas {\n__global__ void axpy(float* y, const float* x, float a, "
                     "int n) {\n    int i = blockIdx.x * AXPY_BLOCK + threadIdx.x;\n"
                     "    if (i < n) y[i] += a * x[i];\n}\n}\n");
    test::write_file(dir.path() / "contracts/axpy.toml",
                     "name = \"axpy\"\nshape = [\"n\"]\ndtypes = [\"f32\"]\n"
                     "reference_defines = { AXPY_BLOCK = 128 }\n[defines]\n"
                     "AXPY_BLOCK = 256\n"
                     "[[args]]\nname = \"y\"\ntype = \"f32*\"\ncount = \"n\"\noutput = true\n"
                     "[[args]]\nname = \"x\"\ntype = \"f32*\"\ncount = \"n\"\n"
                     "[[args]]\nname = \"a\"\ntype = \"f32\"\nvalue = \"2\"\n"
                     "[[args]]\nname = \"n\"\ntype = \"i32\"\nvalue = \"n\"\n"
                     "[[step]]\nentry = \"axpy\"\ngrid = \"ceil_div(n, AXPY_BLOCK)\"\n"
                     "block = \"AXPY_BLOCK\"\n");
    edit(dir.path() / "kjit.toml", "\"contracts/row_softmax.toml\"]",
         "\"contracts/row_softmax.toml\", \"contracts/axpy.toml\"]");
    const Run sig = run_kjit_in(dir.path(), "sig kernels/axpy.cu");
    INFO(sig.out);
    if (sig.code == 0) // without libclang sig lists nothing
        CHECK(contains(sig.out, "kernels/axpy.cu:5:17: blas::axpy  no __launch_bounds__"));
    test::write_file(dir.path() / "sweeps/axpy.sweep.toml",
                     "kernel = \"axpy\"\n[shape]\nn = 4096\n[sweep]\nAXPY_BLOCK = [128, 256]\n");
    const std::string env = "KJIT_CACHE_DIR='" + (dir.path() / "cache").string() + "'";
    const Run bad = run_kjit_in(dir.path(), "sweep --dry-run sweeps/axpy.sweep.toml", env);
    INFO(bad.out);
    CHECK(bad.code != 0);
    CHECK(contains(bad.out, "axpy.cu has no entry point 'axpy'; did you mean blas::axpy? (entry "
                            "points: blas::axpy (_ZN4blas4axpyEPfPKffi))"));
    // A misspelt qualified entry fails NVRTC's name map: kjit check says so at the step's entry.
    const int line =
        edit(dir.path() / "contracts/axpy.toml", "entry = \"axpy\"", "entry = \"blas::axpi\"");
    test::write_file(dir.path() / "contracts/axpy.toml",
                     test::read_file(dir.path() / "contracts/axpy.toml") +
                         "[[check]]\nshape = { n = 1000 }\n");
    const Run check = run_kjit_in(dir.path(), "check", env);
    INFO(check.out);
    CHECK(check.code == 1);
    CHECK(
        contains(check.out, "contracts/axpy.toml:" + std::to_string(line) +
                                ":9: error: case axpy n=1000 AXPY_BLOCK=256: the define set does "
                                "not compile: step 1 names entry 'blas::axpi', which no kernel of "
                                "axpy.cu is (NVRTC: __nv_name_map:"));
    // A reference variant that breaks the contract, or does not compile: at the sweep file's
    // reference_variant (it had no line).
    std::string sweep = test::read_file(dir.path() / "sweeps/splitk_gemv.sweep.toml");
    test::write_file(dir.path() / "sweeps/bad.sweep.toml",
                     sweep.replace(sweep.find("SPLIT_K = 1 }"), 11, "SPLIT_K = 3"));
    const Run ref = run_kjit_in(dir.path(), "sweep --dry-run sweeps/bad.sweep.toml", env);
    INFO(ref.out);
    CHECK(ref.code == 2);
    CHECK(contains(ref.out, "sweeps/bad.sweep.toml:18:21: error: the reference variant "
                            "(GEMV_BLOCK=256 SPLIT_K=3): splitk_gemv: cols=14336 must be a "
                            "multiple of 4 * SPLIT_K=3"));
    // And a sweep's dry run, at the same line.
    const Run dry = run_kjit_in(dir.path(), "sweep --dry-run sweeps/axpy.sweep.toml", env);
    INFO(dry.out);
    CHECK(dry.code == 2);
    CHECK(contains(dry.out, "contracts/axpy.toml:" + std::to_string(line) +
                                ":9: error: variant AXPY_BLOCK=128: step 1 names entry "
                                "'blas::axpi', which no kernel of axpy.cu is (NVRTC: "
                                "__nv_name_map:"));
}

TEST_CASE("the launch type check compiles with the case's defines and the toolkit headers") {
    // A bf16 kernel that includes <cuda_bf16.h> and whose element type a define picks: the
    // check's probe was compiled with neither the toolkit headers nor the defines, so kjit
    // check failed every such case ("could not open source file cuda_bf16.h").
    test::TempDir dir;
    copy_example(dir.path());
    test::write_file(dir.path() / "kernels/bscale.cu",
                     "#include <cuda_bf16.h>\n#ifndef USE_BF16\n#define USE_BF16 0\n#endif\n"
                     "#ifndef BS_BLOCK\n#define BS_BLOCK 256\n#endif\n"
                     "#if USE_BF16\nusing elem = __nv_bfloat16;\n#else\nusing elem = float;\n"
                     "#endif\nextern \"C\" __global__ void bscale(elem* y, int n) {\n"
                     "    int i = blockIdx.x * BS_BLOCK + threadIdx.x;\n"
                     "    if (i < n) y[i] = y[i] + y[i];\n}\n");
    test::write_file(dir.path() / "contracts/bscale.toml",
                     "name = \"bscale\"\nshape = [\"n\"]\ndtypes = [\"bf16\"]\n"
                     "reference_defines = { BS_BLOCK = 128 }\n[defines]\nUSE_BF16 = 1\n"
                     "BS_BLOCK = 256\n"
                     "[[args]]\nname = \"y\"\ntype = \"bf16*\"\ncount = \"n\"\n"
                     "output = true\ninit = \"random\"\n"
                     "[[args]]\nname = \"n\"\ntype = \"i32\"\nvalue = \"n\"\n"
                     "[[step]]\nentry = \"bscale\"\ngrid = \"ceil_div(n, BS_BLOCK)\"\n"
                     "block = \"BS_BLOCK\"\n[[check]]\nshape = { n = 1000 }\n"
                     "defines = { BS_BLOCK = 64 }\n");
    edit(dir.path() / "kjit.toml", "\"contracts/row_softmax.toml\"]",
         "\"contracts/row_softmax.toml\", \"contracts/bscale.toml\"]");
    const std::string env = "KJIT_CACHE_DIR='" + (dir.path() / "cache").string() + "'";
    Run r = run_kjit_in(dir.path(), "check", env);
    INFO(r.out);
    CHECK(!contains(r.out, "could not be read"));
    CHECK(contains(r.out, "launch plans: 0 problem(s)"));
    // The case's define reaches the probe: with USE_BF16 = 0 the parameter is a float*.
    edit(dir.path() / "contracts/bscale.toml", "defines = { BS_BLOCK = 64 }",
         "defines = { BS_BLOCK = 64, USE_BF16 = 0 }");
    r = run_kjit_in(dir.path(), "check", env);
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(contains(r.out, "contracts/bscale.toml:10:8: error: case bscale n=1000 BS_BLOCK=64 "
                          "USE_BF16=0: step 1 (bscale): argument 'y', bf16*, is parameter 1, "
                          "which bscale.cu declares as 'float *'"));
}

TEST_CASE("a sweep dry run finds every launch mistake without a GPU at its file:line:col") {
    const struct {
        std::string from, to, want;
    } cases[] = {
        {"entry = \"splitk_reduce\"", "entry = \"splitk_reduc\"",
         "contracts/splitk_gemv.toml:64:9: error: variant GEMV_BLOCK=64 SPLIT_K=1: step 2 "
         "(splitk_reduc): splitk_gemv.cu has no entry point 'splitk_reduc'; did you mean "
         "splitk_reduce? (entry points: splitk_partial, splitk_reduce)"},
        {"args = [\"y\", \"partial\", \"rows\"]", "args = [\"y\", \"partial\"]",
         "contracts/splitk_gemv.toml:67:8: error: variant GEMV_BLOCK=64 SPLIT_K=1: step 2 "
         "(splitk_reduce): the kernel takes 3 parameters but 2 arguments were passed"},
        {"name = \"cols\"\ntype = \"i32\"", "name = \"cols\"\ntype = \"f32\"",
         "contracts/splitk_gemv.toml:61:8: error: variant GEMV_BLOCK=64 SPLIT_K=1: step 1 "
         "(splitk_partial): argument 5 is a 4-byte float but the kernel's parameter 5 is a "
         "32-bit integer (.u32)"},
        {"block = \"GEMV_BLOCK\"\nargs = [\"y\"", "block = \"GEMV_BLOCK * 2\"\nargs = [\"y\"",
         "contracts/splitk_gemv.toml:66:10: error: variant GEMV_BLOCK=64 SPLIT_K=1: step 2 "
         "(splitk_reduce): block (128,1,1) has 128 threads; the kernel's __launch_bounds__ "
         "allow 64"},
        // What the PTX cannot tell (.u64 for every pointer and an 8-byte integer), the C++
        // declaration does.
        {"name = \"w\"\ntype = \"f32*\"", "name = \"w\"\ntype = \"bf16*\"",
         "contracts/splitk_gemv.toml:38:8: error: variant GEMV_BLOCK=64 SPLIT_K=1: step 1 "
         "(splitk_partial): argument 'w', bf16*, is parameter 2, which splitk_gemv.cu declares "
         "as 'const float *': the PTX keeps no element type"},
        {"name = \"x\"\ntype = \"f32*\"\ncount = \"cols\"",
         "name = \"x\"\ntype = \"u64\"\nvalue = \"cols\"",
         "contracts/splitk_gemv.toml:43:8: error: variant GEMV_BLOCK=64 SPLIT_K=1: step 1 "
         "(splitk_partial): argument 'x', u64, is parameter 3, which splitk_gemv.cu declares as "
         "'const float *': the kernel would read the number as an address"},
    };
    TempDir dir;
    copy_example(dir.path());
    // Blocks up to 512: a doubled block stays a valid launch and only the bound refuses it.
    edit(dir.path() / "sweeps/splitk_gemv.sweep.toml", "pow2 = [64, 1024]", "pow2 = [64, 512]");
    const std::string env = "KJIT_CACHE_DIR='" + (dir.path() / "cache").string() + "'";
    const Run ok = run_kjit_in(dir.path(), "sweep --dry-run sweeps/splitk_gemv.sweep.toml", env);
    INFO(ok.out);
    REQUIRE(ok.code == 0);
    const std::string contract = test::read_file(dir.path() / "contracts/splitk_gemv.toml");
    for (const auto& c : cases) {
        INFO(c.from << " -> " << c.to);
        test::write_file(dir.path() / "contracts/splitk_gemv.toml", contract);
        edit(dir.path() / "contracts/splitk_gemv.toml", c.from, c.to);
        const Run r = run_kjit_in(dir.path(), "sweep --dry-run sweeps/splitk_gemv.sweep.toml", env);
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK(contains(r.out, c.want));
        // kjit check without a GPU finds it too, in its check cases, at the same place.
        const Run check =
            run_kjit_in(dir.path(), "check", env + " KJIT_DRIVER_LIBRARY=/nonexistent");
        INFO(check.out);
        CHECK(check.code == 1);
        const std::string at = c.want.substr(0, c.want.find(" error: "));
        CHECK(contains(check.out, at + " error: case splitk_gemv "));
        const std::size_t step = c.want.find("): ", c.want.find(": step ")) + 3;
        const std::string problem = c.want.substr(step);
        CHECK(contains(check.out, problem.starts_with("block ") ? "the kernel's __launch_bounds__ allow"
                                                                : problem));
        CHECK_FALSE(contains(check.out, "launch plans: 0 problem(s)"));
    }
    // A point of the sweep's space the contract cannot launch: at the contract's expression,
    // with the variant and the sweep file that made it.
    test::write_file(dir.path() / "contracts/splitk_gemv.toml", contract);
    edit(dir.path() / "sweeps/splitk_gemv.sweep.toml", "pow2 = [64, 512]", "pow2 = [64, 2048]");
    const Run wide = run_kjit_in(dir.path(), "sweep --dry-run sweeps/splitk_gemv.sweep.toml", env);
    INFO(wide.out);
    CHECK(wide.code == 2);
    CHECK(contains(wide.out, "contracts/splitk_gemv.toml:60:10: error: variant GEMV_BLOCK=2048 "
                             "SPLIT_K=1 of sweeps/splitk_gemv.sweep.toml: splitk_gemv: block.x "
                             "'GEMV_BLOCK' = 2048 is not a valid launch dimension (1..1024) (the "
                             "sweep's 'constraints' can leave such points out)"));

    // An inline contract's mistake is at the sweep file's line.
    TempDir inl;
    std::filesystem::create_directories(inl.path() / "kernels");
    std::filesystem::copy(kExample / "kernels/row_softmax.cu", inl.path() / "kernels/row_softmax.cu");
    std::filesystem::copy(kExample / "kernels/reduce.cuh", inl.path() / "kernels/reduce.cuh");
    test::write_file(inl.path() / "kjit.toml", "kernels = \"kernels\"\n");
    test::write_file(inl.path() / "s.sweep.toml", R"(kernel = "row_softmax"
[shape]
rows = 4
cols = 100
[sweep]
SOFTMAX_BLOCK = [128, 256]
[launch]
entry = "row_softmax"
grid = "rows"
block = "SOFTMAX_BLOCK"
[[args]]
name = "y"
type = "f32*"
count = "rows * cols"
output = true
[[args]]
name = "x"
type = "f32*"
count = "rows * cols"
)");
    const Run missing = run_kjit_in(inl.path(), "sweep --dry-run s.sweep.toml", env);
    CHECK(missing.code == 2);
    CHECK(contains(missing.out, "s.sweep.toml:7:1: error: variant SOFTMAX_BLOCK=128: step 1 "
                                "(row_softmax): the kernel takes 3 parameters but 2 arguments "
                                "were passed"));
}

TEST_CASE("a sweep's tolerance check names a reference variant or an absolute bound") {
    register_example_contracts();
    const std::string head = "kernel = \"splitk_gemv\"\n[shape]\nrows = 64\ncols = 256\n"
                             "[sweep]\nSPLIT_K = [2, 4]\n[check]\nmode = \"tolerance\"\n";
    const SweepSpec named =
        SweepSpec::parse(head + "reference_variant = { SPLIT_K = 1 }\natol = 1e-4\n", "s.toml");
    CHECK(named.reference_variant == std::map<std::string, long long>{{"SPLIT_K", 1}});
    CHECK(named.atol == 1e-4);
    CHECK(named.reference.empty());
    // Without one: the contract's reference defines.
    CHECK(SweepSpec::parse(head, "s.toml").reference_variant ==
          std::map<std::string, long long>{{"SPLIT_K", 1}});
    CHECK_THROWS_WITH_AS(
        SweepSpec::parse(head + "reference_variant = { SPLITK = 1 }\n", "s.toml"),
        doctest::Contains("s.toml:9:23: error: reference_variant names 'SPLITK', which is no "
                          "define or launch parameter of splitk_gemv; did you mean SPLIT_K?"),
        ConfigError);
    // What only a tolerance check reads is refused in another mode: it would be ignored.
    const std::string digest = "kernel = \"splitk_gemv\"\n[shape]\nrows = 64\ncols = 256\n"
                               "[sweep]\nSPLIT_K = [2, 4]\n[check]\nmode = \"digest\"\n";
    CHECK_THROWS_WITH_AS(SweepSpec::parse(digest + "atol = 1e-4\n", "s.toml"),
                         doctest::Contains("s.toml:9:8: error: 'atol' is for mode = "
                                           "\"tolerance\"; this check is \"digest\""),
                         ConfigError);
    CHECK_THROWS_WITH_AS(SweepSpec::parse(head + "atol = -1.0\n", "s.toml"),
                         doctest::Contains("s.toml:9:8: error: 'atol' must be a finite number"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(
        SweepSpec::parse(head + "reference = \"rms_norm\"\nreference_variant = { SPLIT_K = 1 }\n",
                         "s.toml"),
        doctest::Contains("exclude each other"), ConfigError);

    // The reference variant is the baseline with its values over the baseline's.
    const std::vector<SweepVariant> variants = expand(named);
    const SweepVariant ref = reference_variant(named, variants.front());
    CHECK(ref.defines.at("SPLIT_K") == "1");
    CHECK(ref.plan.find_buffer("partial")->count == 64);
    CHECK(variants.front().plan.find_buffer("partial")->count == 128);
    CHECK(uses_reference_variant(named));
}

} // TEST_SUITE

TEST_SUITE("gpu") {

TEST_CASE("a local search walks the split-K space within its budget") {
    KJIT_REQUIRE_DEVICE();
    TempDir dir;
    copy_example(dir.path());
    test::write_file(dir.path() / "sweeps/splitk_gemv.sweep.toml",
                     test::read_file(dir.path() / "sweeps/splitk_gemv.sweep.toml") +
                         "\n[search]\nstrategy = \"local\"\nbudget = 10\nseed = 2\n");
    const std::string env = "KJIT_CACHE_DIR='" + (dir.path() / "cache").string() + "'";
    const Run r = run_kjit_in(dir.path(), "sweep sweeps/splitk_gemv.sweep.toml", env);
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "search local: 10 evaluated of 35 points"));
    CHECK(contains(r.out, "sweep: 10 variants, 0 failed their check"));
    CHECK(contains(r.out, "GEMV_BLOCK=256 SPLIT_K=4 *")); // the start: the baseline
}

TEST_CASE("the split-K sweep ranks split x block variants within tolerance of SPLIT_K = 1") {
    KJIT_REQUIRE_DEVICE();
    TempDir dir;
    copy_example(dir.path());
    const std::string env = "KJIT_CACHE_DIR='" + (dir.path() / "cache").string() + "'";
    const Run r = run_kjit_in(dir.path(), "sweep sweeps/splitk_gemv.sweep.toml --no-cache", env);
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "35 variants"));
    CHECK(contains(r.out, "sweep: 35 variants, 0 failed their check"));
    CHECK_FALSE(contains(r.out, "OUT OF TOLERANCE"));
    // SPLIT_K = 1 is the reference's own sum: no error at all.
    CHECK(contains(r.out, "within tolerance 0.00e+00"));
    // A bound no reordered sum meets: the check fails the variants that reorder.
    edit(dir.path() / "sweeps/splitk_gemv.sweep.toml", "rtol = 1e-5", "rtol = 1e-12");
    const Run tight = run_kjit_in(dir.path(), "sweep sweeps/splitk_gemv.sweep.toml --no-cache", env);
    INFO(tight.out);
    CHECK(tight.code == 1);
    CHECK(contains(tight.out, "OUT OF TOLERANCE"));
}


TEST_CASE("a contract file's check cases pass against its reference defines and differ from them") {
    KJIT_REQUIRE_DEVICE();
    register_example_contracts();
    TempDir cache;
    const Device device = Device::get(0);
    const Context ctx(device);
    EngineOptions options;
    options.cache.dir = cache.path();
    Engine engine(&ctx, options, SourceProvider(kExample / "kernels"));
    std::vector<CheckCase> cases;
    for (const CheckCase& c : default_check_cases())
        if (c.kernel == "splitk_gemv" || c.kernel == "row_softmax")
            cases.push_back(c);
    REQUIRE(cases.size() == 4);
    for (const auto& row : engine.prepare({}, check_specs(cases)))
        REQUIRE_FALSE(row.error);
    for (const CheckCase& c : cases) {
        const CheckResult r = run_check_case(engine, c, 7);
        CHECK(r.reference == defines_text(kernel_contract(c.kernel).reference_defines));
        for (const OutputCheck& o : r.outputs) {
            INFO(r.entry << "/" << o.name << " " << r.shape << " " << r.defines);
            CHECK(o.unwritten == 0);
            CHECK(o.error <= o.tolerance);
            // Another sum order: the comparison sees a difference, so it compares two runs.
            CHECK(o.error > 0);
        }
    }
}

TEST_CASE("kjit digest records and checks a contract file's pipeline") {
    KJIT_REQUIRE_DEVICE();
    TempDir dir;
    copy_example(dir.path());
    const std::string env = "KJIT_CACHE_DIR='" + (dir.path() / "cache").string() + "'";
    const Run record = run_kjit_in(dir.path(), "digest record splitk_gemv", env);
    INFO(record.out);
    REQUIRE(record.code == 0);
    CHECK(std::filesystem::exists(dir.path() / "baselines/splitk_gemv.toml"));
    const Run check = run_kjit_in(dir.path(), "digest check splitk_gemv", env);
    INFO(check.out);
    CHECK(check.code == 0);
    CHECK(contains(check.out, "IDENTICAL"));
    // The bench times both launches as one pipeline, with the contract's bytes.
    const Run bench = run_kjit_in(dir.path(), "bench splitk_gemv --reps 5", env);
    INFO(bench.out);
    CHECK(bench.code == 0);
    CHECK(contains(bench.out, "launch: splitk_partial + splitk_reduce"));
    // Two split factors in one A B B A run: each arm sizes its own workspace.
    const Run abba =
        run_kjit_in(dir.path(), "bench splitk_gemv --reps 3 --pairs 1 --vs SPLIT_K=8", env);
    INFO(abba.out);
    CHECK(abba.code == 0);
    CHECK(contains(abba.out, "SPLIT_K=8"));
    // A buffer of another element type for a const float*: a .u64 the launch checks pass; each
    // verb reads the C++ declaration before it launches anything.
    edit(dir.path() / "contracts/splitk_gemv.toml", "name = \"w\"\ntype = \"f32*\"",
         "name = \"w\"\ntype = \"bf16*\"");
    for (const std::string verb :
         {"digest record splitk_gemv --baseline other.toml", "digest check splitk_gemv",
          "bench splitk_gemv --reps 3", "bench splitk_gemv --reps 3 --pairs 1 --vs SPLIT_K=8"}) {
        const Run typed = run_kjit_in(dir.path(), verb, env);
        INFO(verb << "\n" << typed.out);
        CHECK(typed.code == 2);
        CHECK(contains(typed.out, "contracts/splitk_gemv.toml:38:8: error: splitk_gemv/"));
        CHECK(contains(typed.out, "f32: step 1 (splitk_partial): argument 'w', bf16*, is "
                                  "parameter 2, which splitk_gemv.cu declares as 'const float *'"));
        CHECK_FALSE(contains(typed.out, "IDENTICAL"));
        CHECK_FALSE(contains(typed.out, "stats:"));
    }
    CHECK_FALSE(std::filesystem::exists(dir.path() / "other.toml"));
}

} // TEST_SUITE
