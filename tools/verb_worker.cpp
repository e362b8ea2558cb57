#include "tools/verbs.hpp"

#include <unistd.h>

namespace kjit::cli {

Action add_compile_worker(CLI::App& app) {
    // Hidden (no group): the parallel compiler runs `kjit compile-worker` as its workers.
    app.add_subcommand("compile-worker", "serve compile jobs on stdin/stdout")->group("");
    return [] { return serve_compile_worker(STDIN_FILENO, STDOUT_FILENO); };
}

} // namespace kjit::cli
