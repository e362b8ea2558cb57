#include "lint/detail/libclang_api.hpp"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>

namespace kjit::lint::detail {

namespace {

struct Walk {
    const Libclang::Api& api;
    CXTranslationUnit tu;
    const std::vector<std::string>& instantiations;
    ParsedUnit& out;
    std::vector<std::pair<SourcePos, std::string>> errors; // clang's errors, where they are
    std::map<std::string, std::size_t> seen;              // entry key -> index in out.entries

    SourcePos pos(CXSourceLocation loc) const { return source_pos(api, loc); }

    std::vector<std::string> tokens(CXSourceRange range) const {
        CXToken* toks = nullptr;
        unsigned n = 0;
        api.clang_tokenize(tu, range, &toks, &n);
        std::vector<std::string> out;
        out.reserve(n);
        for (unsigned i = 0; i < n; ++i)
            out.push_back(api.str(api.clang_getTokenSpelling(tu, toks[i])));
        if (toks)
            api.clang_disposeTokens(tu, toks, n);
        return out;
    }

    // The file text from `begin` to `end`: where a macro (`__global__`) starts the range, its
    // expansion in the file, so that tokenizing sees the file's own tokens.
    CXSourceRange file_range(CXSourceLocation begin, CXSourceLocation end) const {
        CXFile fb = nullptr, fe = nullptr;
        unsigned ob = 0, oe = 0;
        api.clang_getExpansionLocation(begin, &fb, nullptr, nullptr, &ob);
        api.clang_getExpansionLocation(end, &fe, nullptr, nullptr, &oe);
        if (!fb || fb != fe || oe < ob)
            return api.clang_getRange(begin, end);
        return api.clang_getRange(api.clang_getLocationForOffset(tu, fb, ob),
                                  api.clang_getLocationForOffset(tu, fb, oe));
    }

    // A callable visited over the children of `c`.
    void children(CXCursor c, const std::function<CXChildVisitResult(CXCursor)>& f) const {
        api.clang_visitChildren(
            c,
            [](CXCursor child, CXCursor, CXClientData data) {
                return (*static_cast<const std::function<CXChildVisitResult(CXCursor)>*>(data))(
                    child);
            },
            const_cast<std::function<CXChildVisitResult(CXCursor)>*>(&f));
    }

    void macro_definition(CXCursor c) {
        MacroDef m;
        m.pos = pos(api.clang_getCursorLocation(c));
        if (m.pos.file.empty())
            return;
        m.name = api.str(api.clang_getCursorSpelling(c));
        m.function_like = api.clang_Cursor_isMacroFunctionLike(c) != 0;
        auto toks = tokens(api.clang_getCursorExtent(c));
        std::size_t first = 1; // after the name
        if (m.function_like) {
            for (first = 2; first < toks.size() && toks[first] != ")"; ++first) {
                if (toks[first] == "...") {
                    m.variadic = true;
                    if (m.params.empty() || toks[first - 1] == ",")
                        m.params.emplace_back("__VA_ARGS__");
                } else if (toks[first] != ",") {
                    m.params.push_back(toks[first]);
                }
            }
            ++first;
        }
        if (first < toks.size())
            m.body.assign(toks.begin() + static_cast<std::ptrdiff_t>(first), toks.end());
        out.macros.push_back(std::move(m));
    }

    // The written tokens of `c`'s extent.
    std::vector<std::string> written(CXCursor c) const {
        const CXSourceRange r = api.clang_getCursorExtent(c);
        return tokens(file_range(api.clang_getRangeStart(r), api.clang_getRangeEnd(r)));
    }

    // Clang's first error within `range` (on the line of its start when the range is empty).
    std::string error_in(CXSourceRange range) const {
        const SourcePos b = pos(api.clang_getRangeStart(range));
        SourcePos e = pos(api.clang_getRangeEnd(range));
        if (e.line == 0)
            e = b;
        for (const auto& [where, text] : errors) {
            if (where.file != b.file)
                continue;
            const auto at = std::pair{where.line, where.column};
            if (at >= std::pair{b.line, b.column} &&
                (at <= std::pair{e.line, e.column} || (e.line == b.line && e.column <= b.column &&
                                                        where.line == b.line)))
                return text;
        }
        return {};
    }

    // The first of clang's errors on the line of `at`.
    std::string error_on_line(const SourcePos& at) const {
        for (const auto& [where, text] : errors)
            if (where.file == at.file && where.line == at.line)
                return text;
        return {};
    }

    // The integral template arguments of the specialization `fn`, by the names the template's
    // parameters have.
    std::map<std::string, long long> template_values(CXCursor fn) const {
        std::vector<std::string> names;
        children(api.clang_getSpecializedCursorTemplate(fn), [&](CXCursor c) {
            const CXCursorKind k = api.clang_getCursorKind(c);
            if (k == CXCursor_TemplateTypeParameter || k == CXCursor_NonTypeTemplateParameter ||
                k == CXCursor_TemplateTemplateParameter)
                names.push_back(api.str(api.clang_getCursorSpelling(c)));
            return CXChildVisit_Continue;
        });
        std::map<std::string, long long> out;
        const int n = api.clang_Cursor_getNumTemplateArguments(fn);
        for (int i = 0; i < n && static_cast<std::size_t>(i) < names.size(); ++i) {
            const auto u = static_cast<unsigned>(i);
            if (api.clang_Cursor_getTemplateArgumentKind(fn, u) ==
                    CXTemplateArgumentKind_Integral &&
                !names[u].empty())
                out[names[u]] = api.clang_Cursor_getTemplateArgumentValue(fn, u);
        }
        return out;
    }

    // Whether `c` has a body: with bodies skipped, its extent ends at the body's opening brace.
    bool has_body(CXCursor c) const {
        const CXSourceLocation end = api.clang_getRangeEnd(api.clang_getCursorExtent(c));
        const auto last = tokens(api.clang_getRange(end, end));
        return !last.empty() && (last.front() == "{" || last.front() == "}");
    }

    KernelParam param(CXCursor parm) const {
        KernelParam p;
        p.name = api.str(api.clang_getCursorSpelling(parm));
        p.pos = pos(api.clang_getCursorLocation(parm));
        const CXType type = api.clang_getCursorType(parm);
        p.type = api.str(api.clang_getTypeSpelling(type));
        if (api.clang_isInvalidDeclaration(parm)) {
            // Clang took the type for `int`: a size from it would be a guess.
            auto toks = written(parm);
            if (!toks.empty() && toks.back() == p.name)
                toks.pop_back();
            std::string as_written;
            for (const auto& t : toks) {
                const bool glue = as_written.empty() || t == "::" || t == "," || t == ">" ||
                                  t == "*" || t == "&" || as_written.ends_with("::") ||
                                  as_written.ends_with("<");
                as_written += (glue ? "" : " ") + t;
            }
            if (!as_written.empty())
                p.type = as_written;
            const std::string why = error_in(api.clang_getCursorExtent(parm));
            p.error = "the type of parameter '" + p.name + "' (" + p.type + ") is not known" +
                      (why.empty() ? "" : ": " + why);
            return p;
        }
        // NVRTC passes an array or function parameter as the pointer it decays to.
        const CXType canonical = api.clang_getCanonicalType(type);
        const auto is_array = [](CXTypeKind k) {
            return k == CXType_ConstantArray || k == CXType_IncompleteArray ||
                   k == CXType_VariableArray || k == CXType_DependentSizedArray;
        };
        if (is_array(type.kind) || is_array(canonical.kind)) {
            const CXType array = is_array(type.kind) ? type : canonical;
            p.type = api.str(api.clang_getTypeSpelling(api.clang_getArrayElementType(array))) + " *";
            p.size = p.align = 8;
            return p;
        }
        switch (canonical.kind) {
        case CXType_FunctionProto:
        case CXType_FunctionNoProto:
            p.type += " *";
            p.size = p.align = 8;
            return p;
        default:
            break;
        }
        const long long size = api.clang_Type_getSizeOf(type);
        const long long align = api.clang_Type_getAlignOf(type);
        if (size == CXTypeLayoutError_Dependent || align == CXTypeLayoutError_Dependent) {
            p.dependent = true;
        } else if (size < 0 || align <= 0) {
            p.error = "the size of parameter '" + p.name + "' (" + p.type + ") is not known: " +
                      (size == CXTypeLayoutError_Incomplete ? "its type is declared, never defined"
                                                            : "clang cannot lay its type out");
        } else {
            p.size = size;
            p.align = align;
        }
        return p;
    }

    bool is_global(CXCursor c) const {
        bool global = false;
        children(c, [&](CXCursor child) {
            if (api.clang_getCursorKind(child) == CXCursor_CUDAGlobalAttr)
                global = true;
            return CXChildVisit_Continue;
        });
        return global;
    }

    // "ns::name": the namespaces `c` is declared in.
    std::string qualified(CXCursor c) const {
        std::string q = api.str(api.clang_getCursorSpelling(c));
        for (CXCursor p = api.clang_getCursorSemanticParent(c);
             api.clang_getCursorKind(p) == CXCursor_Namespace;
             p = api.clang_getCursorSemanticParent(p)) {
            const std::string n = api.str(api.clang_getCursorSpelling(p));
            q = (n.empty() ? "(anonymous namespace)" : n) + "::" + q;
        }
        return q;
    }

    EntryPoint entry(CXCursor c, bool is_template) const {
        EntryPoint e;
        e.name = api.str(api.clang_getCursorSpelling(c));
        e.qualified = qualified(c);
        if (!is_template)
            e.mangled = api.str(api.clang_Cursor_getMangling(c));
        e.pos = pos(api.clang_getCursorLocation(c));
        e.is_template = is_template;
        e.is_definition = api.clang_isCursorDefinition(c) != 0 || has_body(c);
        const int n = is_template ? -1 : api.clang_Cursor_getNumArguments(c);
        if (n >= 0) {
            for (int i = 0; i < n; ++i)
                e.params.push_back(param(api.clang_Cursor_getArgument(c, static_cast<unsigned>(i))));
        } else {
            children(c, [&](CXCursor child) {
                if (api.clang_getCursorKind(child) == CXCursor_ParmDecl)
                    e.params.push_back(param(child));
                return CXChildVisit_Continue;
            });
        }
        // `__launch_bounds__` sits among the declaration's specifiers, before the name.
        auto toks = tokens(file_range(api.clang_getRangeStart(api.clang_getCursorExtent(c)),
                                      api.clang_getCursorLocation(c)));
        toks.erase(std::find(toks.begin(), toks.end(), e.name), toks.end());
        e.specifiers = std::move(toks);
        return e;
    }

    void add(EntryPoint e, const std::string& key) {
        const auto [it, fresh] = seen.try_emplace(key, out.entries.size());
        if (fresh)
            out.entries.push_back(std::move(e));
        else if (e.is_definition && !out.entries[it->second].is_definition)
            out.entries[it->second] = std::move(e); // the definition's position wins
    }

    void function(CXCursor c, bool is_template) {
        if (is_global(c))
            add(entry(c, is_template), api.str(api.clang_getCursorUSR(c)));
    }

    // A kInstantiation variable: `auto* __kjit_sig_instantiation_N = &EXPR;`.
    void instantiation(CXCursor var, std::size_t index) {
        CXCursor target = var;
        bool found = false;
        children(var, [&](CXCursor child) {
            if (api.clang_getCursorKind(child) == CXCursor_DeclRefExpr) {
                const CXCursor ref = api.clang_getCursorReferenced(child);
                if (api.clang_getCursorKind(ref) == CXCursor_FunctionDecl) {
                    target = ref;
                    found = true;
                    return CXChildVisit_Break;
                }
            }
            return CXChildVisit_Recurse;
        });
        const std::string& expr = instantiations[index];
        if (!found || !is_global(target)) {
            EntryPoint e;
            e.name = e.instantiation = expr;
            // The variable's line is kjit's own: any error on it is why (an invalid initializer
            // leaves the declaration's extent short of the expression).
            const std::string why = error_on_line(pos(api.clang_getCursorLocation(var)));
            e.error = !found ? "'" + expr + "' names no kernel instantiation in this file" +
                                   (why.empty() ? "" : ": " + why)
                             : "'" + expr + "' names a function that is not __global__";
            out.entries.push_back(std::move(e));
            return;
        }
        EntryPoint k = entry(target, false);
        k.instantiation = expr;
        k.template_values = template_values(target);
        k.is_definition = true;
        const std::string key = "instantiation:" + k.mangled;
        add(std::move(k), key);
    }

    void declarations(CXCursor parent) {
        children(parent, [&](CXCursor c) {
            switch (api.clang_getCursorKind(c)) {
            case CXCursor_MacroDefinition:
                macro_definition(c);
                break;
            case CXCursor_MacroExpansion: {
                MacroUse u{api.str(api.clang_getCursorSpelling(c)),
                           pos(api.clang_getCursorLocation(c))};
                out.uses.push_back(std::move(u));
                break;
            }
            case CXCursor_FunctionDecl:
                function(c, false);
                break;
            case CXCursor_FunctionTemplate:
                function(c, true);
                break;
            case CXCursor_VarDecl: {
                const std::string name = api.str(api.clang_getCursorSpelling(c));
                if (name.starts_with(kInstantiation)) {
                    const std::size_t n = std::strtoul(name.c_str() + kInstantiation.size(),
                                                       nullptr, 10);
                    if (n < instantiations.size())
                        instantiation(c, n);
                }
                break;
            }
            case CXCursor_Namespace:
            case CXCursor_LinkageSpec:
            case CXCursor_UnexposedDecl: // extern "C" { } in clang 14
                declarations(c);
                break;
            default:
                break;
            }
            return CXChildVisit_Continue;
        });
    }
};

} // namespace

std::string set_name(const std::string& path) {
    if (!path.starts_with(kRoot) || path == kPrelude)
        return {};
    return path.substr(kRoot.size());
}

SourcePos source_pos(const Libclang::Api& api, CXSourceLocation loc) {
    CXFile file = nullptr;
    unsigned line = 0, column = 0;
    api.clang_getExpansionLocation(loc, &file, &line, &column, nullptr);
    SourcePos p;
    if (file) {
        const std::string path = api.str(api.clang_getFileName(file));
        p.file = set_name(path);
        if (p.file.empty() && !path.starts_with(kRoot))
            p.disk_path = path;
    }
    p.line = static_cast<int>(line);
    p.column = static_cast<int>(column);
    return p;
}

void read_declarations(const Libclang::Api& api, CXTranslationUnit tu, CXCursor parent,
                       const std::vector<std::string>& instantiations, ParsedUnit& out) {
    Walk w{api, tu, instantiations, out, {}, {}};
    for (unsigned i = 0, n = api.clang_getNumDiagnostics(tu); i < n; ++i) {
        CXDiagnostic d = api.clang_getDiagnostic(tu, i);
        if (api.clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error)
            w.errors.emplace_back(source_pos(api, api.clang_getDiagnosticLocation(d)),
                                  api.str(api.clang_getDiagnosticSpelling(d)));
        api.clang_disposeDiagnostic(d);
    }
    w.declarations(parent);
}

} // namespace kjit::lint::detail
