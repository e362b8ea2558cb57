#include "kernels/shape.hpp"

#include "core/error.hpp"
#include "jit/compile_options.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace kjit {

ShapeValues parse_shape(const KernelContract& contract, std::string_view text) {
    const std::string shown(text);
    std::string keys;
    for (const auto& k : contract.shape_keys)
        keys += (keys.empty() ? "" : ",") + k + "=N";
    ShapeValues out;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t comma = text.find(',', pos);
        if (comma == std::string_view::npos)
            comma = text.size();
        std::string_view part = text.substr(pos, comma - pos);
        while (!part.empty() && part.front() == ' ')
            part.remove_prefix(1);
        while (!part.empty() && part.back() == ' ')
            part.remove_suffix(1);
        const std::size_t eq = part.find('=');
        const std::string key(part.substr(0, eq));
        if (eq == std::string_view::npos || key.empty())
            throw ConfigError("bad shape '" + shown + "' for " + contract.name + ": expected " +
                              keys);
        if (std::find(contract.shape_keys.begin(), contract.shape_keys.end(), key) ==
            contract.shape_keys.end())
            throw ConfigError("bad shape '" + shown + "': " + contract.name +
                              " has no shape key '" + key + "' (expected " + keys + ")");
        const std::string_view value = part.substr(eq + 1);
        std::int64_t v = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
        if (ec != std::errc() || end != value.data() + value.size() || v <= 0 || v > INT32_MAX)
            throw ConfigError("bad shape '" + shown + "': " + key +
                              " must be a positive 32-bit "
                              "integer, not '" +
                              std::string(value) + "'");
        if (!out.emplace(key, v).second)
            throw ConfigError("bad shape '" + shown + "': " + key + " is given twice");
        pos = comma + 1;
    }
    for (const auto& k : contract.shape_keys)
        if (!out.contains(k))
            throw ConfigError("bad shape '" + shown + "': " + k + " is missing (expected " + keys +
                              ")");
    return out;
}

std::string shape_text(const KernelContract& contract, const ShapeValues& shape) {
    std::string out;
    for (const auto& k : contract.shape_keys)
        out += (out.empty() ? "" : ",") + k + "=" + std::to_string(shape.at(k));
    return out;
}

std::vector<std::string> split_shapes(std::string_view text) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t semi = text.find(';', pos);
        if (semi == std::string_view::npos)
            semi = text.size();
        if (semi > pos)
            out.emplace_back(text.substr(pos, semi - pos));
        pos = semi + 1;
    }
    return out;
}

Defines merge_defines(Defines base, std::span<const std::string> overrides) {
    for (const std::string& d : overrides)
        add_define(base, d);
    return base;
}

std::string defines_text(const Defines& defines) {
    CompileOptions o;
    o.defines = defines;
    return o.defines_text();
}

} // namespace kjit
