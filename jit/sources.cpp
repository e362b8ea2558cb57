#include "jit/sources.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

namespace kjit {

namespace {
struct EmbeddedBlock {
    const detail::EmbeddedFile* files;
    std::size_t count;
};

std::vector<EmbeddedBlock>& embedded_blocks() {
    static std::vector<EmbeddedBlock> blocks;
    return blocks;
}

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::int64_t mtime_ns(const std::filesystem::path& p) {
    const auto t = std::filesystem::last_write_time(p);
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::file_clock::to_sys(t).time_since_epoch())
        .count();
}
} // namespace

bool SourceFile::is_kernel() const { return ends_with(name, ".cu"); }

std::string SourceFile::kernel_name() const {
    return is_kernel() ? name.substr(0, name.size() - 3) : name;
}

detail::EmbeddedRegistrar::EmbeddedRegistrar(const EmbeddedFile* files,
                                             std::size_t count) noexcept {
    embedded_blocks().push_back({files, count});
}

SourceSet SourceSet::embedded() {
    SourceSet set;
    for (const auto& block : embedded_blocks()) {
        for (std::size_t i = 0; i < block.count; ++i) {
            const auto& f = block.files[i];
            set.add({f.name, f.path, std::string(f.data, f.size), {f.hash_lo, f.hash_hi},
                     f.mtime_ns});
        }
    }
    return set;
}

SourceFile read_source_file(const std::filesystem::path& dir, const std::string& name,
                            const std::string& display_prefix) {
    const std::filesystem::path path = dir / name;
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw ConfigError("cannot read kernel source", path.string());
    std::ostringstream text;
    text << in.rdbuf();
    std::string body = text.str();
    const Hash128 h = hash128(body);
    const std::filesystem::path shown =
        display_prefix.empty() ? path : std::filesystem::path(display_prefix) / name;
    return {name, shown.generic_string(), std::move(body), h, mtime_ns(path)};
}

SourceSet SourceSet::from_directory(const std::filesystem::path& dir,
                                    const std::string& display_prefix) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        throw ConfigError("kernel source directory does not exist or is not a directory",
                          dir.string());
    SourceSet set;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
        const auto ext = entry.path().extension();
        if (entry.is_regular_file() && (ext == ".cu" || ext == ".cuh"))
            set.add(read_source_file(
                dir, std::filesystem::relative(entry.path(), dir).generic_string(),
                display_prefix));
    }
    return set;
}

void SourceSet::add(SourceFile file) {
    auto it = std::lower_bound(files_.begin(), files_.end(), file.name,
                               [](const SourceFile& f, const std::string& n) { return f.name < n; });
    if (it != files_.end() && it->name == file.name)
        *it = std::move(file);
    else
        files_.insert(it, std::move(file));
}

const SourceFile* SourceSet::find(std::string_view name) const {
    for (const auto& f : files_)
        if (f.name == name)
            return &f;
    return nullptr;
}

const SourceFile& SourceSet::kernel(std::string_view kernel) const {
    const std::string file = ends_with(kernel, ".cu") ? std::string(kernel)
                                                      : std::string(kernel) + ".cu";
    if (const SourceFile* f = find(file))
        return *f;
    std::string known;
    for (const auto* k : kernels())
        known += (known.empty() ? "" : ", ") + k->kernel_name();
    throw NotFoundError("unknown kernel '" + std::string(kernel) + "' (known kernels: " +
                        (known.empty() ? "none" : known) + ")");
}

std::vector<const SourceFile*> SourceSet::kernels() const {
    std::vector<const SourceFile*> out;
    for (const auto& f : files_)
        if (f.is_kernel())
            out.push_back(&f);
    return out;
}

std::vector<const SourceFile*> SourceSet::headers() const {
    std::vector<const SourceFile*> out;
    for (const auto& f : files_)
        if (!f.is_kernel())
            out.push_back(&f);
    return out;
}

} // namespace kjit
