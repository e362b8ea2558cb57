#include "jit/tuned_table.hpp"

#include "core/error.hpp"
#include "core/names.hpp"
#include "core/text_file.hpp"
#include "core/toml.hpp"
#include "jit/sources.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

namespace kjit {

namespace fs = std::filesystem;

namespace {

/// `contract` as entries and buckets keep it: empty when it names the source's own contract.
std::string own_contract(std::string_view kernel, std::string_view contract) {
    return contract == kernel ? std::string() : std::string(contract);
}

/// What makes two entries the same slot of the table.
auto slot(const TunedEntry& e) {
    return std::tie(e.kernel, e.contract, e.gpu, e.arch, e.dtype, e.shape);
}

std::int64_t pow2_ceil(std::int64_t v) {
    std::int64_t p = 1;
    while (p < v && p < (std::int64_t{1} << 62))
        p <<= 1;
    return p;
}

TunedEntry read_entry(const TomlTable& t) {
    t.only_keys({"kernel", "contract", "shape", "dtype", "gpu", "arch", "source", "defines",
                 "median_us", "baseline_us", "sweep"},
                "[[entry]]");
    TunedEntry e;
    e.where = t.where();
    e.kernel = t.required("kernel", "[[entry]]").string("kernel");
    if (const auto n = t.get("contract"))
        e.contract = own_contract(e.kernel, n->string("contract"));
    for (const TomlEntry& s : t.required("shape", "[[entry]]").table("shape").entries())
        e.shape[s.key] = s.value.integer(s.key);
    if (e.shape.empty())
        t.get("shape")->fail("'shape' names no key");
    if (const auto n = t.get("dtype"))
        e.dtype = n->string("dtype");
    e.gpu = t.required("gpu", "[[entry]]").string("gpu");
    e.arch = t.required("arch", "[[entry]]").string("arch");
    if (const auto n = t.get("source"))
        e.source = n->string("source");
    for (const TomlEntry& d : t.required("defines", "[[entry]]").table("defines").entries())
        e.defines[d.key] = d.value.define_value();
    if (const auto n = t.get("median_us"))
        e.median_us = n->number("median_us");
    if (const auto n = t.get("baseline_us"))
        e.baseline_us = n->number("baseline_us");
    if (const auto n = t.get("sweep"))
        e.sweep = n->string("sweep");
    return e;
}

TunedBucket read_bucket(const TomlTable& t) {
    t.only_keys({"kernel", "contract", "key", "rule"}, "[[bucket]]");
    TunedBucket b;
    b.where = t.where();
    b.kernel = t.required("kernel", "[[bucket]]").string("kernel");
    if (const auto n = t.get("contract"))
        b.contract = own_contract(b.kernel, n->string("contract"));
    b.key = t.required("key", "[[bucket]]").string("key");
    const TomlNode rule = t.required("rule", "[[bucket]]");
    b.rule = rule.string("rule");
    if (b.rule != "pow2" && b.rule != "nearest")
        rule.fail("unknown bucket rule '" + b.rule + "' (known: pow2, nearest)");
    return b;
}

std::string number_text(double v) {
    std::ostringstream os;
    os.precision(6);
    os << v;
    return os.str();
}

} // namespace

std::string tuned_kernel_name(std::string_view kernel, std::string_view contract) {
    const std::string own = own_contract(kernel, contract);
    return own.empty() ? std::string(kernel) : std::string(kernel) + " (" + own + ")";
}

std::string tuned_shape_text(const std::map<std::string, std::int64_t>& shape) {
    std::string out;
    for (const auto& [k, v] : shape)
        out += (out.empty() ? "" : ",") + k + "=" + std::to_string(v);
    return out;
}

TunedTable TunedTable::load(const fs::path& path) {
    TunedTable table;
    table.file = path;
    std::error_code ec;
    if (!fs::exists(path, ec))
        return table;
    const TomlDocument doc = TomlDocument::load(path, "tuned table");
    const TomlTable root = doc.root();
    root.only_keys({"bucket", "entry"}, "the tuned table");
    if (const auto n = root.get("bucket"))
        for (const TomlTable& t : n->tables("bucket"))
            table.buckets.push_back(read_bucket(t));
    if (const auto n = root.get("entry"))
        for (const TomlTable& t : n->tables("entry")) {
            TunedEntry e = read_entry(t);
            for (const TunedEntry& have : table.entries)
                if (slot(have) == slot(e))
                    throw ConfigError("a second entry for " +
                                          tuned_kernel_name(e.kernel, e.contract) + " " +
                                          tuned_shape_text(e.shape) + " " + e.dtype + " on " +
                                          e.gpu + " " + e.arch + " (the first is at line " +
                                          std::to_string(have.where.line) + ")",
                                      e.where);
            table.entries.push_back(std::move(e));
        }
    return table;
}

void TunedTable::record(TunedEntry entry) {
    entry.contract = own_contract(entry.kernel, entry.contract);
    for (TunedEntry& have : entries)
        if (slot(have) == slot(entry)) {
            have = std::move(entry);
            return;
        }
    entries.push_back(std::move(entry));
}

void TunedTable::save() const {
    std::vector<const TunedEntry*> sorted;
    for (const TunedEntry& e : entries)
        sorted.push_back(&e);
    std::sort(sorted.begin(), sorted.end(),
              [](const TunedEntry* a, const TunedEntry* b) { return slot(*a) < slot(*b); });
    std::ostringstream os;
    os << "# kjit tuned table: the fastest variant of a sweep per kernel, shape, dtype, GPU and\n"
          "# arch. Written by `kjit sweep --record` and `kjit tune`; a shape file names it\n"
          "# (`tuned = ...`) and start-up specialization injects an entry's defines on its GPU.\n"
          "# `kjit audit` reports entries whose kernel source has changed since (`source`).\n";
    for (const TunedBucket& b : buckets) {
        os << "\n[[bucket]]\nkernel = " << toml_string(b.kernel);
        if (const std::string c = own_contract(b.kernel, b.contract); !c.empty())
            os << "\ncontract = " << toml_string(c);
        os << "\nkey = " << toml_string(b.key) << "\nrule = " << toml_string(b.rule) << "\n";
    }
    for (const TunedEntry* e : sorted) {
        os << "\n[[entry]]\nkernel = " << toml_string(e->kernel);
        if (!e->contract.empty())
            os << "\ncontract = " << toml_string(e->contract);
        os << "\nshape = {";
        const char* sep = " ";
        for (const auto& [k, v] : e->shape) {
            os << sep << k << " = " << v;
            sep = ", ";
        }
        os << " }\ndtype = " << toml_string(e->dtype) << "\ngpu = " << toml_string(e->gpu)
           << "\narch = " << toml_string(e->arch) << "\nsource = " << toml_string(e->source)
           << "\ndefines = {";
        sep = " ";
        for (const auto& [k, v] : e->defines) {
            os << sep << k << " = " << toml_string(v);
            sep = ", ";
        }
        os << " }\nmedian_us = " << number_text(e->median_us)
           << "\nbaseline_us = " << number_text(e->baseline_us);
        if (!e->sweep.empty())
            os << "\nsweep = " << toml_string(e->sweep);
        os << "\n";
    }
    if (file.has_parent_path())
        fs::create_directories(file.parent_path());
    write_file_atomically(file, os.str(), "the tuned table");
}

namespace {
/// Whether `e` is an entry of `kernel` under contract `want` for `arch`, of `dtype` and
/// measured on `gpu` (each "" for any).
bool entry_of(const TunedEntry& e, std::string_view kernel, const std::string& want,
              std::string_view arch, std::string_view dtype, std::string_view gpu) {
    return e.kernel == kernel && e.contract == want && e.arch == arch &&
           (gpu.empty() || e.gpu == gpu) && (dtype.empty() || e.dtype == dtype);
}
} // namespace

TunedMatch TunedTable::lookup(std::string_view kernel,
                              const std::map<std::string, std::int64_t>& shape,
                              std::string_view dtype, std::string_view gpu, std::string_view arch,
                              std::string_view contract) const {
    const std::string want = own_contract(kernel, contract);
    const auto on = [&](std::string_view g) {
        return [&, g](const TunedEntry& e) { return entry_of(e, kernel, want, arch, dtype, g); };
    };
    if (gpu.empty() || std::any_of(entries.begin(), entries.end(), on(gpu)))
        return lookup_on(kernel, shape, dtype, gpu, arch, want);
    // This GPU has no entry of the kernel and dtype: another GPU of the same arch stands in
    // (the first in file order), whose configuration is still tuned for the architecture.
    const auto other = std::find_if(entries.begin(), entries.end(), on(""));
    if (other == entries.end())
        return {};
    TunedMatch m = lookup_on(kernel, shape, dtype, other->gpu, arch, want);
    if (m.entry)
        m.how += ", measured on " + other->gpu + " (none on " + std::string(gpu) + ")";
    return m;
}

TunedMatch TunedTable::lookup_on(std::string_view kernel,
                                 const std::map<std::string, std::int64_t>& shape,
                                 std::string_view dtype, std::string_view gpu,
                                 std::string_view arch, const std::string& want) const {
    const auto fits = [&](const TunedEntry& e) {
        return entry_of(e, kernel, want, arch, dtype, gpu);
    };
    const auto exact = [&](const std::map<std::string, std::int64_t>& s) -> const TunedEntry* {
        for (const TunedEntry& e : entries)
            if (fits(e) && e.shape == s)
                return &e;
        return nullptr;
    };
    if (const TunedEntry* e = exact(shape))
        return {e, "exact"};
    for (const TunedBucket& b : buckets) {
        if (b.kernel != kernel || own_contract(b.kernel, b.contract) != want ||
            !shape.contains(b.key))
            continue;
        const std::int64_t v = shape.at(b.key);
        if (b.rule == "pow2") {
            auto rounded = shape;
            rounded[b.key] = pow2_ceil(v);
            if (const TunedEntry* e = exact(rounded))
                return {e, "bucket " + b.key + " pow2 " + std::to_string(v) + " -> " +
                               std::to_string(rounded[b.key])};
            continue;
        }
        // nearest: every other key equal, the closest value of `key` on a log scale; on a tie
        // the larger, whatever the file's order.
        const TunedEntry* best = nullptr;
        double distance = 0;
        for (const TunedEntry& e : entries) {
            if (!fits(e) || e.shape.size() != shape.size() || !e.shape.contains(b.key))
                continue;
            bool others = true;
            for (const auto& [k, x] : shape)
                others = others && (k == b.key || (e.shape.contains(k) && e.shape.at(k) == x));
            if (!others || e.shape.at(b.key) <= 0 || v <= 0)
                continue;
            const double d = std::abs(std::log(static_cast<double>(e.shape.at(b.key)) /
                                               static_cast<double>(v)));
            const bool tie = best && std::abs(d - distance) < 1e-9;
            if (!best || (!tie && d < distance) ||
                (tie && e.shape.at(b.key) > best->shape.at(b.key))) {
                best = &e;
                distance = d;
            }
        }
        if (best)
            return {best, "bucket " + b.key + " nearest " + std::to_string(v) + " -> " +
                              std::to_string(best->shape.at(b.key))};
    }
    return {};
}

std::vector<Diagnostic> idle_tuned_buckets(const TunedTable& table, const SourceSet& sources) {
    std::vector<Diagnostic> out;
    for (const TunedBucket& b : table.buckets) {
        if (!sources.find(b.kernel + ".cu")) {
            out.push_back(
                {b.where.path, b.where.line, b.where.column, Severity::error,
                 "the " + b.rule + " rule names kernel '" + b.kernel + "', which the sources lack",
                 ""});
            continue;
        }
        const std::string want = own_contract(b.kernel, b.contract);
        std::set<std::string> keys;
        bool any = false;
        for (const TunedEntry& e : table.entries)
            if (e.kernel == b.kernel && own_contract(e.kernel, e.contract) == want) {
                any = true;
                for (const auto& [key, _] : e.shape)
                    keys.insert(key);
            }
        // A rule for a contract tuned later (no entry yet) waits for its entries.
        if (!any || keys.contains(b.key))
            continue;
        const std::string what = b.kernel + (want.empty() ? "" : " (contract " + want + ")");
        out.push_back({b.where.path, b.where.line, b.where.column, Severity::error,
                       "the " + b.rule + " rule on key '" + b.key +
                           "' applies to no entry: " + "the entries of " + what + " are keyed " +
                           join(keys) + did_you_mean(nearest(b.key, {keys.begin(), keys.end()})),
                       ""});
    }
    return out;
}

std::vector<Diagnostic> stale_tuned_entries(const TunedTable& table, const SourceSet& sources) {
    std::vector<Diagnostic> out;
    for (const TunedEntry& e : table.entries) {
        Diagnostic d;
        d.path = e.where.path;
        d.line = e.where.line;
        d.column = e.where.column;
        d.severity = Severity::error;
        const std::string what = "tuned entry for " + tuned_kernel_name(e.kernel, e.contract) +
                                 " " + tuned_shape_text(e.shape) + " on " + e.gpu + " " + e.arch;
        if (!sources.find(e.kernel + ".cu")) {
            d.message = what + " names a kernel the sources lack";
        } else if (const std::string now = tuned_source_hash(sources, e.kernel); e.source != now) {
            d.message = what + " was recorded for source " + e.source + ", and the source is " +
                        now + " now: re-run kjit tune " + e.contract_name();
        } else {
            continue;
        }
        out.push_back(std::move(d));
    }
    return out;
}

std::string tuned_source_hash(const SourceSet& sources, std::string_view kernel) {
    const SourceFile& file = sources.kernel(kernel);
    std::string bytes = file.name + '\0' + file.text;
    for (const SourceFile* h : sources.includable(file))
        bytes += '\0' + h->name + '\0' + h->text;
    return hash128(bytes).hex().substr(0, 12);
}

} // namespace kjit
