#include "core/diagnostic.hpp"
#include "core/error.hpp"
#include "core/names.hpp"
#include "core/text_file.hpp"
#include "core/toml.hpp"
#include "core/warnings.hpp"
#include "tests/support.hpp"

#include "tests/doctest.hpp"

#include <sys/stat.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

using namespace kjit;

namespace {

/// The what() of the ConfigError `f` throws, or "(no error)".
template <class F> std::string config_error(F&& f) {
    try {
        f();
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "(no error)";
}

TomlDocument doc(const std::string& text) {
    return TomlDocument::parse(text, "t.toml");
}

/// Captures every warning while alive; restores the previous sink after.
struct CapturedWarnings {
    std::mutex mutex;
    std::vector<Diagnostic> seen;
    DiagnosticSink previous = set_warning_sink([this](const Diagnostic& d) {
        std::lock_guard lock(mutex);
        seen.push_back(d);
    });
    ~CapturedWarnings() { set_warning_sink(previous); }
};

} // namespace

TEST_SUITE("core") {

TEST_CASE("a diagnostic prints as path:line:col: severity: message [rule]") {
    CHECK(Diagnostic{"k.cu", 4, 5, Severity::error, "expected a \";\"", {}}.format() ==
          "k.cu:4:5: error: expected a \";\"");
    CHECK(Diagnostic{"k.cu", 8, 0, Severity::warning, "unused", {}}.format() ==
          "k.cu:8: warning: unused");
    CHECK(Diagnostic{"k.cu", 8, 5, Severity::error, "cut #define", "KJ001"}.format() ==
          "k.cu:8:5: error: cut #define [KJ001]");
    CHECK(Diagnostic{"", 0, 0, Severity::note, "just so you know", {}}.format() ==
          "note: just so you know");
    CHECK(Diagnostic{"model.toml", 0, 0, Severity::error, "cannot read", {}}.format() ==
          "model.toml: error: cannot read");
    CHECK(Severity::note < Severity::warning);
    CHECK(Severity::warning < Severity::error);
    CHECK(severity_name(Severity::note) == "note");
}

TEST_CASE("a ConfigError reads like a diagnostic and gives one back") {
    const ConfigError e("unknown key 'x'", SourceLocation{"a.toml", 3, 7});
    CHECK(std::string(e.what()) == "a.toml:3:7: error: unknown key 'x'");
    CHECK(e.diagnostic() == Diagnostic{"a.toml", 3, 7, Severity::error, "unknown key 'x'", {}});
    CHECK(std::string(ConfigError("bad").what()) == "error: bad");
}

TEST_CASE("names: edit distance and the nearest names and one did-you-mean") {
    CHECK(edit_distance("kernal", "kernel") == 1);
    CHECK(edit_distance("", "abc") == 3);
    CHECK(nearest("sorce", {"name", "source", "defines"}) == std::vector<std::string>{"source"});
    CHECK(nearest("zzz", {"name", "source"}).empty());
    // Case-insensitive; a shared prefix is not compared; initials stand for words.
    CHECK(nearest("kjit_ledger", {"KJIT_LEDGER", "KJIT_NO_CACHE"}, 5) ==
          std::vector<std::string>{"KJIT_LEDGER"});
    CHECK(nearest("APP_BI_TC", {"APP_BATCH_INVARIANT_TC", "APP_SCAN"}, 4) ==
          std::vector<std::string>{"APP_BATCH_INVARIANT_TC"});
    CHECK(nearest("ab", {"ac", "ad"}) == std::vector<std::string>{"ac", "ad"});
    CHECK(did_you_mean({}).empty());
    CHECK(did_you_mean({"a"}) == "; did you mean a?");
    CHECK(did_you_mean({"a", "b"}) == "; did you mean a or b?");
    CHECK(did_you_mean({"a", "b", "c"}) == "; did you mean a, b or c?");
}

TEST_CASE("warnings go to the installed sink that set_warning_sink swaps") {
    CapturedWarnings w;
    warn("disk cache disabled");
    warn(Diagnostic{"model.toml", 2, 3, Severity::warning, "deprecated key", {}});
    REQUIRE(w.seen.size() == 2);
    CHECK(w.seen[0] == Diagnostic{{}, 0, 0, Severity::warning, "disk cache disabled", {}});
    CHECK(w.seen[1].format() == "model.toml:2:3: warning: deprecated key");

    // A nested sink gets what follows, and hands back the one it replaced.
    std::vector<std::string> inner;
    DiagnosticSink outer =
        set_warning_sink([&](const Diagnostic& d) { inner.push_back(d.message); });
    warn("inner");
    set_warning_sink(outer);
    warn("outer again");
    CHECK(inner == std::vector<std::string>{"inner"});
    CHECK(w.seen.size() == 3);

    // A sink that throws does not turn a warning into a failure.
    DiagnosticSink before = set_warning_sink([](const Diagnostic&) { throw Error("sink broke"); });
    CHECK_NOTHROW(warn("ignored"));
    set_warning_sink(before);
}

TEST_CASE("warnings from many threads all reach the sink") {
    CapturedWarnings w;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([] {
            for (int i = 0; i < 100; ++i)
                warn("w");
        });
    for (auto& t : threads)
        t.join();
    CHECK(w.seen.size() == 400);
}

TEST_CASE("the default sink prints kjit: warning: MESSAGE on stderr") {
    const test::Run r =
        test::run_kjit("compile rms_norm", "KJIT_CACHE_DIR=/proc/kjit-cannot-be-here");
    CHECK(test::contains(r.out, "kjit: warning: disk cache disabled, compiling in memory only: "));
}

TEST_CASE("a TOML syntax error is a ConfigError at file:line:col") {
    CHECK(config_error([] { (void)doc("a = 1\n[b\n"); }) ==
          "t.toml:2:3: error: Error while parsing table header: expected ']', saw '\\n'");
    CHECK(config_error([] { (void)TomlDocument::load("/nonexistent/kjit.toml", "shape file"); }) ==
          "/nonexistent/kjit.toml: error: cannot read shape file: No such file or directory");
}

TEST_CASE("an unknown key names the nearest known one or lists them all") {
    const TomlDocument d = doc("[launch]\nentyr = \"f\"\n[other]\nqqqq = 1\n");
    const TomlTable launch = d.root().get("launch")->table("launch");
    CHECK(config_error([&] { launch.only_keys({"entry", "grid", "block"}, "[launch]"); }) ==
          "t.toml:2:1: error: unknown key 'entyr' in [launch]; did you mean 'entry'?");
    const TomlTable other = d.root().get("other")->table("other");
    CHECK(config_error([&] { other.only_keys({"entry", "grid", "block"}, "[other]"); }) ==
          "t.toml:4:1: error: unknown key 'qqqq' in [other] (known: entry, grid, block)");
    CHECK(config_error([&] { d.root().only_keys({"launch"}, ""); }) ==
          "t.toml:3:2: error: unknown key 'other' (known: launch)");
    CHECK_NOTHROW(launch.only_keys({"entyr"}, "[launch]"));
}

TEST_CASE("a value of the wrong type fails at the value") {
    const TomlDocument d = doc("s = 1\ni = \"x\"\nt = 3\nk = 4\nl = [\"a\", 2]\ndef = 1.5\n"
                               "e = true\ndims = [1, 2, 3, 4]\n");
    const TomlTable r = d.root();
    CHECK(config_error([&] { (void)r.get("s")->string("s"); }) ==
          "t.toml:1:5: error: 's' must be a string");
    CHECK(config_error([&] { (void)r.get("i")->integer("i"); }) ==
          "t.toml:2:5: error: 'i' must be an integer");
    CHECK(config_error([&] { (void)r.get("t")->table("t"); }) ==
          "t.toml:3:5: error: 't' must be a table");
    CHECK(config_error([&] { (void)r.get("k")->tables("kernel"); }) ==
          "t.toml:4:5: error: 'kernel' must be an array of tables ([[kernel]])");
    CHECK(config_error([&] { (void)r.get("l")->strings("l"); }) ==
          "t.toml:5:11: error: 'l' must be an array of strings");
    CHECK(config_error([&] { (void)r.get("def")->define_value(); }) ==
          "t.toml:6:7: error: a define's value must be an integer, a string or a boolean");
    CHECK(config_error([&] { (void)r.get("e")->expression("grid"); }) ==
          "t.toml:7:5: error: 'grid' must be an expression (a string such as \"rows * n\") or "
          "a number");
    CHECK(config_error([&] { (void)r.get("dims")->expressions("block", 1, 3); }) ==
          "t.toml:8:8: error: 'block' takes 1 to 3 expressions");
    CHECK(config_error([&] { (void)r.required("missing", "[[case]]"); }) ==
          "t.toml:1:1: error: [[case]] needs 'missing'");
}

TEST_CASE("values read as text and expressions keep their positions") {
    const TomlDocument d = doc("[defines]\nA = 7\nB = \"x\"\nC = false\n"
                               "[launch]\ngrid = \"rows * n\"\nblock = [\"n\", 2, 0.5]\n");
    const TomlTable defines = d.root().get("defines")->table("defines");
    std::vector<std::string> seen;
    for (const TomlEntry& e : defines.entries())
        seen.push_back(e.key + "=" + e.value.define_value() + "@" +
                       std::to_string(e.key_where.line) + ":" +
                       std::to_string(e.key_where.column));
    CHECK(seen == std::vector<std::string>{"A=7@2:1", "B=x@3:1", "C=0@4:1"});
    CHECK(defines.key_where("B") == SourceLocation{"t.toml", 3, 1});
    CHECK(defines.get("B")->where() == SourceLocation{"t.toml", 3, 5});

    const TomlTable launch = d.root().get("launch")->table("launch");
    const TomlExpression grid = launch.get("grid")->expression("grid");
    CHECK(grid.text == "rows * n");
    CHECK(grid.where == SourceLocation{"t.toml", 6, 9}); // the 'r', past the quote
    const auto block = launch.get("block")->expressions("block", 1, 3);
    REQUIRE(block.size() == 3);
    CHECK(block[0].text == "n");
    CHECK(block[0].where.column == 11);
    CHECK(block[1].text == "2");
    CHECK(block[2].text == "0.5");
    CHECK(launch.get("grid")->expressions("grid", 1, 3).size() == 1);
}

TEST_CASE("a file is written whole or not at all and a failure names its cause") {
    test::TempDir dir;
    const auto file = dir.path() / "out.bin";
    write_file_atomically(file, "first", "the output");
    CHECK(test::read_file(file) == "first");
    write_file_atomically(file, std::string(100000, 'x'), "the output");
    CHECK(test::read_file(file).size() == 100000);
    const auto error_of = [](const std::filesystem::path& p) {
        try {
            write_file_atomically(p, "x", "the output");
        } catch (const ConfigError& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    CHECK(error_of(dir.path() / "none" / "out.bin") ==
          (dir.path() / "none" / "out.bin").string() +
              ": error: cannot write the output: No such file or directory");
    CHECK(error_of(dir.path()) ==
          dir.path().string() + ": error: cannot write the output: Is a directory");
    // A device is written as it is, not replaced by a file.
    if (std::filesystem::exists("/dev/full"))
        CHECK(error_of("/dev/full") ==
              "/dev/full: error: cannot write the output: No space left on device");
    CHECK(error_of("/dev/null") == "(no error)");
    CHECK(std::filesystem::is_character_file("/dev/null"));
    // A link stays a link, and the file it names keeps its permissions.
    const auto real = dir.path() / "real.bin", link = dir.path() / "link.bin";
    write_file_atomically(real, "old", "the output");
    ::chmod(real.c_str(), 0640);
    std::filesystem::create_symlink(real, link);
    write_file_atomically(link, "new", "the output");
    CHECK(std::filesystem::is_symlink(link));
    CHECK(test::read_file(real) == "new");
    CHECK((std::filesystem::status(real).permissions() & std::filesystem::perms::all) ==
          (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
           std::filesystem::perms::group_read));
    // A write that fails once the temporary file exists (over the file size limit, in a child
    // process) names the cause and leaves the old file whole.
    CHECK(test::exit_status_with_file_limit(10, [&] {
              try {
                  write_file_atomically(file, std::string(1000, 'y'), "the output");
              } catch (const ConfigError& e) {
                  return std::string(e.what()).ends_with("cannot write the output: File too large")
                             ? 0
                             : 2;
              }
              return 3;
          }) == 0);
    CHECK(test::read_file(file) == std::string(100000, 'x'));
    // No temporary file is left beside the targets.
    std::size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir.path()))
        files += e.is_regular_file() && !e.is_symlink() ? 1 : 0;
    CHECK(files == 2);
}

} // TEST_SUITE
