#pragma once

#include "core/diagnostic.hpp"

#include <functional>
#include <string>

namespace kjit {

/// Where kjit's warnings go: one function for the whole process.
using DiagnosticSink = std::function<void(const Diagnostic&)>;

/// Reports a warning through the current sink; never throws (a throwing sink is ignored), so
/// destructors may call it. kjit's library reports through this and never writes to stderr.
void warn(const Diagnostic& diagnostic);

/// warn() of a warning with no location: `message` is the whole sentence.
void warn(std::string message);

/// Installs `sink` for every later warning (thread-safe) and returns the previous one (the
/// default's printer when none was set). An empty sink restores the default, which prints
/// `kjit: <diagnostic.format()>` to stderr: `kjit: warning: <message>` without a location.
DiagnosticSink set_warning_sink(DiagnosticSink sink);

} // namespace kjit
