#include "runtime/ledger.hpp"

#include "core/flags.hpp"
#include "core/text_file.hpp"
#include "core/warnings.hpp"
#include "runtime/geometry.hpp"
#include "runtime/stream.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>
#include <type_traits>
#include <utility>

namespace kjit {

struct Ledger::Timing {
    std::size_t index;
    Event start, stop;
    bool stopped = false; ///< false when the launch failed after its start was recorded
};

/// The ledger as the launch hooks see it.
class Ledger::Observer final : public LaunchObserver {
  public:
    explicit Observer(Ledger& ledger) : ledger_(ledger) {}
    void launch_enter(const Function& function, const LaunchConfig& config) override {
        ledger_.enter(function, config, true);
    }
    void launch_exit(const Function&, const LaunchConfig& config) override { ledger_.exit(config); }
    /// A plan's kernels run as one graph: each is recorded, none timed (events around each
    /// step would bracket the whole replay).
    void plan_enter(std::span<const PlannedLaunch> steps) override {
        for (const PlannedLaunch& s : steps)
            ledger_.enter(*s.function, *s.config, false);
    }
    void plan_exit(std::span<const PlannedLaunch>) override {}
    void context_release(CUcontext) noexcept override {
        try {
            ledger_.resolve(); // the ledger's events die with the context
        } catch (const std::exception& e) {
            warn(std::string("launch ledger: ") + e.what());
        }
    }

  private:
    Ledger& ledger_;
};

/// The first line of a ledger CSV: its columns.
constexpr const char* kLedgerHeader =
    "kernel,variant,grid,block,smem,registers,blocks_per_sm,waves,sm_share,ms";

namespace {
constexpr std::size_t kNoRecord = static_cast<std::size_t>(-1);
/// The record whose timing this thread's launch in flight opened, from enter to exit.
thread_local std::size_t t_open = kNoRecord;
} // namespace

void start_ledger_from_environment() {
    const ResolvedFlags flags = builtin_flags().resolve();
    if (flags.get_bool(kFlagLedger)) {
        Ledger::instance().enable(flags.get_bool("KJIT_LEDGER_TIMING"));
        Ledger::instance().from_environment_ = true;
    }
}

Ledger::Ledger() : observer_(std::make_shared<Observer>(*this)) {}

Ledger& Ledger::instance() {
    static Ledger ledger;
    return ledger;
}

void Ledger::enable(bool timing) {
    std::lock_guard lock(mutex_);
    timing_ = timing;
    if (!hook_.registered())
        hook_ = LaunchHook(observer_);
}

void Ledger::disable() {
    {
        std::lock_guard lock(mutex_);
        hook_.reset();
    }
    // Unregistered, the ledger no longer hears of a context's release: read the pending
    // timings now, while the contexts of their events still live.
    resolve();
}

bool Ledger::recording() const {
    std::lock_guard lock(mutex_);
    return hook_.registered();
}

void Ledger::enter(const Function& f, const LaunchConfig& c, bool timed) {
    LedgerRecord r;
    r.kernel = f.name();
    r.variant = f.variant();
    r.grid = c.grid;
    r.block = c.block;
    r.smem = c.smem_bytes;
    r.registers = f.registers();
    const LaunchGeometry g = launch_geometry(f, c);
    r.blocks_per_sm = g.blocks_per_sm;
    r.waves = g.waves;
    r.sm_share = g.sm_share;
    std::lock_guard lock(mutex_);
    records_.push_back(std::move(r));
    t_open = kNoRecord;
    if (timing_ && timed) {
        pending_.push_back(std::make_unique<Timing>(Timing{records_.size() - 1, Event(), Event()}));
        pending_.back()->start.record(c.stream);
        t_open = records_.size() - 1;
    }
}

void Ledger::exit(const LaunchConfig& c) {
    const std::size_t index = std::exchange(t_open, kNoRecord);
    if (index == kNoRecord)
        return;
    std::lock_guard lock(mutex_);
    for (auto it = pending_.rbegin(); it != pending_.rend(); ++it)
        if ((*it)->index == index) {
            (*it)->stop.record(c.stream);
            (*it)->stopped = true;
            return;
        }
}

void Ledger::resolve() {
    std::lock_guard lock(mutex_);
    for (auto& t : pending_) {
        if (!t->stopped)
            continue;
        t->stop.synchronize();
        records_[t->index].ms = Event::elapsed_ms(t->start, t->stop);
    }
    pending_.clear();
}

std::vector<LedgerRecord> Ledger::records() {
    resolve();
    std::lock_guard lock(mutex_);
    return records_;
}

void Ledger::write_csv(const std::filesystem::path& file) { write_records(file, records()); }

void write_records(const std::filesystem::path& file, const std::vector<LedgerRecord>& records) {
    std::ofstream out(file);
    out << kLedgerHeader << '\n';
    for (const auto& r : records) {
        char buf[160];
        std::snprintf(buf, sizeof buf, ",%u,%d,%d,%.6f,%.6f,%.6f\n", r.smem, r.registers,
                      r.blocks_per_sm, r.waves, r.sm_share, r.ms);
        out << r.kernel << ',' << r.variant << ',' << r.grid.x << 'x' << r.grid.y << 'x'
            << r.grid.z << ',' << r.block.x << 'x' << r.block.y << 'x' << r.block.z << buf;
    }
    if (!out)
        throw ConfigError("cannot write the launch ledger", file.string());
}

Ledger::~Ledger() {
    hook_.reset();
    if (!from_environment_)
        return;
    // Recording started by KJIT_LEDGER ends with the process: write what was recorded (the
    // timings were resolved when their contexts closed).
    try {
        write_records(process_flags().get_string(kFlagLedgerFile), records_);
    } catch (const std::exception& e) {
        warn(e.what());
    }
}

namespace {
/// The whole of `s` as a T (no sign for an unsigned T, nothing left over).
template <class T> bool parse_whole(std::string_view s, T& out) {
    if (s.empty() || (std::is_unsigned_v<T> && s.front() == '-'))
        return false;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
}

/// "XxYxZ" with each part a positive 32-bit count.
bool parse_dim(const std::string& s, Dim3& d) {
    const std::size_t a = s.find('x'), b = s.find('x', a == std::string::npos ? a : a + 1);
    if (a == std::string::npos || b == std::string::npos)
        return false;
    const std::string_view v(s);
    return parse_whole(v.substr(0, a), d.x) && parse_whole(v.substr(a + 1, b - a - 1), d.y) &&
           parse_whole(v.substr(b + 1), d.z) && d.x > 0 && d.y > 0 && d.z > 0;
}

/// A finite number, non-negative (or -1, a time not taken, when `untimed_ok`).
bool parse_measure(const std::string& s, double& out, bool untimed_ok = false) {
    char* end = nullptr;
    out = std::strtod(s.c_str(), &end);
    return !s.empty() && end == s.c_str() + s.size() && std::isfinite(out) &&
           (out >= 0 || (untimed_ok && out == -1));
}
} // namespace

std::vector<LedgerRecord> read_ledger_csv(const std::filesystem::path& file) {
    std::istringstream in(read_text_file(file, "the launch ledger"));
    std::vector<LedgerRecord> out;
    std::string line;
    int line_no = 0;
    while (std::getline(in, line)) {
        ++line_no;
        if (!line.empty() && line.back() == '\r') // written on Windows, or by a spreadsheet
            line.pop_back();
        if (line_no == 1) { // a file that is no ledger is refused, not read as an empty one
            if (line != kLedgerHeader)
                throw ConfigError("not a launch ledger: its first line is not '" +
                                      std::string(kLedgerHeader) + "'",
                                  file.string(), 1);
            continue;
        }
        if (line.empty())
            continue;
        std::vector<std::string> cols;
        std::stringstream ss(line);
        for (std::string c; std::getline(ss, c, ',');)
            cols.push_back(c);
        LedgerRecord r;
        bool ok = cols.size() == 10 && parse_dim(cols[2], r.grid) && parse_dim(cols[3], r.block);
        if (ok) {
            r.kernel = cols[0];
            r.variant = cols[1];
            ok = parse_whole(cols[4], r.smem) && parse_whole(cols[5], r.registers) &&
                 parse_whole(cols[6], r.blocks_per_sm) && r.registers >= 0 &&
                 r.blocks_per_sm >= 0 && parse_measure(cols[7], r.waves) &&
                 parse_measure(cols[8], r.sm_share) && parse_measure(cols[9], r.ms, true);
        }
        if (!ok)
            throw ConfigError("malformed ledger row: expected 10 columns (" +
                                  std::string(kLedgerHeader) + ")",
                              file.string(), line_no);
        out.push_back(std::move(r));
    }
    if (line_no == 0)
        throw ConfigError("not a launch ledger: the file is empty", file.string(), 1);
    return out;
}

std::string ledger_table(const std::vector<LedgerRecord>& records) {
    struct Row {
        std::string kernel, variant, grid, block;
        long calls = 0;
        double ms = 0;
        bool timed = true;
        double share = 0, waves = 0;
        int per_sm = 0, regs = 0;
        double recoverable() const { return ms * (1 - share); }
    };
    std::map<std::pair<std::string, std::string>, Row> rows;
    for (const auto& r : records) {
        // A kernel's timed launches and its untimed ones (a plan's steps) are separate rows: the
        // timed total stays a total of what was timed, the untimed calls are still counted.
        Row& row = rows[{r.kernel, r.variant + "|" + r.grid.str() + r.block.str() +
                                       (r.ms >= 0 ? "" : "|untimed")}];
        row.kernel = r.kernel;
        row.variant = r.variant;
        row.grid = r.grid.str();
        row.block = r.block.str();
        ++row.calls;
        row.timed = row.timed && r.ms >= 0;
        row.ms += std::max(0.0, r.ms);
        row.share = r.sm_share;
        row.waves = r.waves;
        row.per_sm = r.blocks_per_sm;
        row.regs = r.registers;
    }
    std::vector<Row> sorted;
    for (auto& [_, r] : rows)
        sorted.push_back(r);
    std::stable_sort(sorted.begin(), sorted.end(), [](const Row& a, const Row& b) {
        return a.recoverable() != b.recoverable() ? a.recoverable() > b.recoverable()
                                                  : a.share < b.share;
    });
    std::string out;
    char buf[512];
    std::snprintf(buf, sizeof buf, "%-20s %-28s %7s %10s %-14s %-12s %4s %9s %6s %7s %12s\n",
                  "kernel", "variant", "calls", "total ms", "grid", "block", "regs", "blocks/SM",
                  "waves", "SMs", "recover ms");
    out += buf;
    for (const auto& r : sorted) {
        std::snprintf(buf, sizeof buf,
                      "%-20s %-28s %7ld %10s %-14s %-12s %4d %9d %6.2f %6.1f%% %12s%s\n",
                      r.kernel.c_str(), r.variant.substr(0, 28).c_str(), r.calls,
                      r.timed ? std::to_string(r.ms).substr(0, 9).c_str() : "-", r.grid.c_str(),
                      r.block.c_str(), r.regs, r.per_sm, r.waves, 100 * r.share,
                      r.timed ? std::to_string(r.recoverable()).substr(0, 9).c_str() : "-",
                      r.share < 0.5 ? "  << under 50% of SMs" : "");
        out += buf;
    }
    return out;
}

} // namespace kjit
