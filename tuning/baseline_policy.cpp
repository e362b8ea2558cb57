#include "tuning/baseline_policy.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <system_error>

namespace kjit {

std::filesystem::path default_baseline_path(std::string_view kernel) {
    return std::filesystem::path("bench") / "baselines" / (std::string(kernel) + ".toml");
}

BaselineLocation locate_baseline(std::string_view kernel, const std::string& file) {
    BaselineLocation at;
    at.named = !file.empty();
    if (at.named) {
        at.path = file;
    } else {
        std::error_code ec;
        const std::filesystem::path cwd = std::filesystem::current_path(ec);
        at.path = ec ? default_baseline_path(kernel) : cwd / default_baseline_path(kernel);
    }
    std::error_code ec;
    at.exists = std::filesystem::exists(at.path, ec);
    return at;
}

namespace {

std::vector<DType> selected_dtypes(const DigestSelection& selection) {
    std::vector<DType> out;
    for (const std::string& d : selection.dtypes)
        out.push_back(parse_dtype(d));
    return out;
}

/// ConfigError at the baseline's file unless it belongs to `contract`.
void require_kernel(const Baseline& baseline, const BaselineLocation& at,
                    const KernelContract& contract) {
    if (baseline.kernel != contract.name)
        throw ConfigError("the baseline is for kernel '" + baseline.kernel + "', not '" +
                              contract.name + "'",
                          at.path.string());
}

} // namespace

std::vector<DigestCase> record_cases(const KernelContract& contract,
                                     const DigestSelection& selection) {
    std::vector<std::string> shapes;
    for (const std::string& s : selection.shapes)
        for (std::string& part : split_shapes(s))
            shapes.push_back(std::move(part));
    if (shapes.empty())
        shapes = contract.digest_shapes;
    std::vector<DType> dtypes = selected_dtypes(selection);
    if (dtypes.empty())
        dtypes = contract.dtypes;
    std::vector<DigestCase> out;
    for (const std::string& s : shapes) {
        const ShapeValues values = parse_shape(contract, s);
        for (DType d : dtypes)
            out.push_back({shape_text(contract, values), values, d});
    }
    return out;
}

Baseline baseline_to_record(const BaselineLocation& at, const KernelContract& contract,
                            std::uint64_t seed) {
    Baseline baseline;
    if (at.exists) {
        baseline = Baseline::load(at.path);
        require_kernel(baseline, at, contract);
        if (baseline.seed != seed)
            throw ConfigError("the baseline was recorded with seed " +
                                  std::to_string(baseline.seed) + ", not " +
                                  std::to_string(seed) + " (remove it to start afresh)",
                              at.path.string());
    }
    baseline.kernel = contract.name;
    baseline.seed = seed;
    return baseline;
}

BaselineCase recorded_case(const DigestCase& c, const Defines& defines,
                           const Provenance& provenance, std::span<const HostBuffer> outputs) {
    BaselineCase out;
    out.shape = c.shape;
    out.dtype = c.dtype;
    out.defines = defines;
    out.gpu = provenance.gpu;
    out.arch = provenance.arch;
    out.tier = provenance.tier;
    out.source_hash = provenance.source_hash;
    for (const HostBuffer& b : outputs)
        out.outputs.push_back({b.name, b.dtype, b.count, digest(b)});
    return out;
}

bool record_writes_file(int unwritten) {
    return unwritten == 0;
}

Baseline baseline_to_check(const BaselineLocation& at, const KernelContract& contract) {
    if (!at.exists)
        throw ConfigError("cannot read baseline file: it does not exist (" +
                              (at.named ? std::string()
                                        : "the default: " +
                                              default_baseline_path(contract.name).string() +
                                              " under the current directory, or --baseline "
                                              "FILE; ") +
                              "kjit digest record " + contract.name + " writes it)",
                          at.path.string());
    Baseline baseline = Baseline::load(at.path);
    require_kernel(baseline, at, contract);
    return baseline;
}

std::vector<CheckedCase> checked_cases(const Baseline& baseline, const KernelContract& contract,
                                       const DigestSelection& selection,
                                       std::span<const std::string> overrides) {
    // Every recorded shape must still mean something to the contract.
    std::vector<CheckedCase> cases;
    for (const BaselineCase& c : baseline.cases) {
        try {
            const ShapeValues values = parse_shape(contract, c.shape);
            cases.push_back({&c, {shape_text(contract, values), values, c.dtype}, {}});
        } catch (const ConfigError& e) {
            throw ConfigError(e.message, baseline.file, c.line, c.column);
        }
    }
    // The selection narrows the check to the recorded cases it names.
    std::vector<std::string> shapes;
    for (const std::string& s : selection.shapes)
        for (const std::string& part : split_shapes(s))
            shapes.push_back(shape_text(contract, parse_shape(contract, part)));
    const std::vector<DType> dtypes = selected_dtypes(selection);
    std::erase_if(cases, [&](const CheckedCase& c) {
        return (!shapes.empty() &&
                std::find(shapes.begin(), shapes.end(), c.key.shape) == shapes.end()) ||
               (!dtypes.empty() &&
                std::find(dtypes.begin(), dtypes.end(), c.key.dtype) == dtypes.end());
    });
    for (const std::string& s : shapes)
        if (std::none_of(cases.begin(), cases.end(),
                         [&](const CheckedCase& c) { return c.key.shape == s; }))
            throw ConfigError("no recorded case for shape " + s +
                                  " (record it with kjit digest record --shapes " + s + ")",
                              baseline.file);
    if (cases.empty())
        throw ConfigError("the baseline records no case to check", baseline.file);
    for (CheckedCase& c : cases)
        c.defines = merge_defines(c.recorded->defines, overrides);
    return cases;
}

DigestVerdict judge_output(const OutputDigest* recorded, const HostBuffer& output,
                           std::uint64_t d) {
    if (!recorded)
        return DigestVerdict::not_recorded;
    if (recorded->count != output.count || recorded->dtype != output.dtype)
        return DigestVerdict::resized;
    return recorded->digest == d ? DigestVerdict::identical : DigestVerdict::differs;
}

const OutputDigest* recorded_output(const BaselineCase& c, std::string_view name) {
    const OutputDigest* found = nullptr;
    for (const OutputDigest& o : c.outputs)
        if (o.name == name)
            found = &o;
    return found;
}

} // namespace kjit
