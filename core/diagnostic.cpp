#include "core/diagnostic.hpp"

namespace kjit {

std::string_view severity_name(Severity severity) {
    switch (severity) {
    case Severity::note:
        return "note";
    case Severity::warning:
        return "warning";
    case Severity::error:
        break;
    }
    return "error";
}

std::string Diagnostic::format() const {
    std::string s;
    if (!path.empty()) {
        s = path;
        if (line > 0) {
            s += ':' + std::to_string(line);
            if (column > 0)
                s += ':' + std::to_string(column);
        }
        s += ": ";
    }
    s += severity_name(severity);
    s += ": " + message;
    if (!rule.empty())
        s += " [" + rule + "]";
    return s;
}

} // namespace kjit
