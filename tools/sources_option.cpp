#include "tools/verbs.hpp"

namespace kjit::cli {

void SourceOptions::add_to(CLI::App& app) {
    app.add_option("--src", dir,
                   "read kernels from this directory instead of the copies embedded at build time");
}

SourceSet SourceOptions::load() const {
    return dir.empty() ? SourceSet::embedded() : SourceSet::from_directory(dir);
}

std::string SourceOptions::describe() const {
    return dir.empty() ? "embedded at build time" : "from " + dir;
}

} // namespace kjit::cli
