#include "jit/kernel_params.hpp"

#include "core/error.hpp"

#include <cctype>
#include <charconv>
#include <climits>
#include <sstream>

namespace kjit {

namespace {

bool parse_size(std::string_view s, std::size_t& out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
}

/// A scalar PTX type ("u32", "f64", "b16"): its kind and width in bytes.
bool scalar_type(std::string_view t, ParamKind& kind, std::size_t& size) {
    if (t.size() < 2)
        return false;
    if (t[0] == 'u' || t[0] == 's' || t[0] == 'b')
        kind = ParamKind::integer;
    else if (t[0] == 'f')
        kind = ParamKind::floating;
    else
        return false;
    std::size_t bits = 0;
    if (!parse_size(t.substr(1), bits) || bits % 8 || bits == 0 || bits > 64)
        return false;
    size = bits / 8;
    return true;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

/// PTX without its `//` and `/* */` comments.
std::string strip_comments(std::string_view ptx) {
    std::string out;
    out.reserve(ptx.size());
    for (std::size_t i = 0; i < ptx.size(); ++i) {
        if (ptx.compare(i, 2, "//") == 0) {
            i = ptx.find('\n', i);
            if (i == std::string_view::npos)
                break;
            out += '\n';
        } else if (ptx.compare(i, 2, "/*") == 0) {
            i = ptx.find("*/", i + 2);
            if (i == std::string_view::npos)
                break;
            ++i;
            out += ' ';
        } else {
            out += ptx[i];
        }
    }
    return out;
}

/// One `.param ...` declaration of an entry's list.
ParamType parse_param(std::string_view decl, const std::string& entry) {
    std::istringstream in{std::string(decl)};
    std::vector<std::string> words;
    for (std::string w; in >> w;)
        words.push_back(w);
    const auto bad = [&] {
        return ConfigError("PTX entry '" + entry + "': cannot read the parameter '" +
                           std::string(decl) + "'");
    };
    if (words.size() < 3 || words[0] != ".param")
        throw bad();
    ParamType p;
    bool typed = false;
    for (std::size_t i = 1; i + 1 < words.size(); ++i) {
        const std::string& w = words[i];
        if (w == ".align") {
            if (i + 2 >= words.size() || !parse_size(words[i + 1], p.align) || p.align == 0)
                throw bad();
            ++i;
        } else if (w == ".ptr") {
            p.kind = ParamKind::pointer;
        } else if (w == ".global" || w == ".const" || w == ".local" || w == ".shared") {
            // the state space a `.ptr` points into
        } else if (w.size() > 1 && w[0] == '.' && !typed) {
            ParamKind kind{};
            if (!scalar_type(std::string_view(w).substr(1), kind, p.size))
                throw bad();
            if (p.kind != ParamKind::pointer)
                p.kind = kind;
            typed = true;
        } else {
            throw bad();
        }
    }
    if (!typed)
        throw bad();
    // The name, with `[N]` for an array of the element type: an aggregate of N elements.
    const std::string& name = words.back();
    if (const auto open = name.find('['); open != std::string::npos) {
        std::size_t count = 0;
        if (name.back() != ']' ||
            !parse_size(std::string_view(name).substr(open + 1, name.size() - open - 2), count))
            throw bad();
        p.kind = ParamKind::bytes;
        p.size *= count;
    }
    if (p.align == 0)
        p.align = p.kind == ParamKind::bytes ? 1 : p.size;
    if (p.kind == ParamKind::pointer && p.size != 8)
        throw bad();
    return p;
}

} // namespace

std::string ParamType::ptx() const {
    switch (kind) {
    case ParamKind::integer:
        return "u" + std::to_string(size * 8);
    case ParamKind::floating:
        return "f" + std::to_string(size * 8);
    case ParamKind::pointer:
        return "u64.ptr";
    case ParamKind::bytes:
        break;
    }
    return "b8[" + std::to_string(size) + "]@" + std::to_string(align);
}

std::string ParamType::describe() const {
    switch (kind) {
    case ParamKind::integer:
        return std::to_string(size * 8) + "-bit integer (." + ptx() + ")";
    case ParamKind::floating:
        return std::to_string(size * 8) + "-bit float (." + ptx() + ")";
    case ParamKind::pointer:
        return "pointer (.u64 .ptr)";
    case ParamKind::bytes:
        break;
    }
    return std::to_string(size) + "-byte aggregate (.b8[" + std::to_string(size) + "], align " +
           std::to_string(align) + ")";
}

std::vector<EntryParams> parse_ptx_entries(std::string_view ptx_text) {
    const std::string ptx = strip_comments(ptx_text);
    std::vector<EntryParams> out;
    for (std::size_t pos = 0; (pos = ptx.find(".entry", pos)) != std::string::npos;) {
        const bool word_start = pos == 0 || std::isspace(static_cast<unsigned char>(ptx[pos - 1]));
        pos += 6;
        if (!word_start || pos >= ptx.size() || !std::isspace(static_cast<unsigned char>(ptx[pos])))
            continue;
        const std::size_t open = ptx.find('(', pos);
        const std::size_t brace = ptx.find('{', pos);
        EntryParams e;
        e.entry = std::string(trim(std::string_view(ptx).substr(
            pos, (open == std::string::npos || open > brace ? brace : open) - pos)));
        if (e.entry.empty())
            throw ConfigError("PTX: an .entry without a name");
        if (open != std::string::npos && open < brace) {
            const std::size_t close = ptx.find(')', open);
            if (close == std::string::npos)
                throw ConfigError("PTX entry '" + e.entry + "': the parameter list is not closed");
            std::string_view list = std::string_view(ptx).substr(open + 1, close - open - 1);
            while (!trim(list).empty()) {
                const std::size_t comma = list.find(',');
                e.params.push_back(parse_param(trim(list.substr(0, comma)), e.entry));
                if (comma == std::string_view::npos)
                    break;
                list.remove_prefix(comma + 1);
            }
            pos = close;
        }
        // Directives between the parameter list and the body: `.maxntid 256, 1, 1`.
        const std::size_t body = ptx.find('{', pos);
        const std::string_view directives = std::string_view(ptx).substr(
            pos, body == std::string::npos ? std::string::npos : body - pos);
        for (const char* name : {".maxntid", ".reqntid"}) {
            const std::size_t at = directives.find(name);
            if (at == std::string_view::npos)
                continue;
            unsigned long long threads = 1;
            int dims = 0;
            std::string_view rest = directives.substr(at + std::string_view(name).size());
            for (int dim = 0; dim < 3; ++dim) {
                rest = trim(rest);
                std::size_t digits = 0;
                while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits])))
                    ++digits;
                std::size_t n = 0;
                if (digits == 0 || !parse_size(rest.substr(0, digits), n))
                    break;
                threads *= n;
                ++dims;
                rest.remove_prefix(digits);
                rest = trim(rest);
                if (rest.empty() || rest[0] != ',')
                    break;
                rest.remove_prefix(1);
            }
            // No number read: a form this reader does not know; no bound rather than a wrong one.
            // One above a block's 1024 threads is kept as declared: compile() refuses it.
            if (dims > 0 && threads > 0)
                e.max_threads =
                    static_cast<unsigned>(std::min<unsigned long long>(threads, UINT_MAX));
            break;
        }
        out.push_back(std::move(e));
    }
    return out;
}

std::string encode_entry_params(const EntryParams& entry) {
    std::string out = entry.entry;
    for (const ParamType& p : entry.params)
        out += " " + p.ptx();
    if (entry.max_threads)
        out += " maxntid=" + std::to_string(entry.max_threads);
    return out;
}

std::optional<EntryParams> decode_entry_params(std::string_view text) {
    std::istringstream in{std::string(text)};
    EntryParams e;
    if (!(in >> e.entry))
        return std::nullopt;
    for (std::string w; in >> w;) {
        ParamType p;
        if (w.rfind("maxntid=", 0) == 0) {
            std::size_t n = 0;
            if (!parse_size(std::string_view(w).substr(8), n) || n == 0 || n > kMaxBlockThreads ||
                in >> w) // the last word
                return std::nullopt;
            e.max_threads = static_cast<unsigned>(n);
            break;
        }
        if (w == "u64.ptr") {
            p = {ParamKind::pointer, 8, 8};
        } else if (w.rfind("b8[", 0) == 0) {
            const auto close = w.find("]@");
            if (close == std::string::npos ||
                !parse_size(std::string_view(w).substr(3, close - 3), p.size) ||
                !parse_size(std::string_view(w).substr(close + 2), p.align) || p.align == 0)
                return std::nullopt;
            p.kind = ParamKind::bytes;
        } else if (scalar_type(w, p.kind, p.size) && w[0] != 'b') {
            p.align = p.size;
        } else {
            return std::nullopt;
        }
        e.params.push_back(p);
    }
    return e;
}

} // namespace kjit
