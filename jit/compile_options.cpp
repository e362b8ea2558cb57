#include "jit/compile_options.hpp"

#include "core/error.hpp"
#include "jit/toolkit.hpp"

#include <cctype>

namespace kjit {

std::vector<std::string> CompileOptions::argv() const {
    std::vector<std::string> out;
    out.push_back("--gpu-architecture=" + arch);
    out.push_back("-std=" + std);
    out.push_back(std::string("--fmad=") + (fmad ? "true" : "false"));
    if (fast_math)
        out.emplace_back("--use_fast_math");
    if (lineinfo)
        out.emplace_back("-lineinfo");
    for (const auto& dir : include_dirs)
        out.push_back("-I" + dir);
    for (const auto& dir : toolkit_include_dirs)
        out.push_back("-I" + dir);
    for (const auto& [name, value] : defines)
        out.push_back("-D" + name + "=" + value);
    out.insert(out.end(), extra.begin(), extra.end());
    return out;
}

std::vector<std::string> CompileOptions::toolkit_dirs() const {
    if (!toolkit_include_dirs.empty() || !toolkit_headers)
        return toolkit_include_dirs;
    return default_toolkit_include_dirs();
}

std::string CompileOptions::defines_text() const {
    std::string s;
    for (const auto& [name, value] : defines)
        s += (s.empty() ? "" : " ") + name + "=" + value;
    return s.empty() ? "(none)" : s;
}

void add_define(std::map<std::string, std::string>& defines, const std::string& assignment) {
    const auto eq = assignment.find('=');
    const std::string name = assignment.substr(0, eq);
    const std::string value = eq == std::string::npos ? "1" : assignment.substr(eq + 1);
    bool ok = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
    for (char c : name)
        ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!ok)
        throw ConfigError("bad define '" + assignment +
                          "': expected NAME=VALUE with NAME a C identifier");
    if (value.find_first_of("\n\r") != std::string::npos)
        throw ConfigError("bad define '" + name + "': the value contains a line break");
    defines[name] = value;
}

} // namespace kjit
