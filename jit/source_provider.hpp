#pragma once

#include "core/flags.hpp"
#include "jit/sources.hpp"

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace kjit {

/// Where requests take their sources from: the copies embedded at build time or, with an
/// override directory (KJIT_KERNEL_DIR), the files there. Each request lists the tree and stats
/// the files of the set; a file is re-read when its stamp (inode, size, mtime, ctime) changed,
/// or, while it was written less than a second ago, compared by content. So an edited kernel
/// is picked up by the next request without a rebuild, even a same-size edit whose old mtime
/// was put back.
class SourceProvider {
  public:
    /// The embedded sources, or the files of KJIT_KERNEL_DIR when `flags` set it.
    static SourceProvider from_environment(const ResolvedFlags& flags = process_flags());
    /// override_dir empty: the embedded sources. `include_dirs`: extra -I directories every
    /// compile of these sources gets (a project's `include_dirs`).
    explicit SourceProvider(std::filesystem::path override_dir = {},
                            std::vector<std::filesystem::path> include_dirs = {});

    /// The current sources (the same snapshot while nothing changed on disk).
    std::shared_ptr<const SourceSet> current();
    [[nodiscard]] const std::filesystem::path& override_dir() const { return dir_; }
    /// The extra include directories every compile of these sources gets.
    [[nodiscard]] const std::vector<std::filesystem::path>& include_dirs() const {
        return include_dirs_;
    }
    /// "embedded at build time" or "from DIR".
    [[nodiscard]] std::string describe() const;

  private:
    /// Whether the snapshot still holds what the files in `names` say.
    bool unchanged(const std::vector<std::string>& names);
    std::filesystem::path dir_;
    std::vector<std::filesystem::path> include_dirs_;
    std::unique_ptr<std::mutex> mutex_ = std::make_unique<std::mutex>(); // movable provider
    /// A file of the snapshot as it was read: its stamp, taken before reading, and whether it
    /// was read within a second of its ctime (then only its content can tell a later edit).
    struct Seen {
        FileStamp stamp;
        bool racy = false;
    };
    std::vector<std::string> names_; ///< the tree's files at the snapshot
    std::map<std::string, Seen> seen_;
    std::shared_ptr<const SourceSet> snapshot_;
};

} // namespace kjit
