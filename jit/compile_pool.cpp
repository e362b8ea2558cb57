#include "jit/compile_pool.hpp"

#include "core/warnings.hpp"
#include "jit/compile_record.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

extern char** environ;

namespace kjit {

namespace {

// ---- wire format: little-endian u64 lengths and integers, raw bytes ----

class Writer {
  public:
    void u64(std::uint64_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof v); }
    void str(std::string_view s) {
        u64(s.size());
        out_.append(s);
    }
    [[nodiscard]] const std::string& bytes() const { return out_; }

  private:
    std::string out_;
};

class Reader {
  public:
    explicit Reader(std::string_view in) : in_(in) {}
    std::uint64_t u64() {
        if (in_.size() - pos_ < 8)
            throw Error("compile worker: truncated message");
        std::uint64_t v;
        std::memcpy(&v, in_.data() + pos_, 8);
        pos_ += 8;
        return v;
    }
    std::string str() {
        const std::uint64_t n = u64();
        if (in_.size() - pos_ < n)
            throw Error("compile worker: truncated message");
        std::string s(in_.substr(pos_, n));
        pos_ += n;
        return s;
    }

  private:
    std::string_view in_;
    std::size_t pos_ = 0;
};

void put_strings(Writer& w, const std::vector<std::string>& v) {
    w.u64(v.size());
    for (const auto& s : v)
        w.str(s);
}
std::vector<std::string> get_strings(Reader& r) {
    std::vector<std::string> v(r.u64());
    for (auto& s : v)
        s = r.str();
    return v;
}
void put_defines(Writer& w, const std::map<std::string, std::string>& d) {
    w.u64(d.size());
    for (const auto& [k, v] : d) {
        w.str(k);
        w.str(v);
    }
}
std::map<std::string, std::string> get_defines(Reader& r) {
    std::map<std::string, std::string> d;
    for (std::uint64_t n = r.u64(); n > 0; --n) {
        std::string k = r.str();
        d[k] = r.str();
    }
    return d;
}

void put_options(Writer& w, const CompileOptions& o) {
    w.str(o.arch);
    w.str(o.std);
    put_defines(w, o.defines);
    w.u64((o.fmad ? 1 : 0) | (o.fast_math ? 2 : 0) | (o.lineinfo ? 4 : 0) | (o.ptx ? 8 : 0) |
          (o.toolkit_headers ? 16 : 0) | (o.check_only ? 32 : 0) | (o.entry_optional ? 64 : 0) |
          (o.templates_later ? 128 : 0));
    put_strings(w, o.include_dirs);
    put_strings(w, o.toolkit_include_dirs);
    put_strings(w, o.name_expressions);
    put_strings(w, o.extra);
}
CompileOptions get_options(Reader& r) {
    CompileOptions o;
    o.arch = r.str();
    o.std = r.str();
    o.defines = get_defines(r);
    const std::uint64_t flags = r.u64();
    o.fmad = flags & 1;
    o.fast_math = flags & 2;
    o.lineinfo = flags & 4;
    o.ptx = flags & 8;
    o.toolkit_headers = flags & 16;
    o.check_only = flags & 32;
    o.entry_optional = flags & 64;
    o.templates_later = flags & 128;
    o.include_dirs = get_strings(r);
    o.toolkit_include_dirs = get_strings(r);
    o.name_expressions = get_strings(r);
    o.extra = get_strings(r);
    return o;
}

std::string encode_job(const CompileJob& job) {
    Writer w;
    w.u64(job.sources->files().size());
    for (const auto& f : job.sources->files()) {
        w.str(f.name);
        w.str(f.path);
        w.str(f.text);
    }
    w.str(job.kernel);
    put_options(w, job.options);
    return w.bytes();
}

enum Status : std::uint64_t { kCompiled = 0, kCompileFailed = 1, kOtherError = 2 };

// A reply is a status, then the compile's record (jit/compile_record.hpp) with the machine code
// beside it, the failed compile's record, or another error's text.
std::string encode_outcome(const CompileOutcome& o) {
    Writer w;
    if (o.compiled) {
        w.u64(kCompiled);
        w.str(kernel_meta(*o.compiled));
        w.str(o.compiled->cubin);
        w.str(o.compiled->ptx);
        return w.bytes();
    }
    try {
        std::rethrow_exception(o.error);
    } catch (const CompileError& e) {
        w.u64(kCompileFailed);
        w.str(compile_error_meta(e));
    } catch (const std::exception& e) {
        w.u64(kOtherError);
        w.str(e.what());
    }
    return w.bytes();
}

CompileOutcome decode_outcome(const std::string& bytes, const CompileOptions& options) {
    Reader r(bytes);
    CompileOutcome out;
    const std::uint64_t status = r.u64();
    if (status == kCompiled) {
        std::string meta = r.str(), cubin = r.str(), ptx = r.str();
        out.compiled = kernel_from_meta(meta, std::move(cubin), std::move(ptx), options);
    } else if (status == kCompileFailed) {
        out.error = std::make_exception_ptr(compile_error_from_meta(r.str()));
    } else {
        out.error = std::make_exception_ptr(Error(r.str()));
    }
    return out;
}

// ---- framing over pipes: u64 length, then the message ----

/// Writes all of p; to a socket with MSG_NOSIGNAL, so a dead peer is an error, not SIGPIPE.
bool write_full(int fd, const char* p, std::size_t n) {
    while (n > 0) {
        ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == ENOTSOCK)
            k = ::write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        p += k;
        n -= static_cast<std::size_t>(k);
    }
    return true;
}
bool read_full(int fd, char* p, std::size_t n) {
    while (n > 0) {
        const ssize_t k = ::read(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        p += k;
        n -= static_cast<std::size_t>(k);
    }
    return true;
}
bool send_message(int fd, const std::string& m) {
    const std::uint64_t n = m.size();
    return write_full(fd, reinterpret_cast<const char*>(&n), sizeof n) &&
           write_full(fd, m.data(), m.size());
}
bool receive_message(int fd, std::string& m) {
    std::uint64_t n = 0;
    if (!read_full(fd, reinterpret_cast<char*>(&n), sizeof n) || n > (1ull << 34))
        return false;
    m.resize(n);
    return read_full(fd, m.data(), n);
}

CompileOutcome compile_here(const CompileJob& job) {
    CompileOutcome out;
    try {
        out.compiled = compile(*job.sources, job.kernel, job.options);
    } catch (...) {
        out.error = std::current_exception();
    }
    return out;
}

/// One child process running `worker compile-worker`, talked to over two pipes.
class WorkerProcess {
  public:
    explicit WorkerProcess(const std::filesystem::path& worker) {
        // The channel to the child is a socket: writes to a dead worker fail with EPIPE
        // (MSG_NOSIGNAL) instead of raising SIGPIPE in this process.
        int to_child[2], from_child[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, to_child) != 0)
            return;
        if (::pipe2(from_child, O_CLOEXEC) != 0) {
            ::close(to_child[0]);
            ::close(to_child[1]);
            return;
        }
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, to_child[0], 0);
        posix_spawn_file_actions_adddup2(&fa, from_child[1], 1);
        const std::string path = worker.string();
        char* argv[] = {const_cast<char*>(path.c_str()), const_cast<char*>("compile-worker"),
                        nullptr};
        const int rc = ::posix_spawn(&pid_, path.c_str(), &fa, nullptr, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        ::close(to_child[0]);
        ::close(from_child[1]);
        if (rc != 0) {
            failure_ = std::string("cannot start it: ") + std::strerror(rc);
            pid_ = -1;
            ::close(to_child[1]);
            ::close(from_child[0]);
            return;
        }
        in_ = to_child[1];
        out_ = from_child[0];
    }
    WorkerProcess(const WorkerProcess&) = delete;
    WorkerProcess& operator=(const WorkerProcess&) = delete;
    ~WorkerProcess() {
        if (in_ >= 0)
            ::close(in_); // end of input: the worker exits
        if (out_ >= 0)
            ::close(out_);
        if (pid_ > 0) {
            int status = 0;
            while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
            }
        }
    }
    [[nodiscard]] bool alive() const { return pid_ > 0 && in_ >= 0; }

    /// The outcome, or nullopt when the worker failed (the caller compiles in-process).
    std::optional<CompileOutcome> run(const CompileJob& job) {
        std::string reply;
        if (!alive() || !send_message(in_, encode_job(job)) || !receive_message(out_, reply)) {
            if (in_ >= 0)
                ::close(in_);
            in_ = -1;
            if (failure_.empty())
                failure_ = answered_ == 0
                               ? "it gave no answer (is it a kjit binary with compile-worker?)"
                               : "it stopped answering after " + std::to_string(answered_) +
                                     " compile(s), at " + job.kernel;
            return std::nullopt;
        }
        ++answered_;
        try {
            return decode_outcome(reply, job.options);
        } catch (const Error& e) {
            failure_ = std::string("its answer did not decode: ") + e.what();
            return std::nullopt;
        }
    }
    /// Why the worker was not used, once it failed.
    [[nodiscard]] const std::string& failure() const { return failure_; }

  private:
    pid_t pid_ = -1;
    int in_ = -1, out_ = -1;
    std::size_t answered_ = 0;
    std::string failure_;
};

} // namespace

int default_compile_jobs(const ResolvedFlags& flags) {
    if (const std::int64_t n = flags.get_int(kFlagCompileJobs); n > 0)
        return static_cast<int>(n);
    const unsigned n = std::thread::hardware_concurrency();
    return n > 0 ? static_cast<int>(n) : 1;
}

std::vector<CompileOutcome> compile_all(std::span<const CompileJob> jobs, int parallelism,
                                        const std::filesystem::path& worker,
                                        const CompileProgress& progress) {
    std::vector<CompileOutcome> out(jobs.size());
    if (jobs.empty())
        return out;
    const int n = std::max(1, std::min<int>(parallelism, static_cast<int>(jobs.size())));
    std::atomic<std::size_t> next{0}, done{0};
    std::mutex progress_mutex;
    std::once_flag said; // that the worker failed
    const bool use_workers = !worker.empty();
    const auto drain = [&] {
        std::optional<WorkerProcess> proc;
        if (use_workers)
            proc.emplace(worker);
        for (std::size_t i; (i = next.fetch_add(1)) < jobs.size();) {
            std::optional<CompileOutcome> r;
            if (proc && proc->alive())
                r = proc->run(jobs[i]);
            if (proc && !r && !proc->failure().empty()) {
                // Said once per batch: each compile still succeeds, on a thread.
                std::call_once(said, [&] {
                    warn("compile worker " + worker.string() + " not used, " + proc->failure() +
                         ": compiling on threads");
                });
            }
            out[i] = r ? std::move(*r) : compile_here(jobs[i]);
            const std::size_t d = ++done;
            if (progress) {
                std::lock_guard lock(progress_mutex);
                progress(d, jobs.size(), jobs[i].kernel);
            }
        }
    };
    if (n == 1 && !use_workers) {
        drain();
    } else {
        std::vector<std::thread> threads;
        for (int t = 0; t < n; ++t)
            threads.emplace_back(drain);
        for (auto& t : threads)
            t.join();
    }
    return out;
}

int serve_compile_worker(int in_fd, int out_fd) {
    std::string request;
    while (receive_message(in_fd, request)) {
        CompileOutcome outcome;
        try {
            Reader r(request);
            SourceSet sources;
            for (std::uint64_t n = r.u64(); n > 0; --n) {
                SourceFile f;
                f.name = r.str();
                f.path = r.str();
                f.text = r.str();
                f.hash = hash128(f.text);
                f.mtime_ns = 0;
                sources.add(std::move(f));
            }
            CompileJob job;
            job.sources = &sources;
            job.kernel = r.str();
            job.options = get_options(r);
            outcome = compile_here(job);
        } catch (...) {
            outcome.error = std::current_exception();
        }
        if (!send_message(out_fd, encode_outcome(outcome)))
            return 1;
    }
    return 0;
}

} // namespace kjit
