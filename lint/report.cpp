#include "lint/report.hpp"

#include "core/json.hpp"

#include <cstdio>

namespace kjit::lint {

std::string to_json(const std::vector<Diagnostic>& findings) {
    std::string out = "[";
    for (std::size_t i = 0; i < findings.size(); ++i) {
        const Diagnostic& f = findings[i];
        out += std::string(i ? ",\n " : "\n ") + "{\"path\": " + json_string(f.path) +
               ", \"line\": " + std::to_string(f.line) +
               ", \"column\": " + std::to_string(f.column) + ", \"severity\": \"" +
               std::string(severity_name(f.severity)) + "\", \"rule\": \"" + f.rule +
               "\", \"message\": " + json_string(f.message) + "}";
    }
    return out + (findings.empty() ? "]" : "\n]");
}

std::string format_report(const LintReport& report, bool json) {
    if (json)
        return to_json(report.findings) + "\n";
    std::string out;
    std::size_t errors = 0, warnings = 0;
    for (const auto& f : report.findings) {
        out += f.format() + "\n";
        ++(f.severity == Severity::error ? errors : warnings);
    }
    return out + "lint: " + std::to_string(report.files) + " file(s), " + std::to_string(errors) +
           " error(s), " + std::to_string(warnings) + " warning(s)\n";
}

std::string format_notes(const std::vector<std::string>& notes) {
    std::string out;
    for (const auto& n : notes)
        out += "kjit lint: note: " + n + "\n";
    return out;
}

} // namespace kjit::lint
