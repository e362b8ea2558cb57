#include "core/flags.hpp"

#include "jit/compile_options.hpp"
#include "jit/compile_pool.hpp"
#include "jit/disk_cache.hpp"
#include "jit/source_provider.hpp"
#include "tests/flag_fixtures.hpp"
#include "tests/support.hpp"

#include "tests/doctest.hpp"

#include <algorithm>
#include <array>
#include <sstream>

namespace {
using kjit::test::contains;
using kjit::test::kMamba;
using kjit::test::mamba;
using kjit::Environment;
using kjit::FlagError;
using kjit::FlagRegistry;
using kjit::FlagSource;
using kjit::FlagSpec;
using kjit::FlagType;

const std::string& kFixtures = kjit::test::kFlagFixtures;

/// The messages of the FlagError `registry.resolve(env)` throws (none when it resolves).
std::vector<std::string> errors_of(const FlagRegistry& registry, const Environment& env) {
    try {
        (void)registry.resolve(env);
    } catch (const FlagError& e) {
        std::vector<std::string> out;
        for (const auto& d : e.diagnostics)
            out.push_back(d.message);
        return out;
    }
    return {};
}

/// The single error message of resolving `env` (fails the test when there is not exactly one).
std::string error_of(const FlagRegistry& registry, const Environment& env) {
    const auto errors = errors_of(registry, env);
    REQUIRE(errors.size() == 1);
    return errors[0];
}

/// The ConfigError text of loading `file` into the builtin registry.
std::string toml_error(const std::string& file) {
    FlagRegistry r = kjit::builtin_flags();
    try {
        r.load_toml(kFixtures + file);
    } catch (const kjit::ConfigError& e) {
        return e.what();
    }
    FAIL("no error loading " << file);
    return {};
}
} // namespace

TEST_SUITE("env") {

TEST_CASE("kjit's own flags resolve to their defaults in an empty environment") {
    const auto flags = kjit::builtin_flags().resolve(Environment{});
    CHECK(flags.get_string(kjit::kFlagDriverLibrary) == "libcuda.so.1");
    CHECK(flags.get_string(kjit::kFlagCacheDir).empty());
    CHECK(flags.get_int(kjit::kFlagCacheMaxBytes) == 1073741824);
    CHECK(flags.get_int(kjit::kFlagCompileJobs) == 0);
    CHECK(flags.get_string(kjit::kFlagKernelDir).empty());
    CHECK_FALSE(flags.get_bool(kjit::kFlagLedger));
    CHECK_FALSE(flags.get_bool(kjit::kFlagNoCache));
    CHECK(flags.source(kjit::kFlagNoCache) == FlagSource::default_value);
    CHECK(flags.tier() == "base");
    CHECK(flags.defines().empty());
    CHECK(flags.restore_set().empty());
    CHECK(flags.warnings().empty());
}

TEST_CASE("values from the environment are parsed and their source recorded") {
    const auto flags = kjit::builtin_flags().resolve(
        {{"KJIT_NO_CACHE", "Yes"}, {"KJIT_COMPILE_JOBS", "8"}, {"KJIT_CACHE_DIR", "/tmp/c"},
         {"PATH", "/bin"}, {"KJITX", "outside every prefix"}});
    CHECK(flags.get_bool(kjit::kFlagNoCache));
    CHECK(flags.source(kjit::kFlagNoCache) == FlagSource::environment);
    CHECK(flags.get_int(kjit::kFlagCompileJobs) == 8);
    CHECK(flags.get_string(kjit::kFlagCacheDir) == "/tmp/c");
    CHECK(flags.source(kjit::kFlagLedger) == FlagSource::default_value);
    CHECK(flags.restore_set() ==
          std::vector<std::string>{"KJIT_CACHE_DIR", "KJIT_COMPILE_JOBS", "KJIT_NO_CACHE"});
}

TEST_CASE("a typo under a registered prefix names the nearest declared flag") {
    const FlagRegistry r = mamba();
    CHECK(error_of(r, {{"MAMBA_RS_BI_TENSOR_CORES", "1"}}) ==
          "MAMBA_RS_BI_TENSOR_CORES is not a declared flag; did you mean "
          "MAMBA_RS_BATCH_INVARIANT_TC?");
    CHECK(error_of(r, {{"MAMBA_RS_BATCH_INVARIANT_T", "1"}}) ==
          "MAMBA_RS_BATCH_INVARIANT_T is not a declared flag; did you mean "
          "MAMBA_RS_BATCH_INVARIANT_TC?");
    CHECK(error_of(r, {{"KJIT_NO_CACH", "1"}}) ==
          "KJIT_NO_CACH is not a declared flag; did you mean KJIT_NO_CACHE?");
    CHECK(error_of(r, {{"KJIT_CHACE_DIR", "/tmp"}}) ==
          "KJIT_CHACE_DIR is not a declared flag; did you mean KJIT_CACHE_DIR?");
    // Names are case-sensitive, but a lower-case spelling is caught and pointed home.
    CHECK(error_of(r, {{"kjit_ledger", "1"}}) ==
          "kjit_ledger is not a declared flag; did you mean KJIT_LEDGER?");
}

TEST_CASE("an unknown flag under a registered prefix is an error even when nothing is close") {
    const FlagRegistry r = mamba();
    CHECK(error_of(r, {{"MAMBA_RS_ZZZZZZZZZZZZ", "1"}}) ==
          "MAMBA_RS_ZZZZZZZZZZZZ is not a declared flag (declared under MAMBA_RS_: "
          "MAMBA_RS_BATCH_INVARIANT, MAMBA_RS_BATCH_INVARIANT_TC, MAMBA_RS_T_SPLIT, "
          "MAMBA_RS_SCAN)");
    CHECK(errors_of(r, {{"MAMBA_RSX", "1"}, {"MAMBA", "1"}, {"HOME", "/root"}}).empty());
    FlagRegistry only_prefix;
    only_prefix.add_prefix("APP_");
    CHECK(error_of(only_prefix, {{"APP_X", "1"}}) ==
          "APP_X is not a declared flag (no flags are declared under APP_)");
}

TEST_CASE("an application may make unknown flags under its prefix a warning") {
    FlagRegistry r = mamba();
    r.add_prefix("MAMBA_RS_", kjit::Severity::warning);
    const auto flags = r.resolve({{"MAMBA_RS_BI_TENSOR_CORES", "1"}});
    REQUIRE(flags.warnings().size() == 1);
    CHECK(flags.warnings()[0].severity == kjit::Severity::warning);
    CHECK(contains(flags.warnings()[0].message, "did you mean MAMBA_RS_BATCH_INVARIANT_TC?"));
    CHECK(flags.tier() == "base");
    // kjit's own prefix stays strict.
    CHECK(errors_of(r, {{"KJIT_LEDGR", "1"}}).size() == 1);
}

TEST_CASE("bad bool values name the accepted values") {
    const FlagRegistry r = kjit::builtin_flags();
    for (const char* bad : {"maybe", "", "2", "enabled"})
        CHECK(error_of(r, {{"KJIT_LEDGER", bad}}) ==
              "KJIT_LEDGER=" + std::string(bad) +
                  " is not a boolean; accepted values: 1, 0, true, false, on, off, yes, no");
    for (const char* good : {"1", "TRUE", "on", "Yes"})
        CHECK(r.resolve({{"KJIT_LEDGER", good}}).get_bool(kjit::kFlagLedger));
    for (const char* good : {"0", "False", "OFF", "no"})
        CHECK_FALSE(r.resolve({{"KJIT_LEDGER", good}}).get_bool(kjit::kFlagLedger));
}

TEST_CASE("bad int values name the accepted range") {
    const FlagRegistry r = kjit::builtin_flags();
    CHECK(error_of(r, {{"KJIT_COMPILE_JOBS", "many"}}) ==
          "KJIT_COMPILE_JOBS=many is not an integer; accepted values: integers 0..1024");
    CHECK(error_of(r, {{"KJIT_COMPILE_JOBS", "8x"}}) ==
          "KJIT_COMPILE_JOBS=8x is not an integer; accepted values: integers 0..1024");
    CHECK(error_of(r, {{"KJIT_COMPILE_JOBS", "2000"}}) ==
          "KJIT_COMPILE_JOBS=2000 is out of range; accepted values: integers 0..1024");
    CHECK(error_of(r, {{"KJIT_COMPILE_JOBS", "-1"}}) ==
          "KJIT_COMPILE_JOBS=-1 is out of range; accepted values: integers 0..1024");
    CHECK(error_of(r, {{"KJIT_CACHE_MAX_BYTES", "1000"}}) ==
          "KJIT_CACHE_MAX_BYTES=1000 is out of range; accepted values: integers >= 1048576");
    CHECK(error_of(r, {{"KJIT_CACHE_MAX_BYTES", "99999999999999999999"}}) ==
          "KJIT_CACHE_MAX_BYTES=99999999999999999999 is out of range; accepted values: "
          "integers >= 1048576");
    CHECK(r.resolve({{"KJIT_COMPILE_JOBS", "1024"}}).get_int(kjit::kFlagCompileJobs) == 1024);
}

TEST_CASE("bad enum values name the accepted choices") {
    const FlagRegistry r = mamba();
    CHECK(error_of(r, {{"MAMBA_RS_SCAN", "fats"}}) ==
          "MAMBA_RS_SCAN=fats is not an accepted value; accepted values: exact, fast; did you "
          "mean fast?");
    CHECK(error_of(r, {{"MAMBA_RS_SCAN", "turbo"}}) ==
          "MAMBA_RS_SCAN=turbo is not an accepted value; accepted values: exact, fast");
    CHECK(r.resolve({{"MAMBA_RS_SCAN", "FAST"}}).get_string("MAMBA_RS_SCAN") == "fast");
}

TEST_CASE("a flag set without a flag it requires is an error naming the missing one") {
    const FlagRegistry r = mamba();
    CHECK(error_of(r, {{"MAMBA_RS_BATCH_INVARIANT_TC", "1"}}) ==
          "MAMBA_RS_BATCH_INVARIANT_TC requires MAMBA_RS_BATCH_INVARIANT, which is not set");
    CHECK(error_of(r, {{"MAMBA_RS_BATCH_INVARIANT_TC", "1"}, {"MAMBA_RS_BATCH_INVARIANT", "0"}}) ==
          "MAMBA_RS_BATCH_INVARIANT_TC requires MAMBA_RS_BATCH_INVARIANT, which is set to '0'");
    // A boolean set to false is off and requires nothing.
    CHECK(errors_of(r, {{"MAMBA_RS_BATCH_INVARIANT_TC", "off"}}).empty());
}

TEST_CASE("every problem in the environment is reported at once") {
    const FlagRegistry r = mamba();
    const Environment env{{"MAMBA_RS_BI_TENSOR_CORES", "1"},
                          {"KJIT_LEDGER", "maybe"},
                          {"MAMBA_RS_BATCH_INVARIANT_TC", "1"}};
    const auto errors = errors_of(r, env);
    REQUIRE(errors.size() == 3);
    CHECK(contains(errors[0], "MAMBA_RS_BI_TENSOR_CORES is not a declared flag"));
    CHECK(contains(errors[1], "KJIT_LEDGER=maybe is not a boolean"));
    CHECK(contains(errors[2], "requires MAMBA_RS_BATCH_INVARIANT, which is not set"));
    try {
        (void)r.resolve(env);
    } catch (const kjit::ConfigError& e) {
        CHECK(contains(e.what(), "3 error(s) in the environment flags:"));
        CHECK(contains(e.what(), "\n  error: KJIT_LEDGER=maybe is not a boolean"));
    }
}

TEST_CASE("tier strings for each combination of the tier flags") {
    const FlagRegistry r = mamba();
    struct Case {
        Environment env;
        std::string tier;
    };
    const std::vector<Case> cases{
        {{}, "base"},
        {{{"MAMBA_RS_BATCH_INVARIANT", "1"}}, "bi"},
        {{{"MAMBA_RS_BATCH_INVARIANT", "1"}, {"MAMBA_RS_BATCH_INVARIANT_TC", "1"}}, "bi+tc"},
        {{{"MAMBA_RS_BATCH_INVARIANT", "1"}, {"MAMBA_RS_BATCH_INVARIANT_TC", "0"}}, "bi"},
        {{{"MAMBA_RS_BATCH_INVARIANT", "0"}}, "base"},
        {{{"MAMBA_RS_SCAN", "fast"}}, "fastscan"},
        {{{"MAMBA_RS_SCAN", "exact"}}, "base"},
        {{{"MAMBA_RS_BATCH_INVARIANT", "yes"}, {"MAMBA_RS_SCAN", "fast"}}, "bi+fastscan"},
        {{{"MAMBA_RS_BATCH_INVARIANT", "on"},
          {"MAMBA_RS_BATCH_INVARIANT_TC", "true"},
          {"MAMBA_RS_SCAN", "fast"}},
         "bi+tc+fastscan"},
        {{{"MAMBA_RS_T_SPLIT", "32"}}, "base"},
    };
    for (const auto& c : cases) {
        INFO("expected tier " << c.tier);
        CHECK(r.resolve(c.env).tier() == c.tier);
    }
    // The tier-only-TC combination is refused before it can produce a reading.
    CHECK(errors_of(r, {{"MAMBA_RS_BATCH_INVARIANT_TC", "1"}}).size() == 1);

    FlagRegistry named = r;
    named.set_tier_default("prod");
    CHECK(named.resolve({}).tier() == "prod");
}

TEST_CASE("a flag with a define changes the compile options") {
    const FlagRegistry r = mamba();
    const auto before = r.resolve({});
    const auto after =
        r.resolve({{"MAMBA_RS_BATCH_INVARIANT", "1"}, {"MAMBA_RS_T_SPLIT", "32"}});
    CHECK(before.defines() == std::map<std::string, std::string>{
                                  {"MAMBA_BATCH_INVARIANT", "0"}, {"MAMBA_BI_TC", "0"},
                                  {"T_SPLIT", "16"}});
    CHECK(after.defines() == std::map<std::string, std::string>{
                                 {"MAMBA_BATCH_INVARIANT", "1"}, {"MAMBA_BI_TC", "0"},
                                 {"T_SPLIT", "32"}});

    kjit::CompileOptions a, b;
    a.defines["RMS_BLOCK"] = "1024";
    b.defines["RMS_BLOCK"] = "1024";
    before.apply_to(a.defines);
    after.apply_to(b.defines);
    CHECK(a.defines.at("RMS_BLOCK") == "1024");
    CHECK(a.defines.at("MAMBA_BATCH_INVARIANT") == "0");
    CHECK(b.defines.at("MAMBA_BATCH_INVARIANT") == "1");
    CHECK(a.argv() != b.argv());
    const auto argv = b.argv();
    CHECK(std::find(argv.begin(), argv.end(), "-DMAMBA_BATCH_INVARIANT=1") != argv.end());
    CHECK(std::find(argv.begin(), argv.end(), "-DT_SPLIT=32") != argv.end());

    kjit::CompileOptions clash;
    clash.defines["T_SPLIT"] = "8";
    CHECK_THROWS_WITH_AS(after.apply_to(clash.defines),
                         "error: define T_SPLIT=32 from an environment flag conflicts with "
                         "T_SPLIT=8 already in the compile options",
                         kjit::ConfigError);
}

TEST_CASE("typed getters check the name and the type") {
    const auto flags = mamba().resolve({});
    CHECK(flags.get_int("MAMBA_RS_T_SPLIT") == 16);
    CHECK(flags.get_string("MAMBA_RS_SCAN") == "exact");
    CHECK_THROWS_AS((void)flags.get_bool("MAMBA_RS_NOPE"), kjit::NotFoundError);
    CHECK_THROWS_WITH_AS((void)flags.get_bool("MAMBA_RS_T_SPLIT"),
                         "error: environment flag MAMBA_RS_T_SPLIT is a int, not a bool",
                         kjit::ConfigError);
}

TEST_CASE("declarations with mistakes are refused") {
    FlagRegistry r = kjit::builtin_flags();
    auto spec = [](std::string name, FlagType type, std::string def = {}) {
        FlagSpec s;
        s.name = std::move(name);
        s.type = type;
        s.default_value = std::move(def);
        return s;
    };
    CHECK_THROWS_WITH_AS(r.declare(spec("APP_X", FlagType::boolean)),
                         "error: flag APP_X is not under a registered prefix (registered: KJIT_)",
                         kjit::ConfigError);
    CHECK_THROWS_WITH_AS(r.declare(spec("KJIT_LEDGER", FlagType::boolean)),
                         "error: flag KJIT_LEDGER is declared twice", kjit::ConfigError);
    CHECK_THROWS_WITH_AS(r.declare(spec("KJIT_Lower", FlagType::boolean)),
                         "error: flag name 'KJIT_Lower' must be upper-case letters, digits and '_'",
                         kjit::ConfigError);
    CHECK_THROWS_WITH_AS(r.declare(spec("KJIT_X", FlagType::boolean, "perhaps")),
                         "error: default 'perhaps' of flag KJIT_X is not a boolean; accepted "
                         "values: 1, 0, true, false, on, off, yes, no",
                         kjit::ConfigError);
    FlagSpec e = spec("KJIT_MODE", FlagType::enumeration, "c");
    e.choices = {"a", "b"};
    CHECK_THROWS_WITH_AS(r.declare(e),
                         "error: default 'c' of flag KJIT_MODE is not an accepted value; "
                         "accepted values: a, b",
                         kjit::ConfigError);
    e.default_value.clear();
    r.declare(e);
    CHECK(r.find("KJIT_MODE")->default_value == "a");
    FlagSpec d = spec("KJIT_D", FlagType::integer);
    d.define = "9D";
    CHECK_THROWS_WITH_AS(r.declare(d), "error: define '9D' of flag KJIT_D is not a C identifier",
                         kjit::ConfigError);
    FlagSpec q = spec("KJIT_Q", FlagType::boolean);
    q.requires_ = {"KJIT_NOT_DECLARED"};
    r.declare(q);
    CHECK_THROWS_WITH_AS((void)r.resolve(Environment{}),
                         "error: flag KJIT_Q requires KJIT_NOT_DECLARED, which is not a declared "
                         "flag",
                         kjit::ConfigError);
    CHECK_THROWS_WITH_AS(r.add_tier_rule({"KJIT_MODE", "z", "zz"}),
                         "error: tier value 'z' of flag KJIT_MODE is not an accepted value; "
                         "accepted values: a, b",
                         kjit::ConfigError);
}

TEST_CASE("a flags file with a mistake is reported at file:line:col") {
    CHECK(toml_error("unknown_key.toml") ==
          kFixtures +
              "unknown_key.toml:6:1: error: unknown key 'defualt' in [[flag]]; did you mean "
              "'default'?");
    CHECK(contains(toml_error("bad_syntax.toml"), kFixtures + "bad_syntax.toml:4:"));
    CHECK(toml_error("bad_default.toml") ==
          kFixtures + "bad_default.toml:8:11: error: default '128' of flag APP_SPLIT is out of "
                      "range; accepted values: integers 1..64");
    CHECK(toml_error("bad_requires.toml") ==
          kFixtures + "bad_requires.toml:10:13: error: flag APP_TOP requires 'APP_BSAE', which "
                      "is not a declared flag; did you mean APP_BASE?");

    FlagRegistry r = kjit::builtin_flags();
    CHECK_THROWS_AS(r.load_toml(kFixtures + "bad_default.toml"), kjit::ConfigError);
    CHECK(r.prefixes().size() == 1); // a file with a mistake changes nothing
    CHECK_THROWS_WITH_AS(r.load_toml(kFixtures + "missing.toml"),
                         (kFixtures + "missing.toml: error: cannot read flags file: No such "
                                      "file or directory")
                             .c_str(),
                         kjit::ConfigError);
    CHECK_THROWS_WITH_AS(r.load_toml_text("prefix = \"APP_\"\n[[flag]]\nname = \"APP_X\"\n"
                                          "type = \"float\"\n",
                                          "inline.toml"),
                         "inline.toml:4:8: error: type 'float' is not one of bool, int, enum, "
                         "string",
                         kjit::ConfigError);
    CHECK_THROWS_WITH_AS(r.load_toml_text("prefix = \"APP_\"\n[[flag]]\nname = \"APP_X\"\n"
                                          "type = \"int\"\ndefault = \"4\"\n",
                                          "inline.toml"),
                         "inline.toml:5:11: error: default of int flag APP_X must be an integer",
                         kjit::ConfigError);
    CHECK_THROWS_WITH_AS(r.load_toml_text("prefix = \"APP_\"\n[[tier]]\nflag = \"APP_Y\"\n"
                                          "tag = \"y\"\n",
                                          "inline.toml"),
                         "inline.toml:3:8: error: tier rule names 'APP_Y', which is not a "
                         "declared flag",
                         kjit::ConfigError);
}

TEST_CASE("the disk cache and the compile pool and the source provider read KJIT_* through the "
          "registry") {
    const FlagRegistry r = kjit::builtin_flags();
    const auto set = r.resolve({{"KJIT_CACHE_DIR", "/tmp/kjit-c"},
                                {"KJIT_CACHE_MAX_BYTES", "2097152"},
                                {"KJIT_COMPILE_JOBS", "3"},
                                {"KJIT_KERNEL_DIR", "/tmp/kjit-k"}});
    CHECK(kjit::DiskCache::default_dir(set) == "/tmp/kjit-c");
    CHECK(kjit::DiskCache::default_max_bytes(set) == 2097152);
    CHECK(kjit::default_compile_jobs(set) == 3);
    CHECK(kjit::SourceProvider::from_environment(set).override_dir() == "/tmp/kjit-k");

    const auto defaults = r.resolve({});
    CHECK(kjit::DiskCache::default_max_bytes(defaults) == kjit::kDefaultCacheMaxBytes);
    CHECK(kjit::default_compile_jobs(defaults) >= 1);
    CHECK(kjit::SourceProvider::from_environment(defaults).override_dir().empty());
    // What the disk cache once took silently (any n > 0, or ignored when unparsable) is refused.
    CHECK_THROWS_AS((void)r.resolve({{"KJIT_CACHE_MAX_BYTES", "5"}}), FlagError);
    CHECK_THROWS_AS((void)r.resolve({{"KJIT_CACHE_MAX_BYTES", "lots"}}), FlagError);
}

} // TEST_SUITE
