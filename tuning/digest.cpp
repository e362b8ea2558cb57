#include "tuning/digest.hpp"

#include "jit/compile_options.hpp"
#include "jit/error.hpp"
#include "jit/hash.hpp"

#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace kjit {

std::uint64_t digest(const HostBuffer& b) {
    return hash64(std::string_view(reinterpret_cast<const char*>(b.bytes.data()), b.bytes.size()));
}

std::optional<Difference> first_difference(const HostBuffer& reference, const HostBuffer& actual) {
    if (reference.dtype != actual.dtype || reference.count != actual.count)
        throw Error("cannot compare output '" + actual.name +
                    "': " + std::to_string(reference.count) + " " +
                    std::string(dtype_name(reference.dtype)) + " elements against " +
                    std::to_string(actual.count) + " " + std::string(dtype_name(actual.dtype)));
    std::optional<Difference> d;
    for (std::size_t i = 0; i < reference.count; ++i)
        if (element_bits(reference, i) != element_bits(actual, i)) {
            if (!d) {
                d = Difference{i, 0, format_element(reference, i), format_element(actual, i)};
            }
            ++d->count;
        }
    return d;
}

bool BaselineCase::same_record(const BaselineCase& o) const {
    return shape == o.shape && dtype == o.dtype && defines == o.defines && gpu == o.gpu &&
           arch == o.arch && tier == o.tier && source_hash == o.source_hash && outputs == o.outputs;
}

namespace {

/// Reads a baseline file; every error carries the file, line and column.
class BaselineReader {
  public:
    explicit BaselineReader(std::string file) : file_(std::move(file)) {}

    Baseline read(std::string_view text) {
        toml::table root;
        try {
            root = toml::parse(text, file_);
        } catch (const toml::parse_error& e) {
            fail(e.source(), std::string(e.description()));
        }
        Baseline b;
        b.file = file_;
        only_keys(root, {"kernel", "seed", "case"}, "");
        const toml::node* kernel = root.get("kernel");
        if (!kernel)
            fail(root.source(), "missing key 'kernel' (the kernel this baseline belongs to)");
        b.kernel = string_of(*kernel, "kernel");
        if (const toml::node* seed = root.get("seed")) {
            const auto* i = seed->as_integer();
            if (!i || i->get() < 0)
                fail(seed->source(), "'seed' must be a non-negative integer");
            b.seed = static_cast<std::uint64_t>(i->get());
        }
        if (const toml::node* cases = root.get("case")) {
            const toml::array* list = cases->as_array();
            if (!list || !list->is_array_of_tables())
                fail(cases->source(), "'case' must be an array of tables ([[case]])");
            for (const toml::node& item : *list) {
                BaselineCase c = read_case(*item.as_table());
                if (b.find(c.shape, c.dtype))
                    fail(item.source(), "duplicate case shape '" + c.shape + "' dtype " +
                                            std::string(dtype_name(c.dtype)));
                b.cases.push_back(std::move(c));
            }
        }
        return b;
    }

  private:
    [[noreturn]] void fail(const toml::source_region& where, const std::string& message) const {
        throw ConfigError(message, file_, static_cast<int>(where.begin.line),
                          static_cast<int>(where.begin.column));
    }

    void only_keys(const toml::table& t, std::initializer_list<std::string_view> allowed,
                   const std::string& where) const {
        for (auto&& [key, value] : t)
            if (std::find(allowed.begin(), allowed.end(), key.str()) == allowed.end()) {
                std::string known;
                for (auto k : allowed)
                    known += (known.empty() ? "" : ", ") + std::string(k);
                fail(key.source(), "unknown key '" + std::string(key.str()) + "'" + where +
                                       " (known: " + known + ")");
            }
    }

    std::string string_of(const toml::node& n, std::string_view key) const {
        const auto* s = n.as_string();
        if (!s)
            fail(n.source(), "'" + std::string(key) + "' must be a string");
        return s->get();
    }

    DType dtype_of(const toml::node& n) const {
        const std::string name = string_of(n, "dtype");
        try {
            return parse_dtype(name);
        } catch (const ConfigError& e) {
            fail(n.source(), e.message);
        }
    }

    const toml::node& required(const toml::table& t, std::string_view key,
                               const std::string& what) const {
        const toml::node* n = t.get(key);
        if (!n)
            fail(t.source(), what + " needs '" + std::string(key) + "'");
        return *n;
    }

    BaselineCase read_case(const toml::table& t) const {
        only_keys(t, {"shape", "dtype", "defines", "gpu", "arch", "tier", "source_hash", "outputs"},
                  " in [[case]]");
        BaselineCase c;
        c.line = static_cast<int>(t.source().begin.line);
        c.column = static_cast<int>(t.source().begin.column);
        c.shape = string_of(required(t, "shape", "[[case]]"), "shape");
        c.dtype = dtype_of(required(t, "dtype", "[[case]]"));
        for (const char* key : {"gpu", "arch", "tier", "source_hash"})
            if (const toml::node* n = t.get(key)) {
                std::string& field = key[0] == 'g'   ? c.gpu
                                     : key[0] == 'a' ? c.arch
                                     : key[0] == 't' ? c.tier
                                                     : c.source_hash;
                field = string_of(*n, key);
            }
        if (const toml::node* n = t.get("defines")) {
            const toml::table* d = n->as_table();
            if (!d)
                fail(n->source(), "'defines' must be a table (defines = { NAME = \"VALUE\" })");
            for (const auto& [name, value] : *d) {
                std::string v;
                if (const auto* s = value.as_string())
                    v = s->get();
                else if (const auto* i = value.as_integer())
                    v = std::to_string(i->get());
                else if (const auto* bo = value.as_boolean())
                    v = bo->get() ? "1" : "0";
                else
                    fail(value.source(),
                         "a define's value must be a string, an integer or a boolean");
                try {
                    add_define(c.defines, std::string(name.str()) + "=" + v);
                } catch (const ConfigError& e) {
                    fail(name.source(), e.message);
                }
            }
        }
        const toml::node& outputs = required(t, "outputs", "[[case]]");
        const toml::array* list = outputs.as_array();
        if (!list || list->empty())
            fail(outputs.source(), "'outputs' must be a non-empty array of "
                                   "{ name, dtype, count, digest } tables");
        for (const toml::node& item : *list) {
            const toml::table* o = item.as_table();
            if (!o)
                fail(item.source(), "an output must be a table { name, dtype, count, digest }");
            c.outputs.push_back(read_output(*o));
        }
        return c;
    }

    OutputDigest read_output(const toml::table& t) const {
        only_keys(t, {"name", "dtype", "count", "digest"}, " in an output");
        OutputDigest o;
        o.name = string_of(required(t, "name", "an output"), "name");
        o.dtype = dtype_of(required(t, "dtype", "an output"));
        const toml::node& count = required(t, "count", "an output");
        const auto* i = count.as_integer();
        if (!i || i->get() < 0)
            fail(count.source(), "'count' must be a non-negative integer");
        o.count = static_cast<std::uint64_t>(i->get());
        const toml::node& dn = required(t, "digest", "an output");
        const std::string text = string_of(dn, "digest");
        const auto d = parse_hex64(text);
        if (!d)
            fail(dn.source(), "'digest' must be 16 hex digits (xxh3-64), not '" + text + "'");
        o.digest = *d;
        return o;
    }

    std::string file_;
};

std::string quoted(std::string_view s) {
    std::string out = "\"";
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (ch == '"' || ch == '\\') {
            out += '\\';
            out += ch;
        } else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += ch;
        }
    }
    return out + "\"";
}

} // namespace

Baseline Baseline::parse(std::string_view text, const std::string& file) {
    return BaselineReader(file).read(text);
}

Baseline Baseline::load(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw ConfigError("cannot read baseline file: " + std::string(std::strerror(errno)),
                          path.string());
    std::stringstream text;
    text << in.rdbuf();
    return parse(text.str(), path.string());
}

std::string Baseline::to_toml() const {
    std::ostringstream os;
    os << "# kjit digest baseline: xxh3-64 of every output buffer of " << kernel
       << " on generator inputs.\n"
          "# Written by `kjit digest record`; `kjit digest check` compares against it.\n"
       << "kernel = " << quoted(kernel) << "\nseed = " << seed << "\n";
    for (const BaselineCase& c : cases) {
        os << "\n[[case]]\nshape = " << quoted(c.shape)
           << "\ndtype = " << quoted(dtype_name(c.dtype)) << "\ndefines = {";
        bool first = true;
        for (const auto& [name, value] : c.defines) {
            os << (first ? " " : ", ") << name << " = " << quoted(value);
            first = false;
        }
        os << (first ? "}" : " }") << "\n";
        os << "gpu = " << quoted(c.gpu) << "\narch = " << quoted(c.arch)
           << "\ntier = " << quoted(c.tier) << "\nsource_hash = " << quoted(c.source_hash)
           << "\noutputs = [\n";
        for (const OutputDigest& o : c.outputs)
            os << "  { name = " << quoted(o.name) << ", dtype = " << quoted(dtype_name(o.dtype))
               << ", count = " << o.count << ", digest = " << quoted(hex64(o.digest))
               << " },\n";
        os << "]\n";
    }
    return os.str();
}

void Baseline::save(const std::filesystem::path& path) const {
    if (path.has_parent_path())
        std::filesystem::create_directories(path.parent_path());
    const std::filesystem::path tmp =
        path.string() + ".tmp" + std::to_string(static_cast<long>(::getpid()));
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << to_toml();
        out.close();
        if (!out)
            throw ConfigError("cannot write baseline file", tmp.string());
    }
    std::filesystem::rename(tmp, path);
}

const BaselineCase* Baseline::find(std::string_view shape, DType dtype) const {
    for (const BaselineCase& c : cases)
        if (c.shape == shape && c.dtype == dtype)
            return &c;
    return nullptr;
}

void Baseline::put(BaselineCase c) {
    for (BaselineCase& have : cases)
        if (have.shape == c.shape && have.dtype == c.dtype) {
            have = std::move(c);
            return;
        }
    cases.push_back(std::move(c));
}

} // namespace kjit
