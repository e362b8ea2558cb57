// libFuzzer target for the linter's text layer (scanner, text rules, expression evaluator,
// name suggestion): any bytes, no crash, no hang. fuzz/run.sh builds and runs it.
#include "core/names.hpp"
#include "lint/evaluate.hpp"
#include "lint/report.hpp"
#include "lint/rules_text.hpp"
#include "lint/scanner.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace kjit::lint;
    const std::string text(reinterpret_cast<const char*>(data), size);
    kjit::SourceSet sources;
    sources.add({"fuzz.cu", "fuzz.cu", text, {}, 0});
    sources.add({"common.cuh", "common.cuh", "#pragma once\n", {}, 0});
    for (const auto& f : lint_text(*sources.find("fuzz.cu")))
        (void)f.format();

    // The input's own object-like macros feed the evaluator, as `kjit sig` does with a kernel's.
    const ScannedSource scanned = scan(text);
    MacroTable macros;
    for (const auto& d : scanned.directives) {
        if (d.name != "define" || d.args.empty())
            continue;
        auto& body = macros[d.args[0].text];
        body.clear();
        for (std::size_t i = 1; i < d.args.size(); ++i)
            body.push_back(d.args[i].text);
    }
    for (const auto& d : scanned.directives) {
        if (d.name != "if" && d.name != "elif")
            continue;
        std::vector<std::string> condition;
        for (const auto& a : d.args)
            condition.push_back(a.text);
        (void)evaluate(condition, macros);
    }
    (void)evaluate(tokenize(text), macros);
    std::vector<std::string> names;
    for (const auto& [name, _] : macros)
        if (names.size() < 64)
            names.push_back(name);
    if (!names.empty())
        (void)kjit::did_you_mean(kjit::nearest(names.front().substr(0, 64), names));
    (void)to_json({{text.substr(0, 64), 1, 1, kjit::Severity::error, text.substr(0, 256), "KJ001"}});
    return 0;
}
