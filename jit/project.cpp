#include "jit/project.hpp"

#include "core/error.hpp"
#include "core/names.hpp"
#include "core/toml.hpp"
#include "jit/compile_options.hpp"

#include <algorithm>

namespace kjit {

namespace fs = std::filesystem;

namespace {

enum class Must { directory, file, nothing };

ProjectPath project_path(const fs::path& root, const TomlNode& node, std::string_view what,
                         Must must) {
    ProjectPath p;
    p.text = node.string(what);
    p.where = node.where();
    if (p.text.empty())
        node.fail("'" + std::string(what) + "' must not be empty");
    p.path = (root / p.text).lexically_normal();
    std::error_code ec;
    if (must == Must::directory && !fs::is_directory(p.path, ec))
        node.fail("'" + std::string(what) + "' names " + p.text + ", which is not a directory");
    if (must == Must::file && !fs::is_regular_file(p.path, ec))
        node.fail("'" + std::string(what) + "' names " + p.text + ", which is not a file");
    return p;
}

std::vector<ProjectPath> project_paths(const fs::path& root, const TomlNode& node,
                                       std::string_view what, Must must) {
    std::vector<ProjectPath> out;
    for (const TomlNode& item : node.array(what).items())
        out.push_back(project_path(root, item, what, must));
    return out;
}

} // namespace

std::string display_path(const fs::path& path) {
    std::error_code ec;
    const fs::path cwd = fs::current_path(ec);
    if (ec || !path.is_absolute())
        return path.string();
    const fs::path rel = path.lexically_relative(cwd);
    if (rel.empty() || *rel.begin() == "..")
        return path.string();
    return rel.string();
}

std::string display_location(const SourceLocation& where) {
    return where.path + (where.line ? ":" + std::to_string(where.line) : "");
}

Project Project::load(const fs::path& file) {
    std::error_code ec;
    const fs::path absolute = fs::absolute(file, ec).lexically_normal();
    const TomlDocument doc = TomlDocument::load(display_path(absolute), "project file");
    const TomlTable root = doc.root();
    root.only_keys({"kernels", "include_dirs", "shape_files", "sweep_files", "contracts",
                    "baselines", "tuned", "archs", "binaries"},
                   "the project file");
    const fs::path dir = absolute.parent_path();
    Project p;
    p.file = absolute;
    if (const auto n = root.get("kernels"))
        p.kernels = project_path(dir, *n, "kernels", Must::directory);
    if (const auto n = root.get("include_dirs"))
        p.include_dirs = project_paths(dir, *n, "include_dirs", Must::directory);
    if (const auto n = root.get("shape_files"))
        p.shape_files = project_paths(dir, *n, "shape_files", Must::file);
    if (const auto n = root.get("sweep_files"))
        p.sweep_files = project_paths(dir, *n, "sweep_files", Must::file);
    if (const auto n = root.get("contracts"))
        p.contracts = project_paths(dir, *n, "contracts", Must::file);
    if (const auto n = root.get("baselines"))
        p.baselines = project_path(dir, *n, "baselines", Must::nothing);
    if (const auto n = root.get("tuned"))
        p.tuned = project_path(dir, *n, "tuned", Must::nothing);
    if (const auto n = root.get("binaries"))
        p.binaries = project_paths(dir, *n, "binaries", Must::nothing);
    if (const auto n = root.get("archs")) {
        for (const TomlNode& item : n->array("archs").items()) {
            std::string a = item.string("archs");
            if (const std::string problem = arch_problem(a); !problem.empty())
                item.fail(problem);
            p.archs.push_back(std::move(a));
        }
    }
    return p;
}

std::optional<fs::path> Project::find(const fs::path& start) {
    std::error_code ec;
    fs::path dir = fs::absolute(start, ec).lexically_normal();
    if (ec)
        return std::nullopt;
    for (;;) {
        const fs::path candidate = dir / kProjectFileName;
        if (fs::is_regular_file(candidate, ec))
            return candidate;
        if (!dir.has_relative_path())
            return std::nullopt;
        dir = dir.parent_path();
    }
}

std::optional<Project> Project::discover(const fs::path& explicit_file) {
    if (!explicit_file.empty()) {
        std::error_code ec;
        if (fs::is_directory(explicit_file, ec))
            throw ConfigError("is a directory, not a project file (--project takes the file: " +
                                  (explicit_file / kProjectFileName).string() + ")",
                              explicit_file.string());
        if (!fs::is_regular_file(explicit_file, ec))
            throw ConfigError("project file does not exist", explicit_file.string());
        return load(explicit_file);
    }
    std::error_code ec;
    const fs::path cwd = fs::current_path(ec);
    if (ec)
        return std::nullopt;
    if (const auto found = find(cwd))
        return load(*found);
    return std::nullopt;
}

namespace {
// Whether a TOML file beside the kernels is meant as a shape file: it has [shape] or [[kernel]]
// or a key close to them (a typo, which the shape-file reader then reports), or it does not
// parse (reported the same way). A file whose keys are all another tool's (pyproject.toml's
// [build-system] and [project]) is not read, nor is an empty one: it injects nothing, and an
// empty tuned table (which kjit tune fills) may lie beside the kernels too.
bool meant_as_shape_file(const fs::path& file) {
    try {
        const auto entries = TomlDocument::load(file, "shape file").root().entries();
        return std::any_of(entries.begin(), entries.end(), [](const TomlEntry& e) {
            return e.key == "shape" || e.key == "kernel" ||
                   !nearest(e.key, {"shape", "kernel"}).empty();
        });
    } catch (const ConfigError&) {
        return true;
    }
}
} // namespace

std::vector<fs::path> shape_files_beside(const fs::path& dir) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.is_regular_file() && e.path().extension() == ".toml" &&
            !e.path().filename().string().ends_with(".sweep.toml") &&
            meant_as_shape_file(e.path()))
            files.push_back(e.path());
    std::sort(files.begin(), files.end());
    return files;
}

std::vector<fs::path> shape_files_under(const fs::path& root) {
    std::vector<fs::path> files;
    std::error_code ec;
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const fs::path& p = it->path();
        if (it->is_directory(ec)) {
            if (p.filename().string().starts_with(".") || it.depth() >= 4 ||
                fs::exists(p / "CMakeCache.txt", ec))
                it.disable_recursion_pending();
            continue;
        }
        if (p.extension() != ".toml" || p.filename().string().ends_with(".sweep.toml") ||
            !it->is_regular_file(ec))
            continue;
        try {
            const TomlDocument doc = TomlDocument::load(p, "shape file");
            if (const auto kernel = doc.root().get("kernel");
                kernel && kernel->type() == TomlType::array)
                files.push_back(p);
        } catch (const ConfigError&) {
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

} // namespace kjit
