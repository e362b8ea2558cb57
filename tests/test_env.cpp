#include "core/flags.hpp"

#include "tests/flag_fixtures.hpp"
#include "tests/support.hpp"

#include "tests/doctest.hpp"

#include <fstream>
#include <map>
#include <sstream>

namespace {
using kjit::test::contains;
using kjit::test::kMamba;
using kjit::test::mamba;
using kjit::test::Run;
using kjit::test::run_shell;
using kjit::Environment;
using kjit::FlagRegistry;

const std::string& kFixtures = kjit::test::kFlagFixtures;

/// `kjit ARGS` in an environment holding only PATH and `env` (NAME=VALUE ...).
kjit::test::Run run_clean(const std::string& args, const std::string& env = {}) {
    return kjit::test::run_shell("env -i PATH=/usr/bin:/bin " + env + " " + KJIT_BINARY + " " +
                                 args);
}
} // namespace

TEST_SUITE("env") {

TEST_CASE("kjit env lists every declared flag with its value and source") {
    const Run r = run_clean("env --flags " + kMamba, "KJIT_LEDGER=on MAMBA_RS_T_SPLIT=32");
    INFO(r.out);
    CHECK(r.code == 0);
    std::istringstream lines(r.out);
    std::map<std::string, std::string> row;
    for (std::string line; std::getline(lines, line);)
        row[line.substr(0, line.find(' '))] = line;
    REQUIRE(row.contains("flag"));
    CHECK(contains(row["flag"], "value"));
    CHECK(contains(row["flag"], "source"));
    CHECK(contains(row["KJIT_LEDGER"], " true "));
    CHECK(contains(row["KJIT_LEDGER"], " env "));
    CHECK(contains(row["KJIT_LEDGER"], "record every launch"));
    CHECK(contains(row["KJIT_NO_CACHE"], " false "));
    CHECK(contains(row["KJIT_NO_CACHE"], " default "));
    CHECK(contains(row["KJIT_COMPILE_JOBS"], "int 0..1024"));
    CHECK(contains(row["KJIT_CACHE_DIR"], "(empty)"));
    CHECK(contains(row["MAMBA_RS_T_SPLIT"], " 32 "));
    CHECK(contains(row["MAMBA_RS_BATCH_INVARIANT_TC"], "requires MAMBA_RS_BATCH_INVARIANT"));
    CHECK(contains(row["MAMBA_RS_SCAN"], "enum exact|fast"));
    const FlagRegistry registry = mamba();
    for (const auto& f : registry.flags())
        CHECK(row.contains(f.name));
    CHECK(contains(r.out, "\ntier=base\n"));
}

TEST_CASE("kjit env exits 1 on environment errors and names each") {
    const Run r = run_clean("env --flags " + kMamba,
                           "MAMBA_RS_BI_TENSOR_CORES=1 KJIT_COMPILE_JOBS=lots");
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(contains(r.out, "kjit: error: MAMBA_RS_BI_TENSOR_CORES is not a declared flag; did you "
                          "mean MAMBA_RS_BATCH_INVARIANT_TC?\n"));
    CHECK(contains(r.out, "kjit: error: KJIT_COMPILE_JOBS=lots is not an integer; accepted "
                          "values: integers 0..1024\n"));
    const Run t = run_clean("env", "KJIT_LEDGR=1");
    CHECK(t.code == 1);
    CHECK(contains(t.out, "did you mean KJIT_LEDGER?"));
}

TEST_CASE("a KJIT_* value the registry refuses stops a verb at start with the registry's text") {
    Run r = run_clean("compile rms_norm", "KJIT_CACHE_MAX_BYTES=5");
    CHECK(r.code == 2);
    CHECK(r.out == "kjit: error: KJIT_CACHE_MAX_BYTES=5 is out of range; accepted values: "
                   "integers >= 1048576\n");
    r = run_clean("compile rms_norm", "KJIT_CACHE_MAX_BYTES=1GiB");
    CHECK(r.code == 2);
    CHECK(r.out == "kjit: error: KJIT_CACHE_MAX_BYTES=1GiB is not an integer; accepted values: "
                   "integers >= 1048576\n");
    r = run_clean("compile rms_norm", "KJIT_COMPILE_JOBS=-2");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "kjit: error: KJIT_COMPILE_JOBS=-2 is out of range"));
}

TEST_CASE("kjit env with a broken flags file exits 2 at file:line:col") {
    const Run r = run_clean("env --flags " + kFixtures + "unknown_key.toml");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(contains(r.out, kFixtures + "unknown_key.toml:6:1: error: unknown key 'defualt'"));
    CHECK(run_clean("env --flags /nonexistent/flags.toml").code == 2);
}

TEST_CASE("kjit env --restore output applied to the environment gives the all-default tier") {
    const std::string set = "MAMBA_RS_BATCH_INVARIANT=1 MAMBA_RS_BATCH_INVARIANT_TC=yes "
                            "MAMBA_RS_SCAN=fast KJIT_LEDGER=1 MAMBA_RS_BI_TENSOR_CORES=1";
    const Run before = run_clean("env --flags " + kMamba,
                                "MAMBA_RS_BATCH_INVARIANT=1 MAMBA_RS_BATCH_INVARIANT_TC=yes "
                                "MAMBA_RS_SCAN=fast");
    CHECK(contains(before.out, "tier=bi+tc+fastscan"));

    const Run restore = run_clean("env --restore --flags " + kMamba, set);
    INFO(restore.out);
    CHECK(restore.code == 0);
    CHECK(restore.out == "unset KJIT_LEDGER\nunset MAMBA_RS_BATCH_INVARIANT\n"
                         "unset MAMBA_RS_BATCH_INVARIANT_TC\nunset MAMBA_RS_BI_TENSOR_CORES\n"
                         "unset MAMBA_RS_SCAN\n");

    // Through a shell, as a user would: eval "$(kjit env --restore)".
    const std::string kjit = std::string(KJIT_BINARY) + " env --flags " + kMamba;
    const Run after = run_shell("env -i PATH=/usr/bin:/bin " + set + " sh -c 'eval \"$(" + kjit +
                                " --restore)\"; " + kjit + "'");
    INFO(after.out);
    CHECK(after.code == 0);
    CHECK(contains(after.out, "\ntier=base\n"));
    CHECK_FALSE(contains(after.out, " env "));

    // And through env -u, in process.
    Environment env{{"MAMBA_RS_BATCH_INVARIANT", "1"},
                    {"MAMBA_RS_BATCH_INVARIANT_TC", "1"},
                    {"MAMBA_RS_SCAN", "fast"},
                    {"HOME", "/root"}};
    const FlagRegistry r = mamba();
    std::string env_u;
    for (const auto& name : r.restore_set(env))
        env_u += " -u " + name;
    const Run via_env_u = run_shell("env -i PATH=/usr/bin:/bin " + set + " env" + env_u +
                                    " -u KJIT_LEDGER -u MAMBA_RS_BI_TENSOR_CORES " + kjit);
    CHECK(contains(via_env_u.out, "\ntier=base\n"));
    for (const auto& name : r.restore_set(env))
        env.erase(name);
    CHECK(r.resolve(env).tier() == "base");
}

TEST_CASE("kjit env --markdown prints the declared flags as a table") {
    const Run r = run_clean("env --markdown --flags " + kMamba);
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "| flag | type | default | what it does |\n|---|---|---|---|\n"));
    CHECK(contains(r.out, "| `KJIT_NO_CACHE` | bool | `false` | "));
    CHECK(contains(r.out, "| `KJIT_COMPILE_JOBS` | int 0..1024 | `0` | "));
    CHECK(contains(r.out, "requires `MAMBA_RS_BATCH_INVARIANT`; compiles with `-DMAMBA_BI_TC`"));
}

TEST_CASE("the README's flag table is what kjit env --markdown prints") {
    const Run r = run_clean("env --markdown");
    REQUIRE(r.code == 0);
    std::ifstream in(KJIT_SOURCE_DIR "/README.md");
    std::stringstream readme;
    readme << in.rdbuf();
    CHECK(contains(readme.str(), r.out));
}

} // TEST_SUITE
