#include "jit/freshness.hpp"

#include "core/error.hpp"

#include <sys/stat.h>

namespace kjit {

FreshnessReport check_freshness(const SourceSet& embedded, const SourceSet& disk,
                                const std::vector<std::filesystem::path>& binaries) {
    FreshnessReport report;
    report.embedded_files = embedded.files().size();
    for (const auto& f : disk.files()) {
        const SourceFile* e = embedded.find(f.name);
        if (!e) {
            FreshnessEntry n;
            n.kind = Staleness::new_file;
            n.path = f.path;
            n.disk_hash = f.hash;
            n.disk_mtime_ns = f.mtime_ns;
            report.entries.push_back(std::move(n));
        } else if (!(e->hash == f.hash)) {
            report.entries.push_back({Staleness::stale, f.path, {}, e->hash, f.hash, e->mtime_ns,
                                      f.mtime_ns, 0});
        }
    }
    for (const auto& e : embedded.files())
        if (!disk.find(e.name)) {
            FreshnessEntry m;
            m.kind = Staleness::missing;
            m.path = e.path;
            m.embedded_hash = e.hash;
            m.embedded_mtime_ns = e.mtime_ns;
            report.entries.push_back(std::move(m));
        }
    for (const auto& b : binaries) {
        struct stat st {};
        if (::stat(b.c_str(), &st) != 0)
            throw ConfigError("cannot stat binary", b.string());
        const std::int64_t built = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 +
                                   st.st_mtim.tv_nsec;
        for (const auto& f : disk.files())
            if (f.mtime_ns > built) {
                FreshnessEntry o;
                o.kind = Staleness::binary_older;
                o.path = b.string();
                o.source = f.path;
                o.disk_hash = f.hash;
                o.disk_mtime_ns = f.mtime_ns;
                o.binary_mtime_ns = built;
                report.entries.push_back(std::move(o));
            }
    }
    return report;
}

FreshnessReport check_freshness(const std::filesystem::path& dir,
                                const std::vector<std::filesystem::path>& binaries) {
    return check_freshness(SourceSet::embedded(), SourceSet::from_directory(dir), binaries);
}

} // namespace kjit
