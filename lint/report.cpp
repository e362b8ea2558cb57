#include "lint/report.hpp"

#include <cstdio>

namespace kjit::lint {

std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (const char c : s) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
                out += buf;
            } else {
                out += c;
            }
        }
    }
    return out + "\"";
}

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

void print_report(const LintReport& report, bool json) {
    for (const auto& n : report.notes)
        std::fprintf(stderr, "kjit lint: note: %s\n", n.c_str());
    if (json) {
        std::printf("%s\n", to_json(report.findings).c_str());
        return;
    }
    std::size_t errors = 0, warnings = 0;
    for (const auto& f : report.findings) {
        std::printf("%s\n", f.format().c_str());
        ++(f.severity == Severity::error ? errors : warnings);
    }
    std::printf("lint: %zu file(s), %zu error(s), %zu warning(s)\n", report.files, errors,
                warnings);
}

} // namespace kjit::lint
