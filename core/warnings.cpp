#include "core/warnings.hpp"

#include <cstdio>
#include <memory>
#include <mutex>
#include <utility>

namespace kjit {

namespace {

void print_to_stderr(const Diagnostic& d) {
    std::fprintf(stderr, "kjit: %s\n", d.format().c_str());
}

struct SinkState {
    std::mutex mutex;
    std::shared_ptr<const DiagnosticSink> sink;
};

// Never destroyed: destructors of other static objects (the launch ledger) warn at exit.
SinkState& state() {
    static SinkState* s = new SinkState;
    return *s;
}

} // namespace

void warn(const Diagnostic& diagnostic) {
    std::shared_ptr<const DiagnosticSink> sink;
    {
        std::lock_guard lock(state().mutex);
        sink = state().sink;
    }
    try {
        if (sink)
            (*sink)(diagnostic);
        else
            print_to_stderr(diagnostic);
    } catch (...) {
        // A warning must not turn into a failure of whatever was being cleaned up.
    }
}

void warn(std::string message) {
    warn(Diagnostic{{}, 0, 0, Severity::warning, std::move(message), {}});
}

DiagnosticSink set_warning_sink(DiagnosticSink sink) {
    auto next = sink ? std::make_shared<const DiagnosticSink>(std::move(sink)) : nullptr;
    std::lock_guard lock(state().mutex);
    std::shared_ptr<const DiagnosticSink> previous = std::exchange(state().sink, std::move(next));
    return previous ? *previous : DiagnosticSink(print_to_stderr);
}

} // namespace kjit
