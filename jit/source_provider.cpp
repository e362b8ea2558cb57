#include "jit/source_provider.hpp"

#include "core/error.hpp"

namespace kjit {

namespace fs = std::filesystem;

SourceProvider SourceProvider::from_environment(const ResolvedFlags& flags) {
    return SourceProvider(fs::path(flags.get_string(kFlagKernelDir)));
}

SourceProvider::SourceProvider(fs::path override_dir, std::vector<fs::path> include_dirs)
    : dir_(std::move(override_dir)), include_dirs_(std::move(include_dirs)) {
    if (dir_.empty())
        snapshot_ = std::make_shared<const SourceSet>(SourceSet::embedded());
}

std::string SourceProvider::describe() const {
    return dir_.empty() ? "embedded at build time" : "from " + dir_.string();
}

bool SourceProvider::unchanged(const std::vector<std::string>& names) {
    if (!snapshot_ || names != names_)
        return false;
    for (const auto& f : snapshot_->files()) {
        const auto stamp = file_stamp(dir_ / f.name);
        const auto old = seen_.find(f.name);
        if (!stamp || old == seen_.end() || !(*stamp == old->second.stamp))
            return false;
        if (!old->second.racy)
            continue;
        const std::int64_t now = now_ns();
        if (read_source_file(dir_, f.name).hash != f.hash)
            return false;
        // Read again a second past its ctime with the same stamp and text: any later write
        // moves the ctime, so the stamp alone decides from now on.
        old->second.racy = stamp->racy(now);
    }
    return true;
}

std::shared_ptr<const SourceSet> SourceProvider::current() {
    if (dir_.empty())
        return snapshot_;
    require_source_dir(dir_);
    std::vector<std::string> names = list_tree(dir_);
    std::lock_guard lock(*mutex_);
    if (unchanged(names))
        return snapshot_;
    std::map<std::string, Seen> seen;
    const auto read = [&](const std::string& name) {
        // The stamp is taken before the read: a write in between shows as a change next time.
        const auto stamp = file_stamp(dir_ / name);
        const std::int64_t now = now_ns();
        const auto old = seen_.find(name);
        const SourceFile* kept = snapshot_ ? snapshot_->find(name) : nullptr;
        if (kept && stamp && old != seen_.end() && old->second.stamp == *stamp &&
            !old->second.racy) {
            seen[name] = old->second;
            return *kept;
        }
        seen[name] = {stamp.value_or(FileStamp{}), !stamp || stamp->racy(now)};
        return read_source_file(dir_, name);
    };
    auto next = std::make_shared<SourceSet>(SourceSet::from_tree(names, read));
    names_ = std::move(names);
    seen_ = std::move(seen);
    snapshot_ = std::move(next);
    return snapshot_;
}

} // namespace kjit
