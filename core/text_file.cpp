#include "core/text_file.hpp"

#include "core/error.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kjit {

namespace {

const char* kind_of(mode_t mode) {
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

/// Closes the descriptor on every path out.
struct Fd {
    int fd;
    ~Fd() {
        if (fd >= 0)
            ::close(fd);
    }
};

} // namespace

std::string read_text_file(const std::filesystem::path& path, std::string_view what,
                           std::uint64_t max_bytes) {
    const auto fail = [&](const std::string& reason) -> std::string {
        throw ConfigError("cannot read " + std::string(what) + ": " + reason, path.string());
    };
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
    const Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
    if (f.fd < 0)
        return fail(std::strerror(errno));
    struct stat st {};
    if (::fstat(f.fd, &st) != 0)
        return fail(std::strerror(errno));
    if (!S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode))
            return fail(std::strerror(EISDIR));
        return fail(std::string("it is ") + kind_of(st.st_mode) + ", not a regular file");
    }
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size > max_bytes)
        return fail("it is " + std::to_string(size) + " bytes, more than the " +
                    std::to_string(max_bytes >> 20) + " MiB kjit reads from one file");
    std::string text;
    text.resize(static_cast<std::size_t>(size));
    std::size_t done = 0;
    // Up to the size fstat gave, and no further: a file that grows meanwhile is read as it was.
    while (done < text.size()) {
        const ssize_t n = ::read(f.fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return fail(std::strerror(errno));
        if (n == 0)
            break;
        done += static_cast<std::size_t>(n);
    }
    text.resize(done);
    return text;
}

void write_file_atomically(const std::filesystem::path& path, std::string_view bytes,
                           std::string_view what) {
    const auto fail = [&](int e) {
        throw ConfigError("cannot write " + std::string(what) + ": " + std::strerror(e),
                          path.string());
    };
    struct stat st {};
    const bool special = ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
    if (special && S_ISDIR(st.st_mode))
        fail(EISDIR);
    const std::string tmp =
        special ? path.string() : path.string() + ".tmp" + std::to_string(::getpid());
    const int flags = O_WRONLY | O_CLOEXEC | (special ? 0 : O_CREAT | O_TRUNC | O_NOFOLLOW);
    Fd f{::open(tmp.c_str(), flags, 0644)};
    if (f.fd < 0)
        fail(errno);
    const auto give_up = [&](int e) {
        if (!special)
            ::unlink(tmp.c_str());
        fail(e);
    };
    for (std::size_t done = 0; done < bytes.size();) {
        const ssize_t n = ::write(f.fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            give_up(n < 0 ? errno : EIO);
        done += static_cast<std::size_t>(n);
    }
    const int fd = f.fd;
    f.fd = -1;
    if (::close(fd) != 0)
        give_up(errno);
    if (!special && ::rename(tmp.c_str(), path.c_str()) != 0)
        give_up(errno);
}

} // namespace kjit
