#include "jit/source_provider.hpp"

#include "core/error.hpp"

#include <sys/stat.h>

namespace kjit {

namespace fs = std::filesystem;

SourceProvider SourceProvider::from_environment(const ResolvedFlags& flags) {
    return SourceProvider(fs::path(flags.get_string(kFlagKernelDir)));
}

SourceProvider::SourceProvider(fs::path override_dir) : dir_(std::move(override_dir)) {
    if (dir_.empty())
        snapshot_ = std::make_shared<const SourceSet>(SourceSet::embedded());
}

std::string SourceProvider::describe() const {
    return dir_.empty() ? "embedded at build time" : "from " + dir_.string();
}

std::shared_ptr<const SourceSet> SourceProvider::current() {
    if (dir_.empty())
        return snapshot_;
    std::error_code ec;
    if (!fs::is_directory(dir_, ec))
        throw ConfigError("KJIT_KERNEL_DIR is not a directory", dir_.string());
    std::map<std::string, Stamp> now;
    for (const auto& e : fs::recursive_directory_iterator(dir_, ec)) {
        const auto ext = e.path().extension();
        if (ext != ".cu" && ext != ".cuh")
            continue;
        struct stat st {};
        if (::stat(e.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        now[fs::relative(e.path(), dir_).generic_string()] = {
            static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
            static_cast<std::uintmax_t>(st.st_size)};
    }
    std::lock_guard lock(*mutex_);
    if (snapshot_ && now == stamps_)
        return snapshot_;
    auto next = std::make_shared<SourceSet>();
    for (const auto& [name, stamp] : now) {
        const auto old = stamps_.find(name);
        const SourceFile* kept = snapshot_ ? snapshot_->find(name) : nullptr;
        if (kept && old != stamps_.end() && old->second == stamp) {
            next->add(*kept);
            continue;
        }
        next->add(read_source_file(dir_, name));
    }
    stamps_ = std::move(now);
    snapshot_ = std::move(next);
    return snapshot_;
}

} // namespace kjit
