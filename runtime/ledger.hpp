#pragma once

#include "runtime/launch.hpp"

#include <atomic>
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

class Event;

/// Every launch of the process, when recording is on (KJIT_LEDGER=1, or enable()): kernel,
/// variant, geometry, registers and, with timing (KJIT_LEDGER_TIMING=1), event time. Off, it
/// costs a launch one load.
class Ledger {
  public:
    /// The process ledger while recording, else nullptr.
    static Ledger* active();
    static Ledger& instance();

    /// Starts recording; `timing` brackets each launch with events (no synchronization).
    void enable(bool timing);
    void disable();

    /// What begin() hands to end().
    struct Pending {
        std::size_t index = static_cast<std::size_t>(-1);
    };
    Pending begin(const Function& function, const LaunchConfig& config);
    void end(const Pending& pending, CUstream stream);

    /// The records so far, timings resolved (waits for the recorded events).
    std::vector<LedgerRecord> records();
    /// Writes the records as CSV (the format `kjit ledger` reads).
    void write_csv(const std::filesystem::path& file);
    /// Resolves pending timings while their context still lives (Context's destructor calls it).
    void resolve();
    ~Ledger();

  private:
    friend bool start_ledger_from_environment();
    struct Timing;
    bool from_environment_ = false;
    std::mutex mutex_;
    bool timing_ = false;
    std::vector<LedgerRecord> records_;
    std::vector<std::unique_ptr<Timing>> pending_;
};

/// Writes records as CSV: kernel,variant,grid,block,smem,registers,blocks_per_sm,waves,sm_share,ms.
void write_records(const std::filesystem::path& file, const std::vector<LedgerRecord>& records);

/// Reads a ledger CSV; ConfigError at file:line for a malformed row.
std::vector<LedgerRecord> read_ledger_csv(const std::filesystem::path& file);

/// The table the launch-geometry lecture asks for: per kernel variant the calls, total time,
/// geometry, and recoverable SM-time = time x (1 - SM share), ranked by it; rows under 50%
/// SM share are flagged.
std::string ledger_table(const std::vector<LedgerRecord>& records);

} // namespace kjit
