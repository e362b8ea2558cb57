#include "jit/freshness.hpp"

#include "core/error.hpp"

#include <map>

namespace kjit {

namespace {

std::string shown(const EmbedManifest& m, const std::string& name) {
    return m.prefix.empty() ? name : m.prefix + "/" + name;
}

std::size_t shared_names(const EmbedManifest& m, const SourceSet& disk) {
    std::size_t n = 0;
    for (const auto& f : m.files)
        n += disk.find(f.name) != nullptr;
    return n;
}

} // namespace

EmbedManifest manifest_of(const SourceSet& set, const std::string& prefix) {
    EmbedManifest m;
    m.prefix = prefix;
    // Without one, the prefix the files' paths show (embedded "kernel_src/rms_norm.cu").
    if (prefix.empty() && !set.files().empty()) {
        const SourceFile& f = set.files().front();
        if (f.path.size() > f.name.size() + 1 && f.path.ends_with("/" + f.name))
            m.prefix = f.path.substr(0, f.path.size() - f.name.size() - 1);
    }
    for (const auto& f : set.files())
        m.files.push_back({f.name, f.hash, f.mtime_ns});
    return m;
}

FreshnessReport check_freshness(const EmbedManifest& embedded, const SourceSet& disk) {
    FreshnessReport report;
    report.embedded_files = embedded.files.size();
    std::map<std::string, const EmbedManifest::File*> by_name;
    for (const auto& e : embedded.files)
        by_name.emplace(e.name, &e);
    for (const auto& f : disk.files()) {
        const auto it = by_name.find(f.name);
        const EmbedManifest::File* e = it == by_name.end() ? nullptr : it->second;
        if (!e)
            report.entries.push_back({Staleness::new_file, f.path, {}, f.hash, 0, f.mtime_ns});
        else if (!(e->hash == f.hash))
            report.entries.push_back(
                {Staleness::stale, f.path, e->hash, f.hash, e->mtime_ns, f.mtime_ns});
    }
    for (const auto& e : embedded.files)
        if (!disk.find(e.name))
            report.entries.push_back(
                {Staleness::missing, shown(embedded, e.name), e.hash, {}, e.mtime_ns, 0});
    return report;
}

EmbedManifest manifest_for(const std::filesystem::path& binary, const SourceSet& disk) {
    std::vector<EmbedManifest> found = read_manifests(binary);
    if (found.empty())
        throw ConfigError("the binary embeds no kernel sources (it was not built with "
                          "kjit_embed_kernels()): there is nothing to compare",
                          binary.string());
    std::size_t best = 0, best_shared = 0;
    std::string trees;
    for (std::size_t i = 0; i < found.size(); ++i) {
        trees += (i ? ", " : "") + (found[i].prefix.empty() ? "(no prefix)" : found[i].prefix + "/");
        const std::size_t n = shared_names(found[i], disk);
        if (n > best_shared) {
            best = i;
            best_shared = n;
        }
    }
    // A tree with no name in common is another project's (kjit's own kernels, say): comparing
    // it would call every file new and every embedded one missing.
    if (best_shared == 0)
        throw ConfigError("the binary embeds " +
                              (found.size() == 1 ? "the kernel tree " + trees
                                                 : std::to_string(found.size()) +
                                                       " kernel trees (" + trees + ")") +
                              ", which holds none of the files compared with it",
                          binary.string());
    return std::move(found[best]);
}

} // namespace kjit
