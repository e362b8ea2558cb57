#include "lint/preprocess.hpp"

#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

namespace kjit::lint {

namespace {

namespace fs = std::filesystem;

enum class State { live, maybe, dead };

unsigned char bit(State s) {
    return s == State::live ? kReachLive : s == State::maybe ? kReachMaybe : kReachDead;
}

// One #if ... #endif group being walked.
struct Frame {
    State parent;
    State state;
    bool any_true;  // a branch so far was taken for certain
    bool any_maybe; // a branch so far may have been taken
};

Macro object_macro(const std::string& value) {
    Macro m;
    m.body = tokenize(value);
    return m;
}

// Directive tokens as text.
std::vector<std::string> texts(const std::vector<PpToken>& args, std::size_t from = 0) {
    std::vector<std::string> out;
    for (std::size_t i = from; i < args.size(); ++i)
        out.push_back(args[i].text);
    return out;
}

class Walker {
  public:
    explicit Walker(const WalkOptions& o) : o_(o), macros_(o.predefined) {
        for (const auto& [name, value] : o.defines)
            macros_[name] = object_macro(value);
    }

    WalkResult run(const SourceFile& main) {
        if (const ScannedSource* s = o_.scans->set_file(main.name))
            visit(*s, main.name, {}, State::live, 0, -1);
        return std::move(out_);
    }

  private:
    static constexpr int kMaxDepth = 200;
    static constexpr std::size_t kDiskBudget = 400000; // directives read in toolkit headers

    std::optional<long long> value_of(const Directive& d) {
        if (d.name == "ifdef" || d.name == "ifndef" || d.name == "elifdef" ||
            d.name == "elifndef") {
            if (d.args.empty() || !is_identifier(d.args[0].text))
                return std::nullopt;
            const auto it = macros_.find(d.args[0].text);
            if (it != macros_.end() && it->second.opaque)
                return std::nullopt;
            const bool defined = it != macros_.end();
            return (d.name == "ifdef" || d.name == "elifdef") ? defined : !defined;
        }
        const std::vector<std::string> tokens = texts(d.args);
        return evaluate_condition(tokens, macros_, [&](const std::string& name, bool angled) {
            return std::optional<bool>(lookup(name, angled, {}, {}).found());
        });
    }

    ResolvedInclude lookup(const std::string& name, bool angled, const std::string& includer,
                           const fs::path& next_after) const {
        if (next_after.empty())
            return o_.resolver->resolve(name, angled, includer);
        // #include_next in a header on disk: the search goes on after that header's directory.
        ResolvedInclude r;
        bool after = false;
        for (const auto& dir : o_.resolver->search_dirs()) {
            if (after) {
                std::error_code ec;
                if (fs::is_regular_file(fs::path(dir) / name, ec)) {
                    r.where = ResolvedInclude::Where::toolkit;
                    r.path = fs::path(dir) / name;
                    return r;
                }
            }
            const std::string d = dir + "/";
            after = after || next_after.string().starts_with(d);
        }
        return after ? r : o_.resolver->resolve(name, angled, includer);
    }

    void record_condition(const Directive& d, const std::string& file, std::size_t index) {
        ConditionEvent e{file, index, {}, uncertain_};
        const std::vector<std::string> tokens = texts(d.args);
        const auto has = [&](const std::string& name, bool angled) {
            return std::optional<bool>(lookup(name, angled, {}, {}).found());
        };
        for (const std::size_t a : condition_reads(d)) {
            if (macros_.contains(d.args[a].text))
                continue;
            // A name whose value cannot change the outcome is not read: `!defined(__HIPCC__) ||
            // HIP_VERSION < 40400000` is true whatever HIP_VERSION is.
            std::vector<std::string> probe = tokens;
            probe[a] = std::string(kUnknownToken);
            if (!evaluate_condition(probe, macros_, has))
                e.undefined.push_back(a);
        }
        out_.conditions.push_back(std::move(e));
    }

    // `set_name` for a file of the set, else `path` on disk; `top` is the index of the set
    // file's include event that led into a header on disk (-1 in the set).
    void visit(const ScannedSource& s, const std::string& set_name, const fs::path& path,
               State base, int depth, long top, const std::string& toolkit = {}) {
        const bool in_set = !set_name.empty();
        std::vector<unsigned char>* reach = nullptr;
        if (in_set) {
            reach = &out_.reach[set_name];
            reach->resize(s.directives.size(), 0);
        }
        std::vector<Frame> frames;
        for (std::size_t i = 0; i < s.directives.size(); ++i) {
            const Directive& d = s.directives[i];
            const State state = frames.empty() ? base : frames.back().state;
            if (reach)
                (*reach)[i] |= bit(state);
            if (!in_set && ++disk_read_ > kDiskBudget) {
                uncertain_ = true;
                return;
            }
            if (is_conditional_start(d.name)) {
                if (state == State::dead) {
                    frames.push_back({State::dead, State::dead, true, false});
                    continue;
                }
                if (in_set && state == State::live && d.name == "if")
                    record_condition(d, set_name, i);
                frames.push_back({state, State::dead, false, false});
                branch(frames.back(), value_of(d));
                continue;
            }
            if (is_conditional_else(d.name) || d.name == "elifdef" || d.name == "elifndef") {
                if (frames.empty())
                    continue;
                Frame& f = frames.back();
                if (f.parent == State::dead || f.any_true) {
                    f.state = State::dead;
                    continue;
                }
                if (d.name == "else") {
                    branch(f, 1);
                    continue;
                }
                if (in_set && f.parent == State::live && !f.any_maybe && d.name == "elif")
                    record_condition(d, set_name, i);
                branch(f, value_of(d));
                continue;
            }
            if (d.name == "endif") {
                if (!frames.empty())
                    frames.pop_back();
                continue;
            }
            if (state == State::dead)
                continue;
            if (d.name == "define") {
                if (auto def = parse_define(d)) {
                    if (state == State::maybe)
                        def->second.opaque = true;
                    macros_[def->first] = std::move(def->second);
                }
            } else if (d.name == "undef") {
                if (!d.args.empty()) {
                    const auto it = macros_.find(d.args[0].text);
                    if (state == State::live && it != macros_.end())
                        macros_.erase(it);
                    else if (it != macros_.end())
                        it->second.opaque = true;
                }
            } else if (d.name == "pragma") {
                if (!d.args.empty() && d.args[0].text == "once")
                    once_.insert(in_set ? "set:" + set_name : path.string());
            } else if (d.name == "include" || d.name == "include_next" || d.name == "import") {
                include(d, i, set_name, path, state, depth, top, toolkit);
            }
        }
    }

    static void branch(Frame& f, std::optional<long long> v) {
        if (v && *v == 0) {
            f.state = State::dead;
        } else if (v) {
            f.state = f.any_maybe ? State::maybe : f.parent;
            f.any_true = true;
        } else {
            f.state = State::maybe;
            f.any_maybe = true;
        }
    }

    void include(const Directive& d, std::size_t index, const std::string& set_name,
                 const fs::path& path, State state, int depth, long top,
                 const std::string& toolkit) {
        if (d.args.empty())
            return;
        std::vector<std::string> operand = texts(d.args);
        const std::string& first = d.args[0].text;
        if (!(first.size() >= 2 && (first.front() == '<' || first.front() == '"'))) {
            // `#include MACRO`: the name is what the macro expands to.
            const auto expanded = expand(operand, macros_);
            if (!expanded || expanded->empty()) {
                uncertain_ = true;
                return;
            }
            operand = *expanded;
        }
        std::string name;
        bool angled = false;
        if (operand.size() == 1 && operand[0].size() >= 2 && operand[0].front() == '"' &&
            operand[0].back() == '"') {
            name = operand[0].substr(1, operand[0].size() - 2);
        } else if (operand[0].size() >= 2 && operand[0].front() == '<' &&
                   operand[0].back() == '>') {
            name = operand[0].substr(1, operand[0].size() - 2);
            angled = true;
        } else if (operand.front() == "<" && operand.back() == ">") {
            for (std::size_t k = 1; k + 1 < operand.size(); ++k)
                name += operand[k];
            angled = true;
        } else {
            uncertain_ = true;
            return;
        }
        const bool in_set = !set_name.empty();
        const bool next = d.name == "include_next" && !in_set;
        const ResolvedInclude r =
            lookup(name, angled, in_set ? set_name : path.string(), next ? path : fs::path{});
        long event = top;
        if (in_set && state == State::live) {
            event = static_cast<long>(out_.includes.size());
            out_.includes.push_back({set_name, index, name, angled, r, {}, {}});
        }
        if (!r.found()) {
            uncertain_ = true;
            if (!in_set && state == State::live && top >= 0 &&
                out_.includes[static_cast<std::size_t>(top)].broken.empty()) {
                IncludeEvent& e = out_.includes[static_cast<std::size_t>(top)];
                e.broken = path.string() + ":" + std::to_string(d.line) + " includes " +
                           (angled ? "<" + name + ">" : "\"" + name + "\"") +
                           ", which NVRTC cannot find";
                e.broken_toolkit = toolkit;
            }
            return;
        }
        if (depth >= kMaxDepth) {
            uncertain_ = true;
            return;
        }
        if (r.where == ResolvedInclude::Where::source) {
            if (once_.contains("set:" + r.file->name))
                return;
            if (const ScannedSource* s = o_.scans->set_file(r.file->name))
                visit(*s, r.file->name, {}, state, depth + 1, -1);
            return;
        }
        if (once_.contains(r.path.string()))
            return;
        if (disk_read_ > kDiskBudget) {
            uncertain_ = true;
            return;
        }
        const bool enters_toolkit =
            toolkit.empty() && r.where == ResolvedInclude::Where::toolkit;
        if (const ScannedSource* s = o_.scans->disk_file(r.path))
            visit(*s, {}, r.path, state, depth + 1, event, enters_toolkit ? name : toolkit);
        else
            uncertain_ = true;
    }

    const WalkOptions& o_;
    Macros macros_;
    std::set<std::string> once_;
    WalkResult out_;
    bool uncertain_ = false;
    std::size_t disk_read_ = 0;
};

} // namespace

Macros nvrtc_macros(std::string_view arch, int nvrtc_version) {
    Macros m;
    auto set = [&](const std::string& name, const std::string& value) {
        m[name] = object_macro(value);
    };
    // "sm_90a" -> 900 and the arch-specific macros; "compute_100f" -> 1000 and the family's.
    std::string digits;
    std::size_t k = arch.find('_');
    for (k = k == std::string_view::npos ? 0 : k + 1; k < arch.size() && std::isdigit(
                                                            static_cast<unsigned char>(arch[k]));
         ++k)
        digits += arch[k];
    const std::string suffix(arch.substr(k));
    const std::string cuda_arch = digits.empty() ? "900" : digits + "0";
    set("__CUDACC__", "1");
    set("__CUDACC_RTC__", "1");
    set("__CUDA_ARCH__", cuda_arch);
    set("__CUDA_ARCH_LIST__", cuda_arch);
    if (suffix == "a" || suffix == "f")
        set("__CUDA_ARCH_FAMILY_SPECIFIC__", cuda_arch);
    if (suffix == "a") {
        set("__CUDA_ARCH_SPECIFIC__", cuda_arch);
        set("__CUDA_ARCH_FEAT_SM" + digits + "_ALL", "1");
    }
    set("__CUDACC_VER_MAJOR__", std::to_string(nvrtc_version / 1000));
    set("__CUDACC_VER_MINOR__", std::to_string(nvrtc_version % 1000 / 10));
    set("CUDART_VERSION", std::to_string(nvrtc_version));
    set("__cplusplus", "201703L");
    set("__NVCC_DIAG_PRAGMA_SUPPORT__", "1");
    set("__LP64__", "1");
    set("__EDG__", "1");
    set("__STDC__", "1");
    set("__USE_FAST_MATH__", "0");
    set("__cpp_constexpr", "201603L");
    set("__cpp_if_constexpr", "201606L");
    // Defined, with values kjit does not model: a condition on them is not evaluated.
    Macro opaque;
    opaque.opaque = true;
    m["__CUDACC_VER_BUILD__"] = opaque;
    Macro feature = opaque;
    feature.function_like = true;
    feature.params = {"x"};
    m["__CUDA_ARCH_HAS_FEATURE__"] = feature;
    return m;
}

const ScannedSource* ScanCache::set_file(const std::string& name) {
    const std::lock_guard lock(mutex_);
    auto it = set_.find(name);
    if (it == set_.end()) {
        const SourceFile* f = sources_->find(name);
        it = set_.emplace(name, f ? std::make_unique<ScannedSource>(scan(f->text)) : nullptr)
                 .first;
    }
    return it->second.get();
}

const ScannedSource* ScanCache::disk_file(const fs::path& path) {
    const std::lock_guard lock(mutex_);
    auto it = disk_.find(path);
    if (it == disk_.end()) {
        std::ifstream in(path, std::ios::binary);
        std::unique_ptr<ScannedSource> s;
        if (in) {
            std::ostringstream text;
            text << in.rdbuf();
            s = std::make_unique<ScannedSource>(scan(text.str()));
        }
        it = disk_.emplace(path, std::move(s)).first;
    }
    return it->second.get();
}

WalkResult walk(const SourceFile& main, const WalkOptions& options) {
    return Walker(options).run(main);
}

std::vector<std::size_t> condition_reads(const Directive& d) {
    std::vector<std::size_t> out;
    const auto& a = d.args;
    std::set<std::string_view> tested; // `defined(X) && X > 2` reads X only when it is set
    for (std::size_t i = 0; i + 1 < a.size(); ++i)
        if (a[i].text == "defined")
            tested.insert(a[i + 1].text == "(" && i + 2 < a.size() ? a[i + 2].text : a[i + 1].text);
    for (std::size_t i = 0; i < a.size(); ++i) {
        const std::string& t = a[i].text;
        if (!is_identifier(t) || tested.contains(t) || t == "true" || t == "false" ||
            !alternative_operator(t).empty())
            continue;
        if (t == "defined") {
            i += i + 1 < a.size() && a[i + 1].text == "(" ? 2 : 1;
            continue;
        }
        if (is_has_operator(t) || is_reserved(t)) {
            // __has_include(<x>) and friends take arguments that are no macro names
            if (i + 1 < a.size() && a[i + 1].text == "(") {
                int depth = 0;
                for (++i; i < a.size(); ++i) {
                    depth += a[i].text == "(" ? 1 : a[i].text == ")" ? -1 : 0;
                    if (depth == 0)
                        break;
                }
            }
            continue;
        }
        out.push_back(i);
    }
    return out;
}

} // namespace kjit::lint
