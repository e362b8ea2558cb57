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
    const auto fail = [&](const std::string& reason) {
        throw ConfigError("cannot write " + std::string(what) + ": " + reason, path.string());
    };
    // Through a link to the file it names: the link stays, the file it names is replaced.
    std::error_code ec;
    const std::filesystem::path target =
        std::filesystem::is_symlink(path, ec) ? std::filesystem::weakly_canonical(path, ec) : path;
    struct stat st {};
    const bool exists = ::stat(target.c_str(), &st) == 0;
    const bool special = exists && !S_ISREG(st.st_mode);
    if (special && S_ISDIR(st.st_mode))
        fail(std::strerror(EISDIR));
    const std::string tmp =
        special ? target.string() : target.string() + ".tmp" + std::to_string(::getpid());
    const int flags = O_WRONLY | O_CLOEXEC | (special ? 0 : O_CREAT | O_TRUNC | O_NOFOLLOW);
    Fd f{::open(tmp.c_str(), flags, 0644)};
    if (f.fd < 0) {
        const int e = errno;
        if (special || e == ENOENT)
            fail(std::strerror(e));
        const std::filesystem::path dir = target.parent_path().empty() ? "." : target.parent_path();
        fail("cannot create a file in " + dir.string() + " to write it whole: " + std::strerror(e));
    }
    const auto give_up = [&](int e) {
        if (!special)
            ::unlink(tmp.c_str());
        fail(std::strerror(e));
    };
    // The file it replaces keeps its permissions.
    if (exists && !special && ::fchmod(f.fd, st.st_mode & 07777) != 0)
        give_up(errno);
    for (std::size_t done = 0; done < bytes.size();) {
        const ssize_t n = ::write(f.fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            give_up(n < 0 ? errno : EIO);
        done += static_cast<std::size_t>(n);
    }
    // On the disk before it takes the name: a crash leaves the old file or the new one.
    if (!special && ::fsync(f.fd) != 0)
        give_up(errno);
    const int fd = f.fd;
    f.fd = -1;
    if (::close(fd) != 0)
        give_up(errno);
    if (!special && ::rename(tmp.c_str(), target.c_str()) != 0)
        give_up(errno);
}

} // namespace kjit
