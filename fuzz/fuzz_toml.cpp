// libFuzzer target for the TOML loaders of outside input: sweep specs (SweepSpec::load, with
// the inline contracts they declare), shape files (ShapeFile::load, then resolve_defines), project
// files (Project::load) and digest baselines (Baseline::parse). Any bytes load or are
// refused with a kjit::Error; any other exception, crash or hang is a bug. fuzz/run.sh builds
// and runs it.
#include "core/error.hpp"
#include "jit/project.hpp"
#include "jit/shape_file.hpp"
#include "tuning/digest.hpp"
#include "tuning/sweep_spec.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <system_error>

#include <unistd.h>

namespace {

// The loaders take a path: each input is written to this process's own file, removed at exit.
struct InputFile {
    std::filesystem::path path = std::filesystem::temp_directory_path() /
                                 ("kjit_fuzz_toml_" + std::to_string(getpid()) + ".toml");
    ~InputFile() {
        std::error_code ignored;
        std::filesystem::remove(path, ignored);
    }
};

const std::filesystem::path& input_path() {
    static const InputFile file;
    return file.path;
}

template <class F> void refused_or_loaded(F&& load) {
    try {
        load();
    } catch (const kjit::Error&) {
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    {
        std::ofstream out(input_path(), std::ios::binary | std::ios::trunc);
        out << text;
    }
    refused_or_loaded([] { (void)kjit::SweepSpec::load(input_path()); });
    refused_or_loaded([] {
        const kjit::ShapeFile shape = kjit::ShapeFile::load(input_path());
        for (const auto& spec : shape.kernels)
            refused_or_loaded([&] { (void)kjit::resolve_defines(spec, shape.shape); });
    });
    // A project file names paths relative to its own directory (the temp directory here).
    refused_or_loaded([] { (void)kjit::Project::load(input_path()); });
    std::optional<kjit::Baseline> baseline;
    refused_or_loaded([&] { baseline = kjit::Baseline::parse(text, "fuzz.toml"); });
    // What was accepted, written back, reads back equal (no exception here is expected).
    if (baseline) {
        const auto again = kjit::Baseline::parse(baseline->to_toml(), "fuzz.toml");
        if (again.kernel != baseline->kernel || again.seed != baseline->seed ||
            again.cases.size() != baseline->cases.size())
            __builtin_trap();
        for (std::size_t i = 0; i < again.cases.size(); ++i)
            if (!again.cases[i].same_record(baseline->cases[i]))
                __builtin_trap();
    }
    return 0;
}
