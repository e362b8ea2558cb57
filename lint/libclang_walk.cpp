#include "lint/detail/libclang_api.hpp"

#include <algorithm>
#include <functional>

namespace kjit::lint::detail {

namespace {

struct Walk {
    const Libclang::Api& api;
    CXTranslationUnit tu;
    ParsedUnit& out;

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
            while (first < toks.size() && toks[first] != ")")
                ++first;
            ++first;
        }
        if (first < toks.size())
            m.body.assign(toks.begin() + static_cast<std::ptrdiff_t>(first), toks.end());
        out.macros.push_back(std::move(m));
    }

    // `__launch_bounds__(a, b)` is an attribute libclang does not expose: read its tokens.
    static std::vector<std::vector<std::string>> launch_bounds(const std::vector<std::string>& t) {
        std::vector<std::vector<std::string>> args;
        for (std::size_t i = 0; i + 1 < t.size(); ++i) {
            if ((t[i] != "__launch_bounds__" && t[i] != "launch_bounds") || t[i + 1] != "(")
                continue;
            int depth = 0;
            args.emplace_back();
            for (std::size_t j = i + 1; j < t.size(); ++j) {
                if (t[j] == "(" && depth++ == 0)
                    continue;
                if (t[j] == ")" && --depth == 0)
                    break;
                if (t[j] == "," && depth == 1)
                    args.emplace_back();
                else
                    args.back().push_back(t[j]);
            }
            break;
        }
        return args;
    }

    void function(CXCursor c, bool is_template) {
        bool global = false;
        EntryPoint e;
        children(c, [&](CXCursor child) {
            const CXCursorKind k = api.clang_getCursorKind(child);
            if (k == CXCursor_CUDAGlobalAttr)
                global = true;
            if (k == CXCursor_ParmDecl) {
                KernelParam p;
                p.name = api.str(api.clang_getCursorSpelling(child));
                const CXType type = api.clang_getCursorType(child);
                p.type = api.str(api.clang_getTypeSpelling(type));
                p.size = api.clang_Type_getSizeOf(type);
                p.align = api.clang_Type_getAlignOf(type);
                e.params.push_back(std::move(p));
            }
            return CXChildVisit_Continue;
        });
        if (!global)
            return;
        e.name = api.str(api.clang_getCursorSpelling(c));
        e.pos = pos(api.clang_getCursorLocation(c));
        e.is_template = is_template;
        // The attribute sits among the declaration's specifiers, before the name.
        auto toks = tokens(file_range(api.clang_getRangeStart(api.clang_getCursorExtent(c)),
                                      api.clang_getCursorLocation(c)));
        const auto name = std::find(toks.begin(), toks.end(), e.name);
        toks.erase(name, toks.end());
        e.launch_bounds = launch_bounds(toks);
        out.entries.push_back(std::move(e));
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
    if (file)
        p.file = set_name(api.str(api.clang_getFileName(file)));
    p.line = static_cast<int>(line);
    p.column = static_cast<int>(column);
    return p;
}

void read_declarations(const Libclang::Api& api, CXTranslationUnit tu, CXCursor parent,
                       ParsedUnit& out) {
    Walk{api, tu, out}.declarations(parent);
}

} // namespace kjit::lint::detail
