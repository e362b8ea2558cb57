#include "jit/audit.hpp"
#include "jit/hash.hpp"
#include "tests/support.hpp"

#include "tests/doctest.hpp"

using namespace kjit;

namespace {

SourceFile file(const std::string& name, const std::string& text) {
    return {name, "src/" + name, text, hash128(text), 0};
}

/// "label arch defines" per compile, in order.
std::vector<std::string> rows(const std::vector<AuditCompile>& compiles) {
    std::vector<std::string> out;
    for (const AuditCompile& c : compiles)
        out.push_back(c.label + " " + c.request.kernel + " " + c.request.options.arch + " " +
                      c.defines);
    return out;
}

} // namespace

TEST_SUITE("jit") {

TEST_CASE("the audit compiles every kernel with its defaults and each production set for each arch") {
    SourceSet set;
    set.add(file("a.cu", "__global__ void a() {}\n"));
    set.add(file("b.cu", "__global__ void b() {}\n"));
    set.add(file("common.cuh", "#pragma once\n"));
    const std::vector<ProductionDefines> production{
        {"a_big", "a", {{"BLOCK", "1024"}}},
        {"a_again", "a", {{"BLOCK", "1024"}}}, // the same set under another name: once
        {"a_small", "a", {{"BLOCK", "64"}, {"ITEMS", "2"}}},
        {"c_unknown", "c", {{"BLOCK", "1"}}}, // no kernel c: nothing to compile
    };
    const std::vector<std::string> archs{"sm_90", "sm_80"};
    CHECK(rows(audit_compiles(set, production, archs)) ==
          std::vector<std::string>{
              "a a sm_90 (defaults)",
              "a a sm_80 (defaults)",
              "a_big a sm_90 BLOCK=1024",
              "a_big a sm_80 BLOCK=1024",
              "a_small a sm_90 BLOCK=64 ITEMS=2",
              "a_small a sm_80 BLOCK=64 ITEMS=2",
              "b b sm_90 (defaults)",
              "b b sm_80 (defaults)",
          });
    // A set that names instantiations is compiled with them, though its defines are the
    // defaults: start-up compiles it so.
    const std::vector<ProductionDefines> named{{"b_float", "b", {}, {"b<float>"}, {}}};
    const auto templates = audit_compiles(set, named, std::vector<std::string>{"sm_90"});
    CHECK(rows(templates) == std::vector<std::string>{"a a sm_90 (defaults)",
                                                      "b b sm_90 (defaults)",
                                                      "b_float b sm_90 (defaults)  [b<float>]"});
    CHECK(templates[2].request.options.name_expressions == std::vector<std::string>{"b<float>"});
    const auto one = audit_compiles(set, {}, std::vector<std::string>{"sm_90"});
    REQUIRE(one.size() == 2);
    CHECK(one[0].request.options.defines.empty());
}

TEST_CASE("the audit passes with every compile ok and no finding and no stale source") {
    AuditSummary s;
    s.compiled = 5;
    CHECK(s.passed());
    CHECK(std::string(freshness_name(s.fresh)) == "skipped");
    s.fresh = AuditFreshness::up_to_date;
    CHECK(s.passed());
    CHECK(std::string(freshness_name(s.fresh)) == "up to date");
    s.fresh = AuditFreshness::stale;
    CHECK_FALSE(s.passed());
    CHECK(std::string(freshness_name(s.fresh)) == "stale");
    s.fresh = AuditFreshness::up_to_date;
    s.findings = 1;
    CHECK_FALSE(s.passed());
    s.findings = 0;
    s.failed = 1;
    CHECK_FALSE(s.passed());
}

} // TEST_SUITE
