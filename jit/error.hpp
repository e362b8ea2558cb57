#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace kjit {

/// Root of every error kjit throws; what() is the full, human-readable message.
class Error : public std::runtime_error {
  public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// An NVRTC API call failed (not a compile error in the kernel: see CompileError).
class NvrtcError : public Error {
  public:
    NvrtcError(std::string call, int code, const std::string& text, const std::string& context);
    std::string call;
    int code;
};

/// One diagnostic from a compiler log, with the location mapped to the kernel's own path.
struct Diagnostic {
    std::string path;
    int line = 0;
    int column = 0; ///< 0 when the compiler gave none
    std::string severity; ///< "error", "warning", ...
    std::string message;
    /// `path:line:col: severity: message` (col omitted when unknown).
    [[nodiscard]] std::string format() const;
};

/// A kernel failed to compile; carries everything needed to reproduce it.
class CompileError : public Error {
  public:
    CompileError(std::string kernel, std::string path, std::vector<std::string> options,
                 std::map<std::string, std::string> defines, std::string log,
                 std::vector<Diagnostic> diagnostics, std::string source_hash);
    std::string kernel;
    std::string path;
    std::vector<std::string> options;
    std::map<std::string, std::string> defines;
    std::string log; ///< NVRTC's log with locations rewritten to repo paths
    std::vector<Diagnostic> diagnostics;
    std::string source_hash;
};

/// Bad user input in a file or on the command line (path/line/column when known).
class ConfigError : public Error {
  public:
    ConfigError(const std::string& message, std::string file = {}, int line = 0, int column = 0);
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
