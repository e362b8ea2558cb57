#pragma once

#include "core/flags.hpp"
#include "jit/sources.hpp"

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>

namespace kjit {

/// Where requests take their sources from: the copies embedded at build time or, with an
/// override directory (KJIT_KERNEL_DIR), the files there. Each request stats the files;
/// only a changed mtime or size re-reads and re-hashes one, so an edited kernel is picked
/// up by the next request without a rebuild.
class SourceProvider {
  public:
    /// The embedded sources, or the files of KJIT_KERNEL_DIR when `flags` set it.
    static SourceProvider from_environment(const ResolvedFlags& flags = process_flags());
    /// override_dir empty: the embedded sources.
    explicit SourceProvider(std::filesystem::path override_dir = {});

    /// The current sources (the same snapshot while nothing changed on disk).
    std::shared_ptr<const SourceSet> current();
    [[nodiscard]] const std::filesystem::path& override_dir() const { return dir_; }
    /// "embedded at build time" or "from DIR".
    [[nodiscard]] std::string describe() const;

  private:
    struct Stamp {
        std::int64_t mtime_ns;
        std::uintmax_t size;
        friend bool operator==(const Stamp&, const Stamp&) = default;
    };
    std::filesystem::path dir_;
    std::unique_ptr<std::mutex> mutex_ = std::make_unique<std::mutex>(); // movable provider
    std::map<std::string, Stamp> stamps_;
    std::shared_ptr<const SourceSet> snapshot_;
};

} // namespace kjit
