#include "jit/sources.hpp"

#include "core/error.hpp"
#include "core/names.hpp"
#include "core/text_file.hpp"
#include "jit/includes.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <set>

namespace kjit {

namespace {
struct EmbeddedBlock {
    const detail::EmbeddedFile* files;
    std::size_t count;
    const char* manifest;
};

std::vector<EmbeddedBlock>& embedded_blocks() {
    static std::vector<EmbeddedBlock> blocks;
    return blocks;
}

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

} // namespace

bool SourceFile::is_kernel() const { return ends_with(name, ".cu"); }

std::string SourceFile::kernel_name() const {
    return is_kernel() ? name.substr(0, name.size() - 3) : name;
}

detail::EmbeddedRegistrar::EmbeddedRegistrar(const EmbeddedFile* files, std::size_t count,
                                             const char* manifest) noexcept {
    embedded_blocks().push_back({files, count, manifest});
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
    std::string body = read_text_file(path, "kernel source");
    const Hash128 h = hash128(body);
    const std::filesystem::path shown =
        display_prefix.empty() ? path : std::filesystem::path(display_prefix) / name;
    const auto stamp = file_stamp(path);
    return {name, shown.generic_string(), std::move(body), h, stamp ? stamp->mtime_ns : 0};
}

bool FileStamp::racy(std::int64_t now) const {
    return ctime_ns > now - 1'000'000'000;
}

std::optional<FileStamp> file_stamp(const std::filesystem::path& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        return std::nullopt;
    const auto ns = [](const struct timespec& t) {
        return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
    };
    return FileStamp{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
                     static_cast<std::uint64_t>(st.st_size), ns(st.st_mtim), ns(st.st_ctim)};
}

std::int64_t now_ns() {
    struct timespec t {};
    ::clock_gettime(CLOCK_REALTIME, &t);
    return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

namespace {
/// Adds the regular files under root/rel to `names` (see list_tree).
void walk_tree(const std::filesystem::path& root, const std::filesystem::path& rel,
               std::vector<std::string>& names) {
    namespace fs = std::filesystem;
    const fs::path here = root / rel;
    const auto fail = [](const fs::path& at, int error) {
        throw ConfigError(std::string("cannot read kernel source tree: ") + std::strerror(error),
                          at.string());
    };
    std::error_code ec;
    fs::directory_iterator it(here, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
        const fs::path name = rel / it->path().filename();
        struct stat st {};
        if (::lstat(it->path().c_str(), &st) != 0)
            fail(it->path(), errno);
        if (S_ISDIR(st.st_mode)) {
            walk_tree(root, name, names);
            continue;
        }
        // A link is followed to a file, never to a directory; a dangling one names nothing,
        // a loop is an error.
        if (S_ISLNK(st.st_mode) && ::stat(it->path().c_str(), &st) != 0) {
            if (errno == ENOENT)
                continue;
            fail(it->path(), errno);
        }
        if (S_ISREG(st.st_mode))
            names.push_back(name.generic_string());
    }
    if (ec)
        fail(here, ec.value());
}
} // namespace

std::vector<std::string> list_tree(const std::filesystem::path& dir) {
    std::vector<std::string> names;
    walk_tree(dir, {}, names);
    std::sort(names.begin(), names.end());
    return names;
}

void require_source_dir(const std::filesystem::path& dir) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        throw ConfigError("kernel source directory does not exist or is not a directory",
                          dir.string());
}

SourceSet SourceSet::from_directory(const std::filesystem::path& dir,
                                    const std::string& display_prefix) {
    require_source_dir(dir);
    return from_tree(list_tree(dir), [&](const std::string& name) {
        return read_source_file(dir, name, display_prefix);
    });
}

SourceSet SourceSet::from_tree(const std::vector<std::string>& names,
                               const std::function<SourceFile(const std::string&)>& read) {
    const std::set<std::string> all(names.begin(), names.end());
    std::set<std::string> taken;
    std::vector<std::string> pending;
    const auto take = [&](const std::string& name) {
        if (all.contains(name) && taken.insert(name).second)
            pending.push_back(name);
    };
    for (const auto& name : all)
        if (name.ends_with(".cu") || has_header_extension(name))
            take(name);
    SourceSet set;
    while (!pending.empty()) {
        SourceFile file = read(pending.back());
        pending.pop_back();
        const IncludeScan scan = scan_includes(file.text);
        set.add(std::move(file));
        if (scan.computed)
            for (const auto& name : all)
                take(name);
        for (const auto& name : scan.names)
            take(name);
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
    auto it = std::lower_bound(files_.begin(), files_.end(), name,
                               [](const SourceFile& f, std::string_view n) { return f.name < n; });
    return it != files_.end() && it->name == name ? &*it : nullptr;
}

const SourceFile& SourceSet::kernel(std::string_view kernel) const {
    const std::string file = ends_with(kernel, ".cu") ? std::string(kernel)
                                                      : std::string(kernel) + ".cu";
    if (const SourceFile* f = find(file))
        return *f;
    std::vector<std::string> names;
    for (const auto* k : kernels())
        names.push_back(k->kernel_name());
    const std::string known = join(names);
    throw NotFoundError("unknown kernel '" + std::string(kernel) +
                        "' (known kernels: " + (known.empty() ? "none" : known) + ")" +
                        did_you_mean(nearest(kernel, names)));
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

std::vector<const SourceFile*> SourceSet::includable(const SourceFile& kernel) const {
    std::set<const SourceFile*> reached;
    std::vector<const SourceFile*> pending{&kernel};
    while (!pending.empty()) {
        const SourceFile* f = pending.back();
        pending.pop_back();
        const IncludeScan scan = scan_includes(f->text);
        if (scan.computed) {
            std::vector<const SourceFile*> every;
            for (const auto& g : files_)
                if (g.name != kernel.name)
                    every.push_back(&g);
            return every;
        }
        for (const auto& name : scan.names)
            if (const SourceFile* g = find(name); g && reached.insert(g).second)
                pending.push_back(g);
    }
    std::vector<const SourceFile*> out(reached.begin(), reached.end());
    std::sort(out.begin(), out.end(),
              [](const SourceFile* a, const SourceFile* b) { return a->name < b->name; });
    return out;
}

} // namespace kjit
