#pragma once

#include "core/diagnostic.hpp"

#include <stdexcept>
#include <string>

namespace kjit {

/// Root of every error kjit throws; what() is the full, human-readable message.
class Error : public std::runtime_error {
  public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// Bad user input in a file or on the command line (path/line/column when known); what() is
/// `file:line:col: error: message`, or `error: message` without a file.
class ConfigError : public Error {
  public:
    ConfigError(const std::string& message, std::string file = {}, int line = 0, int column = 0);
    /// The error at `where`.
    ConfigError(const std::string& message, const SourceLocation& where);
    /// The same error as a diagnostic (severity error).
    [[nodiscard]] Diagnostic diagnostic() const;
    std::string message; ///< without the location
    std::string file;
    int line;
    int column;
};

/// A name (kernel, entry point, file) that is not known.
class NotFoundError : public Error {
  public:
    using Error::Error;
};

} // namespace kjit
