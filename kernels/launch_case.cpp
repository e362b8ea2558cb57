#include "kernels/launch_case.hpp"

#include "core/error.hpp"
#include "core/names.hpp"
#include "runtime/stream.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <regex>

namespace kjit {

std::vector<const Function*> step_functions(const CasePlan& plan, const EntryLookup& lookup) {
    std::vector<const Function*> out;
    for (const StepPlan& s : plan.steps)
        out.push_back(s.kind == PipelineStep::Kind::launch ? &lookup(s.entry) : nullptr);
    return out;
}

std::string launch_problem(const CasePlan& plan, const StepPlan& step, const EntryParams& entry) {
    std::vector<std::size_t> sizes;
    std::vector<ArgKind> kinds;
    for (const ParamRef& r : step.params) {
        sizes.push_back(r.scalar ? plan.scalars[r.index].size : sizeof(CUdeviceptr));
        kinds.push_back(param_kind(plan, r));
    }
    if (std::string why = param_mismatch(entry.params, sizes, kinds); !why.empty())
        return why;
    if (entry.max_threads && step.block.volume() > entry.max_threads)
        return "block " + step.block.str() + " has " + std::to_string(step.block.volume()) +
               " threads; the kernel's __launch_bounds__ allow " +
               std::to_string(entry.max_threads);
    return {};
}

std::string step_launch_problem(const CasePlan& plan, std::size_t index,
                                const CompiledKernel& compiled, const std::string& source_file,
                                std::string& where_key) {
    const StepPlan& step = plan.steps.at(index);
    const std::string what = "step " + std::to_string(index + 1);
    where_key = what;
    if (const EntryParams* entry = compiled.entry(step.entry)) {
        std::string problem = launch_problem(plan, step, *entry);
        if (problem.starts_with("block "))
            where_key = what + " block[0]";
        return problem;
    }
    std::vector<std::string> symbols;
    for (const EntryParams& e : compiled.entries)
        symbols.push_back(e.entry);
    where_key = what + " entry";
    return source_file + " has no entry point '" + step.entry + "'" +
           missing_entry_hint(step.entry, symbols);
}

std::string unknown_entry_problem(const CasePlan& plan, const std::string& error,
                                  const std::string& source_file, std::string& where_key) {
    std::vector<std::string> entries;
    for (const StepPlan& step : plan.steps)
        entries.push_back(step.entry);
    const std::optional<NameMapError> m = name_map_error(error, entries);
    if (!m)
        return {};
    const std::size_t k = static_cast<std::size_t>(
        std::find(entries.begin(), entries.end(), m->expression) - entries.begin());
    where_key = "step " + std::to_string(k + 1) + " entry";
    return "step " + std::to_string(k + 1) + " names entry '" + m->expression +
           "', which no kernel of " + source_file + " is (NVRTC: " + m->nvrtc + ")";
}

namespace {

/// The C++ the probe compiles after the kernel: kjit_probe_::fits<Expect, P> for a parameter
/// type P (cv-qualifiers dropped), Expect 1 f32 buffer, 2 bf16 buffer, 3 integer scalar.
constexpr std::string_view kProbe = R"(namespace kjit_probe_ {
template <class T> struct unq { using type = T; };
template <class T> struct unq<const T> { using type = T; };
template <class T> struct unq<volatile T> { using type = T; };
template <class T> struct unq<const volatile T> { using type = T; };
template <int I, class... A> struct at;
template <class H, class... T> struct at<0, H, T...> { using type = H; };
template <int I, class H, class... T> struct at<I, H, T...> : at<I - 1, T...> {};
template <int I, class F> struct param;
template <int I, class R, class... A> struct param<I, R(A...)> {
  using type = typename at<I, A...>::type;
};
template <class T> struct integer { static constexpr bool value = false; };
template <> struct integer<bool> { static constexpr bool value = true; };
template <> struct integer<char> { static constexpr bool value = true; };
template <> struct integer<signed char> { static constexpr bool value = true; };
template <> struct integer<unsigned char> { static constexpr bool value = true; };
template <> struct integer<short> { static constexpr bool value = true; };
template <> struct integer<unsigned short> { static constexpr bool value = true; };
template <> struct integer<int> { static constexpr bool value = true; };
template <> struct integer<unsigned> { static constexpr bool value = true; };
template <> struct integer<long> { static constexpr bool value = true; };
template <> struct integer<unsigned long> { static constexpr bool value = true; };
template <> struct integer<long long> { static constexpr bool value = true; };
template <> struct integer<unsigned long long> { static constexpr bool value = true; };
// 0: an element type kjit does not judge (void, int, float4, a struct)
template <class T> struct element { static constexpr int value = 0; };
template <> struct element<float> { static constexpr int value = 1; };
template <> struct element<double> { static constexpr int value = 4; };
#ifdef __CUDA_BF16_TYPES_EXIST__
template <> struct element<__nv_bfloat16> { static constexpr int value = 2; };
#endif
#ifdef __CUDA_FP16_TYPES_EXIST__
template <> struct element<__half> { static constexpr int value = 5; };
#endif
template <int Expect, class P> struct fits {
  static constexpr bool value = Expect == 3 || !integer<P>::value;
};
template <int Expect, class T> struct fits<Expect, T*> {
  static constexpr int e = element<typename unq<T>::type>::value;
  static constexpr bool value = Expect != 3 && (e == 0 || e == Expect);
};
template <int Expect, class P> struct fits<Expect, P* const> : fits<Expect, P*> {};
template <int Step, int Index, class T> struct declared;
}
)";

/// The probe's code for an argument: 1 f32 buffer, 2 bf16 buffer, 3 integer scalar; 0 when the
/// PTX's check says all there is (a floating scalar).
int expectation(const CasePlan& plan, const ParamRef& r) {
    if (!r.scalar)
        return plan.buffers[r.index].dtype == DType::bf16 ? 2 : 1;
    switch (plan.scalars[r.index].type) {
    case ArgType::i32:
    case ArgType::u32:
    case ArgType::i64:
    case ArgType::u64:
        return 3;
    default:
        return 0;
    }
}

/// Whether `entry` can be named in C++ (`k`, `ns::k`, `k<float, 4>`): not a mangled symbol.
bool nameable(std::string_view entry) {
    return !entry.empty() && !entry.starts_with("_Z") &&
           (std::isalpha(static_cast<unsigned char>(entry[0])) || entry[0] == '_' ||
            entry[0] == ':');
}

} // namespace

std::string launch_type_problem(const CasePlan& plan, const SourceSet& sources,
                                const CompileOptions& options, std::string& where_key) {
    // One static_assert per judged argument, its message "kjit_probe_ S I" (0-based step and
    // parameter), and the same check showing the declared type where it fails.
    std::string asserts, shows;
    for (std::size_t s = 0; s < plan.steps.size(); ++s) {
        const StepPlan& step = plan.steps[s];
        if (step.kind != PipelineStep::Kind::launch || !nameable(step.entry))
            continue;
        for (std::size_t i = 0; i < step.params.size(); ++i) {
            const int expect = expectation(plan, step.params[i]);
            if (!expect)
                continue;
            const std::string p =
                "kjit_probe_::param<" + std::to_string(i) + ", decltype(" + step.entry + ")>::type";
            const std::string at = std::to_string(s) + " " + std::to_string(i);
            asserts += "static_assert(kjit_probe_::fits<" + std::to_string(expect) + ", " + p +
                       ">::value, \"kjit_probe_ " + at + "\");\n";
            shows += "#if KJIT_PROBE_SHOW_ == " + std::to_string(s * 1000 + i) +
                     "\nusing kjit_probe_show_ = kjit_probe_::declared<" + std::to_string(s) +
                     ", " + std::to_string(i) + ", " + p + ">::type;\n#endif\n";
        }
    }
    if (asserts.empty())
        return {};
    const std::string log =
        front_end_log(sources, plan.source, options, std::string(kProbe) + asserts);
    if (log.empty())
        return {};
    static const std::regex failed(R"re(static assertion failed with "kjit_probe_ (\d+) (\d+)")re");
    std::smatch m;
    if (!std::regex_search(log, m, failed)) {
        // The probe itself did not compile: an entry it cannot name (an overload set), which
        // is said rather than passed unchecked.
        static const std::regex error(R"(error: ([^\n]*))");
        std::smatch e;
        where_key = "step 1 entry";
        return "the types of the launches' parameters could not be read from " + plan.source +
               ".cu (NVRTC: " + (std::regex_search(log, e, error) ? e[1].str() : log) + ")";
    }
    const std::size_t s = std::stoul(m[1]), i = std::stoul(m[2]);
    // The declared type, as the source spells it (and what it stands for, after "aka").
    CompileOptions show = options;
    show.defines["KJIT_PROBE_SHOW_"] = std::to_string(s * 1000 + i);
    const std::string shown =
        front_end_log(sources, plan.source, show, std::string(kProbe) + shows);
    static const std::regex declared(
        R"re(kjit_probe_::declared<\d+, \d+, (.*?)>"(?: \(aka "kjit_probe_::declared<\d+, \d+, (.*?)>"\))?)re");
    std::string type = "another type", spelled;
    if (std::smatch d; std::regex_search(shown, d, declared)) {
        // The type itself (NVRTC names the probe's alias first, then what it stands for).
        spelled = d[2].matched ? d[2].str() : d[1].str();
        type = "'" + spelled + "'";
    }
    const StepPlan& step = plan.steps[s];
    const ParamRef& r = step.params[i];
    const std::string name = r.scalar ? plan.scalars[r.index].name : plan.buffers[r.index].name;
    const std::string contract_type =
        r.scalar ? std::string(arg_type_name(plan.scalars[r.index].type))
                 : std::string(dtype_name(plan.buffers[r.index].dtype)) + "*";
    where_key = "argument " + name + " type";
    const std::string why =
        r.scalar ? "the kernel would read the number as an address"
        : spelled.find('*') != std::string::npos
            ? "the PTX keeps no element type, so it would launch and read the bytes as another type"
            : "the kernel would read the address as a number";
    return "step " + std::to_string(s + 1) + " (" + step.entry + "): argument '" + name + "', " +
           contract_type + ", is parameter " + std::to_string(i + 1) + ", which " + plan.source +
           ".cu declares as " + type + ": " + why;
}

LaunchConfig enqueue_case(const CasePlan& plan, std::span<const Function* const> functions,
                          std::span<const CUdeviceptr> buffers, CUstream stream) {
    if (functions.size() != plan.steps.size() || buffers.size() != plan.buffers.size())
        throw Error(plan.kernel + ": " + std::to_string(plan.steps.size()) + " steps over " +
                    std::to_string(plan.buffers.size()) + " buffers, given " +
                    std::to_string(functions.size()) + " functions and " +
                    std::to_string(buffers.size()) + " buffers");
    LaunchConfig last;
    for (std::size_t s = 0; s < plan.steps.size(); ++s) {
        const StepPlan& step = plan.steps[s];
        if (step.kind == PipelineStep::Kind::copy) {
            const CUresult r = driver().cuMemcpyDtoDAsync(buffers[step.to], buffers[step.from],
                                                          plan.buffers[step.to].bytes(), stream);
            if (r != CUDA_SUCCESS) // the context is built only on failure
                check(r, "cuMemcpyDtoDAsync",
                      plan.kernel + " " + plan.buffers[step.from].name + " -> " +
                          plan.buffers[step.to].name);
            continue;
        }
        // Parameters point into these arrays; small pipelines need no allocation.
        constexpr std::size_t kInline = 16;
        const std::size_t n = step.params.size();
        std::array<void*, kInline> inline_params{};
        std::array<std::size_t, kInline> inline_sizes{}, inline_aligns{};
        std::array<ArgKind, kInline> inline_kinds{};
        std::vector<void*> heap_params;
        std::vector<std::size_t> heap_sizes, heap_aligns;
        std::vector<ArgKind> heap_kinds;
        void** params = inline_params.data();
        std::size_t* sizes = inline_sizes.data();
        std::size_t* aligns = inline_aligns.data();
        ArgKind* kinds = inline_kinds.data();
        if (n > kInline) {
            heap_params.resize(n);
            heap_sizes.resize(n);
            heap_aligns.resize(n);
            heap_kinds.resize(n);
            params = heap_params.data();
            sizes = heap_sizes.data();
            aligns = heap_aligns.data();
            kinds = heap_kinds.data();
        }
        for (std::size_t i = 0; i < n; ++i) {
            const ParamRef& r = step.params[i];
            kinds[i] = param_kind(plan, r);
            if (r.scalar) {
                const ScalarSpec& sc = plan.scalars[r.index];
                params[i] = const_cast<std::byte*>(sc.bytes.data());
                sizes[i] = aligns[i] = sc.size;
            } else {
                params[i] = const_cast<CUdeviceptr*>(&buffers[r.index]);
                sizes[i] = sizeof(CUdeviceptr);
                aligns[i] = alignof(CUdeviceptr);
            }
        }
        last = step.config(stream);
        functions[s]->launch_packed(last, params, std::span<const std::size_t>(sizes, n),
                                    std::span<const std::size_t>(aligns, n), step.signature,
                                    std::span<const ArgKind>(kinds, n));
    }
    return last;
}

std::vector<HostBuffer> run_case_once(const CasePlan& plan,
                                      std::span<const Function* const> functions,
                                      CaseBuffers& buffers, LaunchConfig* launched) {
    buffers.select(0);
    buffers.fill_canary();
    const Stream stream;
    const LaunchConfig config = enqueue_case(plan, functions, buffers.pointers(), stream.handle());
    stream.synchronize();
    if (launched)
        *launched = config;
    // Buffers may be larger than this plan sizes them (they serve several plans): each output
    // as this plan has it.
    std::vector<HostBuffer> outs = buffers.download();
    for (std::size_t o = 0; o < outs.size(); ++o) {
        const BufferSpec& spec = plan.buffers[plan.outputs[o]];
        outs[o].count = spec.count;
        outs[o].bytes.resize(spec.bytes());
    }
    return outs;
}

} // namespace kjit
