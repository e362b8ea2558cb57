#include "jit/cache_key.hpp"

#include "jit/compiler.hpp"
#include "jit/toolkit.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

namespace kjit {

namespace fs = std::filesystem;

namespace {

/// Appends a length-prefixed field, so that no two different field lists encode the same.
void put(std::string& out, std::string_view field) {
    const std::uint64_t n = field.size();
    out.append(reinterpret_cast<const char*>(&n), sizeof n);
    out.append(field);
}

std::optional<std::string> read_whole(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return std::nullopt;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Every regular file under root/rel, links followed, each directory (by device and inode)
/// once, so a link loop ends. Unreadable directories are skipped: NVRTC cannot read them either.
void walk(const fs::path& root, const fs::path& rel, std::set<std::pair<dev_t, ino_t>>& seen,
          std::vector<std::pair<std::string, fs::path>>& files) {
    std::error_code ec;
    fs::directory_iterator it(root / rel, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
        const fs::path name = rel / it->path().filename();
        struct stat st {};
        if (::stat(it->path().c_str(), &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            if (seen.insert({st.st_dev, st.st_ino}).second)
                walk(root, name, seen, files);
        } else if (S_ISREG(st.st_mode)) {
            files.emplace_back(name.generic_string(), it->path());
        }
    }
}

/// xxh3-128 of a file's bytes, remembered by its stamp: a file changed since (its inode, size,
/// mtime or ctime moved) is read again, and one written within a second is never remembered.
std::string file_hash(const fs::path& path) {
    static std::mutex mutex;
    static std::map<std::string, std::pair<FileStamp, std::string>> known;
    const auto stamp = file_stamp(path);
    const std::int64_t now = now_ns();
    {
        std::lock_guard lock(mutex);
        const auto it = known.find(path.string());
        if (stamp && it != known.end() && it->second.first == *stamp)
            return it->second.second;
    }
    const auto text = read_whole(path);
    const std::string hash = text ? hash128(*text).hex() : "(unreadable)";
    if (stamp && text && !stamp->racy(now)) {
        std::lock_guard lock(mutex);
        known[path.string()] = {*stamp, hash};
    }
    return hash;
}

std::string includes_component(const CompileOptions& options) {
    std::string out;
    for (const auto& dir : options.include_dirs)
        put(out, include_dir_content(dir));
    return out;
}

std::string toolkit_component(const std::vector<std::string>& dirs) {
    std::string out;
    for (const auto& dir : dirs) {
        put(out, dir);
        put(out, toolkit_version(dir));
    }
    return out;
}

} // namespace

std::string include_dir_content(const fs::path& dir) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return {};
    std::set<std::pair<dev_t, ino_t>> seen{{st.st_dev, st.st_ino}};
    std::vector<std::pair<std::string, fs::path>> files;
    walk(dir, {}, seen, files);
    std::sort(files.begin(), files.end());
    std::string out;
    put(out, "directory");
    for (const auto& [name, path] : files) {
        put(out, name);
        put(out, file_hash(path));
    }
    return out;
}

std::string toolkit_version(const fs::path& dir) {
    for (const char* marker :
         {"../version.json", "../../version.json", "../version.txt", "cuda.h", "../cuda.h"}) {
        if (!file_stamp(dir / marker))
            continue;
        std::string out;
        put(out, marker);
        put(out, file_hash(dir / marker));
        return out;
    }
    std::string out;
    put(out, "content");
    put(out, include_dir_content(dir));
    return out;
}

CacheKey make_cache_key(const SourceSet& sources, std::string_view kernel,
                        const CompileOptions& options) {
    check_options(options);
    return make_cache_key(sources, kernel, options, nvrtc_version(), kCacheFormatVersion);
}

CacheKey make_cache_key(const SourceSet& sources, std::string_view kernel,
                        const CompileOptions& options, int nvrtc, int format) {
    options.check();
    const SourceFile& file = sources.kernel(kernel);
    if (file.text.find_first_not_of(" \t\r\n\f\v") == std::string::npos)
        throw ConfigError("the kernel source is empty: there is nothing to compile", file.path);
    std::array<std::string, KeyComponents::kCount> parts;
    // The name too: NVRTC's program is named by it, and __FILE__ spells it.
    put(parts[KeyComponents::source], file.name);
    put(parts[KeyComponents::source], file.text);
    for (const auto* h : sources.includable(file)) { // sorted by name
        put(parts[KeyComponents::headers], h->name);
        put(parts[KeyComponents::headers], h->text);
    }
    for (const auto& [name, value] : options.defines) { // std::map: sorted
        put(parts[KeyComponents::defines], name);
        put(parts[KeyComponents::defines], value);
    }
    // Every flag but the defines (above) and the arch (below), in sorted order; the -I paths
    // among them (a header's __FILE__ spells its path), their content in `includes`.
    std::vector<std::string> flags;
    for (const auto& a : options.argv())
        if (a.rfind("-D", 0) != 0 && a.rfind("--gpu-architecture=", 0) != 0)
            flags.push_back(a);
    std::sort(flags.begin(), flags.end());
    for (const auto& f : flags)
        put(parts[KeyComponents::options], f);
    // A program without an entry point is a compile error unless the request accepts one: the
    // outcome differs, so the key does.
    if (options.entry_optional)
        put(parts[KeyComponents::options], "entry-optional");
    if (options.templates_later)
        put(parts[KeyComponents::options], "templates-later");
    // Name expressions in the order given: it is the order NVRTC instantiates them in.
    for (const auto& e : options.name_expressions)
        put(parts[KeyComponents::options], "name-expression=" + e);
    put(parts[KeyComponents::arch], options.target()); // a check-only compile's: compute_NN
    parts[KeyComponents::includes] = includes_component(options);
    parts[KeyComponents::toolkit] = toolkit_component(toolkit_dirs_for(options, sources, file));
    put(parts[KeyComponents::nvrtc], std::to_string(nvrtc));
    put(parts[KeyComponents::format], std::to_string(format));

    CacheKey key;
    key.kernel = file.kernel_name();
    std::string all;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        key.components.hashes[i] = hash64(parts[i]);
        put(all, parts[i]);
    }
    key.hash = hash128(all);
    return key;
}

} // namespace kjit
