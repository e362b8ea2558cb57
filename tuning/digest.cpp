#include "tuning/digest.hpp"

#include "core/error.hpp"
#include "core/text_file.hpp"
#include "core/toml.hpp"
#include "jit/compile_options.hpp"
#include "jit/hash.hpp"

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
    Baseline read(const TomlDocument& doc) const {
        const TomlTable root = doc.root();
        Baseline b;
        b.file = doc.file();
        root.only_keys({"kernel", "seed", "case"}, "the baseline file");
        const auto kernel = root.get("kernel");
        if (!kernel)
            root.fail("missing key 'kernel' (the kernel this baseline belongs to)");
        b.kernel = kernel->string("kernel");
        if (const auto seed = root.get("seed")) {
            const auto i = seed->as_integer();
            if (!i || *i < 0)
                seed->fail("'seed' must be a non-negative integer");
            b.seed = static_cast<std::uint64_t>(*i);
        }
        if (const auto cases = root.get("case"))
            for (const TomlTable& t : cases->tables("case")) {
                BaselineCase c = read_case(t);
                if (b.find(c.shape, c.dtype))
                    t.fail("duplicate case shape '" + c.shape + "' dtype " +
                           std::string(dtype_name(c.dtype)));
                b.cases.push_back(std::move(c));
            }
        return b;
    }

  private:
    static DType dtype_of(const TomlNode& n) {
        const std::string name = n.string("dtype");
        try {
            return parse_dtype(name);
        } catch (const ConfigError& e) {
            n.fail(e.message);
        }
    }

    static BaselineCase read_case(const TomlTable& t) {
        t.only_keys({"shape", "dtype", "defines", "gpu", "arch", "tier", "source_hash", "outputs"},
                    "[[case]]");
        BaselineCase c;
        c.line = t.where().line;
        c.column = t.where().column;
        c.shape = t.required("shape", "[[case]]").string("shape");
        c.dtype = dtype_of(t.required("dtype", "[[case]]"));
        for (const char* key : {"gpu", "arch", "tier", "source_hash"})
            if (const auto n = t.get(key)) {
                std::string& field = key[0] == 'g'   ? c.gpu
                                     : key[0] == 'a' ? c.arch
                                     : key[0] == 't' ? c.tier
                                                     : c.source_hash;
                field = n->string(key);
            }
        if (const auto n = t.get("defines")) {
            const auto d = n->as_table();
            if (!d)
                n->fail("'defines' must be a table (defines = { NAME = \"VALUE\" })");
            for (const TomlEntry& e : d->entries()) {
                const std::string value = e.value.define_value();
                try {
                    add_define(c.defines, e.key + "=" + value);
                } catch (const ConfigError& err) {
                    throw ConfigError(err.message, e.key_where);
                }
            }
        }
        const TomlNode outputs = t.required("outputs", "[[case]]");
        const auto list = outputs.as_array();
        if (!list || list->empty())
            outputs.fail("'outputs' must be a non-empty array of "
                         "{ name, dtype, count, digest } tables");
        for (const TomlNode& item : list->items()) {
            const auto o = item.as_table();
            if (!o)
                item.fail("an output must be a table { name, dtype, count, digest }");
            c.outputs.push_back(read_output(*o));
        }
        return c;
    }

    static OutputDigest read_output(const TomlTable& t) {
        t.only_keys({"name", "dtype", "count", "digest"}, "an output");
        OutputDigest o;
        o.name = t.required("name", "an output").string("name");
        o.dtype = dtype_of(t.required("dtype", "an output"));
        const TomlNode count = t.required("count", "an output");
        const auto i = count.as_integer();
        if (!i || *i < 0)
            count.fail("'count' must be a non-negative integer");
        o.count = static_cast<std::uint64_t>(*i);
        const TomlNode dn = t.required("digest", "an output");
        const std::string text = dn.string("digest");
        const auto d = parse_hex64(text);
        if (!d)
            dn.fail("'digest' must be 16 hex digits (xxh3-64), not '" + text + "'");
        o.digest = *d;
        return o;
    }
};


} // namespace

Baseline Baseline::parse(std::string_view text, const std::string& file) {
    return BaselineReader().read(TomlDocument::parse(text, file));
}

Baseline Baseline::load(const std::filesystem::path& path) {
    return BaselineReader().read(TomlDocument::load(path, "baseline file"));
}

std::string Baseline::to_toml() const {
    std::ostringstream os;
    os << "# kjit digest baseline: xxh3-64 of every output buffer of " << kernel
       << " on generator inputs.\n"
          "# Written by `kjit digest record`; `kjit digest check` compares against it.\n"
       << "kernel = " << toml_string(kernel) << "\nseed = " << seed << "\n";
    for (const BaselineCase& c : cases) {
        os << "\n[[case]]\nshape = " << toml_string(c.shape)
           << "\ndtype = " << toml_string(dtype_name(c.dtype)) << "\ndefines = {";
        bool first = true;
        for (const auto& [name, value] : c.defines) {
            os << (first ? " " : ", ") << name << " = " << toml_string(value);
            first = false;
        }
        os << (first ? "}" : " }") << "\n";
        os << "gpu = " << toml_string(c.gpu) << "\narch = " << toml_string(c.arch)
           << "\ntier = " << toml_string(c.tier) << "\nsource_hash = " << toml_string(c.source_hash)
           << "\noutputs = [\n";
        for (const OutputDigest& o : c.outputs)
            os << "  { name = " << toml_string(o.name) << ", dtype = " << toml_string(dtype_name(o.dtype))
               << ", count = " << o.count << ", digest = " << toml_string(hex64(o.digest))
               << " },\n";
        os << "]\n";
    }
    return os.str();
}

void Baseline::save(const std::filesystem::path& path) const {
    if (path.has_parent_path())
        std::filesystem::create_directories(path.parent_path());
    write_file_atomically(path, to_toml(), "the baseline file");
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
