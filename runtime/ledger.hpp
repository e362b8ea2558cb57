#pragma once

#include "runtime/hooks.hpp"
#include "runtime/launch.hpp"

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kjit {

/// One recorded launch.
struct LedgerRecord {
    std::string kernel;
    std::string variant; ///< the specialization (module label: name#key)
    Dim3 grid, block;
    unsigned smem = 0;
    int registers = 0;
    int blocks_per_sm = 0;
    double waves = 0;
    double sm_share = 0;
    double ms = -1; ///< event time; -1 when timing was off
};

/// Every launch of the process, when recording is on (KJIT_LEDGER=1, or enable()): kernel,
/// variant, geometry, registers and, with timing (KJIT_LEDGER_TIMING=1), event time. A launch
/// plan's replay records each of its kernels, untimed (a graph runs them as one). It is a
/// launch observer (runtime/hooks.hpp): off, it is not registered and costs a launch nothing.
class Ledger {
  public:
    static Ledger& instance();

    /// Starts recording (registers the ledger's observer); `timing` brackets each launch
    /// with events (no synchronization).
    void enable(bool timing);
    /// Stops recording; the records stay.
    void disable();
    [[nodiscard]] bool recording() const;

    /// The records so far, timings resolved (waits for the recorded events).
    std::vector<LedgerRecord> records();
    /// Writes the records as CSV (the format `kjit ledger` reads).
    void write_csv(const std::filesystem::path& file);
    /// Resolves pending timings (waits for their events); the ledger calls it itself when a
    /// context is about to be released, while the events still live.
    void resolve();
    ~Ledger();

  private:
    friend void start_ledger_from_environment();
    class Observer;
    struct Timing;
    Ledger();
    void enter(const Function& function, const LaunchConfig& config, bool timed);
    void exit(const LaunchConfig& config);
    bool from_environment_ = false;
    mutable std::mutex mutex_;
    bool timing_ = false;
    std::vector<LedgerRecord> records_;
    std::vector<std::unique_ptr<Timing>> pending_;
    std::shared_ptr<Observer> observer_;
    LaunchHook hook_;
};

/// Turns the process ledger on when KJIT_LEDGER is set (timing with KJIT_LEDGER_TIMING) and
/// writes it to KJIT_LEDGER_FILE at exit; the first launch of the process calls it.
void start_ledger_from_environment();

/// Writes records as CSV: kernel,variant,grid,block,smem,registers,blocks_per_sm,waves,sm_share,ms.
void write_records(const std::filesystem::path& file, const std::vector<LedgerRecord>& records);

/// Reads a ledger CSV; ConfigError at file:line for a malformed row (a field that is not a
/// whole count, a negative or non-finite measure, a dimension of 0).
std::vector<LedgerRecord> read_ledger_csv(const std::filesystem::path& file);

/// The table the launch-geometry lecture asks for: per kernel variant the calls, total time,
/// geometry, and recoverable SM-time = time x (1 - SM share), ranked by it; rows under 50%
/// SM share are flagged.
std::string ledger_table(const std::vector<LedgerRecord>& records);

} // namespace kjit
