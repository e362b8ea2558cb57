#pragma once

#include "core/diagnostic.hpp"
#include "core/error.hpp"

#include <map>
#include <string>
#include <vector>

namespace kjit {

/// An NVRTC API call failed (not a compile error in the kernel: see CompileError).
class NvrtcError : public Error {
  public:
    NvrtcError(std::string call, int code, const std::string& text, const std::string& context);
    std::string call;
    int code;
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
    std::vector<Diagnostic> diagnostics; ///< the log's, at the kernel's own paths
    std::string source_hash;
};

} // namespace kjit
