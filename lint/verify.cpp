#include "lint/verify.hpp"

#include "jit/compiler.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <exception>
#include <optional>
#include <set>

namespace kjit::lint {

namespace {

bool is_symbol_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.';
}

std::vector<std::string> words(std::string_view s) {
    std::vector<std::string> out;
    std::size_t p = 0;
    while (p < s.size()) {
        while (p < s.size() && std::isspace(static_cast<unsigned char>(s[p])))
            ++p;
        const std::size_t b = p;
        while (p < s.size() && !std::isspace(static_cast<unsigned char>(s[p])))
            ++p;
        if (p > b)
            out.emplace_back(s.substr(b, p - b));
    }
    return out;
}

long long type_size(std::string_view t) {
    if (t.size() < 3 || t[0] != '.')
        return 0;
    const std::string_view bits = t.substr(2);
    if (bits == "8")
        return 1;
    if (bits == "16")
        return 2;
    if (bits == "32")
        return 4;
    if (bits == "64")
        return 8;
    return 0;
}

// `.param [.align A] .type [.ptr [.space] [.align P]] name[N]`
std::optional<PtxParam> param(std::string_view item) {
    const auto w = words(item);
    if (w.empty() || w[0] != ".param")
        return std::nullopt;
    PtxParam p;
    std::size_t i = 1;
    if (i + 1 < w.size() && w[i] == ".align") {
        p.align = std::atoll(w[i + 1].c_str());
        i += 2;
    }
    if (i >= w.size())
        return std::nullopt;
    const long long element = type_size(w[i]);
    if (element == 0)
        return std::nullopt;
    if (p.align == 0)
        p.align = element;
    long long count = 1;
    const std::string& name = w.back();
    if (const auto open = name.find('['); open != std::string::npos)
        count = std::atoll(name.c_str() + open + 1);
    p.size = element * count;
    return p;
}

// The Itanium <source-name> at p ("4name"), advancing p; empty when there is none.
std::string source_name(std::string_view s, std::size_t& p) {
    std::size_t n = 0;
    const std::size_t b = p;
    while (p < s.size() && std::isdigit(static_cast<unsigned char>(s[p])))
        n = n * 10 + static_cast<std::size_t>(s[p++] - '0');
    if (p == b || p + n > s.size())
        return {};
    std::string id(s.substr(p, n));
    p += n;
    return id.starts_with("_GLOBAL__N") ? "(anonymous namespace)" : id;
}

} // namespace

std::map<std::string, std::vector<PtxParam>> ptx_entries(std::string_view ptx) {
    std::map<std::string, std::vector<PtxParam>> out;
    for (std::size_t p = ptx.find(".entry"); p != std::string_view::npos;
         p = ptx.find(".entry", p)) {
        p += 6;
        while (p < ptx.size() && std::isspace(static_cast<unsigned char>(ptx[p])))
            ++p;
        const std::size_t b = p;
        while (p < ptx.size() && is_symbol_char(ptx[p]))
            ++p;
        const std::string name(ptx.substr(b, p - b));
        const std::size_t open = ptx.find_first_not_of(" \t\r\n", p);
        if (name.empty() || open == std::string_view::npos || ptx[open] != '(')
            continue;
        const std::size_t close = ptx.find(')', open);
        if (close == std::string_view::npos)
            break;
        std::vector<PtxParam> params;
        long long at = 0;
        std::string_view list = ptx.substr(open + 1, close - open - 1);
        while (!list.empty()) {
            const std::size_t comma = list.find(',');
            const std::string_view item = list.substr(0, comma);
            if (auto x = param(item)) {
                at = (at + x->align - 1) / x->align * x->align;
                x->offset = at;
                at += x->size;
                params.push_back(*x);
            }
            list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
        }
        out[name] = std::move(params);
        p = close;
    }
    return out;
}

std::string symbol_name(std::string_view s) {
    if (!s.starts_with("_Z"))
        return std::string(s);
    std::size_t p = 2;
    if (p < s.size() && s[p] == 'L')
        ++p;
    std::string out;
    auto add = [&](const std::string& part) { out += (out.empty() ? "" : "::") + part; };
    if (p < s.size() && s[p] == 'N') {
        ++p;
        while (p < s.size() && s[p] != 'E' && s[p] != 'I') {
            if (s.compare(p, 2, "St") == 0) {
                add("std");
                p += 2;
                continue;
            }
            const std::string id = source_name(s, p);
            if (id.empty())
                break;
            add(id);
        }
        return out;
    }
    if (s.compare(p, 2, "St") == 0) {
        add("std");
        p += 2;
    }
    add(source_name(s, p));
    return out;
}

VerifyReport verify(SignatureReport& report, const SourceSet& sources, CompileOptions options) {
    VerifyReport v;
    options.ptx = true;
    options.entry_optional = true; // a unit of templates only is still read for its PTX
    // The unit's PTX; "" (and a note) when NVRTC does not compile it.
    auto to_ptx = [&](const SourceFile& f, SourceFile program) -> std::string {
        SourceSet set = sources;
        set.add(program);
        try {
            std::string ptx = compile(set, program.name, options).ptx;
            ++v.units;
            return ptx;
        } catch (const CompileError& e) {
            const auto error =
                std::find_if(e.diagnostics.begin(), e.diagnostics.end(),
                             [](const Diagnostic& d) { return d.severity == Severity::error; });
            v.notes.push_back(f.path + ": NVRTC does not compile it: " +
                              (error == e.diagnostics.end() ? e.log.substr(0, e.log.find('\n'))
                                                            : error->format()));
        } catch (const std::exception& e) {
            v.notes.push_back(f.path + ": NVRTC does not compile it: " + e.what());
        }
        ++v.failed_units;
        return {};
    };
    std::map<std::string, std::vector<KernelSignature*>> by_unit;
    std::set<std::string> listing; // the units some kernel is listed from
    for (auto& k : report.kernels) {
        listing.insert(k.unit);
        const bool known = !k.entry.is_template && !k.unit.empty() && k.bytes >= 0 &&
                           std::none_of(k.diagnostics.begin(), k.diagnostics.end(),
                                        [](const Diagnostic& d) {
                                            return d.severity == Severity::error;
                                        });
        if (known)
            by_unit[k.unit].push_back(&k);
        else
            ++v.unchecked;
    }
    for (auto& [unit, kernels] : by_unit) {
        const SourceFile* f = sources.find(unit);
        if (!f)
            continue;
        // The unit itself, with each instantiation asked for made explicit after its last line.
        SourceFile program = *f;
        if (!program.is_kernel())
            program.name += ".kjit-verify.cu";
        bool primary = false;
        for (const KernelSignature* k : kernels)
            if (!k->entry.instantiation.empty()) {
                if (!primary)
                    program.text += "\ntemplate <auto> struct __kjit_sig_use {};\n";
                primary = true;
                program.text += "template struct __kjit_sig_use<&" + k->entry.instantiation + ">;\n";
            }
        const std::string ptx = to_ptx(*f, std::move(program));
        if (ptx.empty()) {
            v.unchecked += kernels.size();
            for (KernelSignature* k : kernels)
                k->diagnostics.push_back({k->path, k->entry.pos.line, k->entry.pos.column,
                                          Severity::note,
                                          "not verified: NVRTC does not compile " + f->path,
                                          ""});
            continue;
        }
        const auto entries = ptx_entries(ptx);
        for (KernelSignature* k : kernels) {
            const EntryPoint& e = k->entry;
            ++v.checked;
            auto it = entries.find(e.mangled);
            if (it == entries.end()) {
                // A mangling clang spells differently: the entry with its name and arity.
                std::vector<decltype(it)> same;
                for (auto j = entries.begin(); j != entries.end(); ++j)
                    if (symbol_name(j->first) == e.qualified &&
                        j->second.size() == e.params.size())
                        same.push_back(j);
                if (same.size() == 1)
                    it = same.front();
            }
            auto differ = [&](const std::string& why) {
                k->diagnostics.push_back({k->path, e.pos.line, e.pos.column, Severity::error,
                                          "the PTX disagrees with this layout: " + why, ""});
            };
            if (it == entries.end()) {
                differ("NVRTC's PTX has no .entry " + (e.mangled.empty() ? e.name : e.mangled));
                continue;
            }
            const auto& ptx_params = it->second;
            if (ptx_params.size() != e.params.size()) {
                differ(".entry " + it->first + " has " + std::to_string(ptx_params.size()) +
                       " parameter(s), not " + std::to_string(e.params.size()));
                continue;
            }
            std::string why;
            for (std::size_t i = 0; i < ptx_params.size(); ++i) {
                const PtxParam& q = ptx_params[i];
                if (q.size == e.params[i].size && q.offset == k->offsets[i])
                    continue;
                why += (why.empty() ? "" : "; ") + std::string("parameter ") +
                       std::to_string(i + 1) + " '" + e.params[i].name + "' is " +
                       std::to_string(e.params[i].size) + " bytes at offset " +
                       std::to_string(k->offsets[i]) + " here, " + std::to_string(q.size) +
                       " bytes at offset " + std::to_string(q.offset) + " in .entry " + it->first;
            }
            if (why.empty())
                ++v.agreed;
            else
                differ(why);
        }
    }
    // A `.cu` with no kernel listed may still hold one (a header's kernel is listed from the
    // first unit that includes it); one whose PTX has none compiles to nothing a launch can use.
    for (const std::string& unit : report.units) {
        const SourceFile* f = sources.find(unit);
        if (!f || listing.contains(unit))
            continue;
        const std::string ptx = to_ptx(*f, *f);
        if (!ptx.empty() && ptx_entries(ptx).empty()) {
            ++v.empty_units;
            v.notes.push_back(f->path +
                              ": compiles to no entry point (its kernels are behind a false "
                              "#if, or templates nothing instantiates): no launch can use it");
        }
    }
    return v;
}

std::string format_verify(const VerifyReport& v) {
    std::string out;
    for (const auto& n : v.notes)
        out += "kjit sig: error: " + n + "\n";
    return out + "verify: " + std::to_string(v.agreed) + " of " + std::to_string(v.checked) +
           " kernel(s) agree with the PTX (" + std::to_string(v.unchecked) + " not checked); " +
           std::to_string(v.units) + " translation unit(s) compiled, " +
           std::to_string(v.failed_units) + " did not" +
           (v.empty_units ? ", " + std::to_string(v.empty_units) + " compiled to no entry point"
                          : "") +
           "\n";
}

} // namespace kjit::lint
