#include "core/error.hpp"

namespace kjit {

ConfigError::ConfigError(const std::string& message_, std::string file_, int line_, int column_)
    : Error(Diagnostic{file_, line_, column_, Severity::error, message_, {}}.format()),
      message(message_), file(std::move(file_)), line(line_), column(column_) {}

ConfigError::ConfigError(const std::string& message_, const SourceLocation& where)
    : ConfigError(message_, where.path, where.line, where.column) {}

Diagnostic ConfigError::diagnostic() const {
    return {file, line, column, Severity::error, message, {}};
}

} // namespace kjit
