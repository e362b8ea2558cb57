#include "jit/error.hpp"

#include <sstream>

namespace kjit {

namespace {
std::string nvrtc_message(const std::string& call, int code, const std::string& text,
                          const std::string& context) {
    std::string msg = call + ": NVRTC error " + std::to_string(code) + " (" + text + ")";
    if (!context.empty())
        msg += " [" + context + "]";
    return msg;
}

std::string compile_message(const std::string& kernel, const std::vector<std::string>& options,
                            const std::map<std::string, std::string>& defines,
                            const std::string& log) {
    std::ostringstream os;
    os << "compile of kernel '" << kernel << "' failed\n  defines:";
    if (defines.empty())
        os << " (none)";
    for (const auto& [k, v] : defines)
        os << ' ' << k << '=' << v;
    os << "\n  options:";
    for (const auto& o : options)
        os << ' ' << o;
    os << '\n' << log;
    return os.str();
}
} // namespace

NvrtcError::NvrtcError(std::string call_, int code_, const std::string& text,
                       const std::string& context)
    : Error(nvrtc_message(call_, code_, text, context)), call(std::move(call_)), code(code_) {}

CompileError::CompileError(std::string kernel_, std::string path_,
                           std::vector<std::string> options_,
                           std::map<std::string, std::string> defines_, std::string log_,
                           std::vector<Diagnostic> diagnostics_, std::string source_hash_)
    : Error(compile_message(kernel_, options_, defines_, log_)), kernel(std::move(kernel_)),
      path(std::move(path_)), options(std::move(options_)), defines(std::move(defines_)),
      log(std::move(log_)), diagnostics(std::move(diagnostics_)),
      source_hash(std::move(source_hash_)) {}

} // namespace kjit
