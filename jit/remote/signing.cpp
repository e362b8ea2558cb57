#include "jit/remote/signing.hpp"

#include "core/error.hpp"
#include "jit/cache_files.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace kjit {

namespace {

// The two libcrypto functions kjit calls, with the C signatures OpenSSL 1.1 and 3 share.
struct EvpMd;
using EvpSha256Fn = const EvpMd* (*)();
using HmacFn = unsigned char* (*)(const EvpMd*, const void*, int, const unsigned char*,
                                  std::size_t, unsigned char*, unsigned int*);

struct Libcrypto {
    EvpSha256Fn sha256 = nullptr;
    HmacFn hmac = nullptr;
    std::string problem; ///< why it cannot be used; "" when it can
};

const Libcrypto& libcrypto() {
    static const Libcrypto api = [] {
        Libcrypto c;
        std::string errors;
        for (const char* name : {"libcrypto.so.3", "libcrypto.so.1.1"}) {
            void* lib = ::dlopen(name, RTLD_NOW | RTLD_LOCAL); // never dlclose'd
            if (!lib) {
                const char* e = ::dlerror();
                errors += (errors.empty() ? "" : "; ") + std::string(e ? e : name);
                continue;
            }
            c.sha256 = reinterpret_cast<EvpSha256Fn>(::dlsym(lib, "EVP_sha256"));
            c.hmac = reinterpret_cast<HmacFn>(::dlsym(lib, "HMAC"));
            if (c.sha256 && c.hmac)
                return c;
            errors += (errors.empty() ? "" : "; ") + std::string(name) + " lacks EVP_sha256 or HMAC";
        }
        c.sha256 = nullptr;
        c.hmac = nullptr;
        c.problem = "OpenSSL's libcrypto (libcrypto.so.3 or .so.1.1) cannot be opened: " + errors;
        return c;
    }();
    return api;
}

std::string mode_text(mode_t mode) {
    char m[8];
    std::snprintf(m, sizeof m, "%03o", static_cast<unsigned>(mode & 0777));
    return m;
}

} // namespace

bool hmac_available(std::string* why_not) {
    const Libcrypto& c = libcrypto();
    if (why_not)
        *why_not = c.problem;
    return c.problem.empty();
}

Mac hmac_sha256(std::string_view key, std::string_view message) {
    const Libcrypto& c = libcrypto();
    if (!c.problem.empty())
        throw Error(c.problem);
    Mac out{};
    unsigned int length = 0;
    if (!c.hmac(c.sha256(), key.data(), static_cast<int>(key.size()),
                reinterpret_cast<const unsigned char*>(message.data()), message.size(), out.data(),
                &length) ||
        length != out.size())
        throw Error("HMAC-SHA-256 through libcrypto failed");
    return out;
}

bool same_mac(const Mac& a, const Mac& b) {
    unsigned diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        diff |= static_cast<unsigned>(a[i] ^ b[i]);
    return diff == 0;
}

SigningKey SigningKey::from_file(const std::filesystem::path& file) {
    const std::string name = file.string();
    const auto refuse = [&](const std::string& why) {
        return ConfigError("remote cache secret " + name + " (KJIT_REMOTE_SECRET) " + why);
    };
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        throw refuse("cannot be opened: " + std::string(std::strerror(errno)));
    struct stat st {};
    std::string bytes;
    std::string problem;
    if (::fstat(fd, &st) != 0)
        problem = "cannot be read: " + std::string(std::strerror(errno));
    else if (!S_ISREG(st.st_mode))
        problem = "is " + file_kind_text(st.st_mode) + ", not a file";
    else if (st.st_uid != ::geteuid())
        problem = "is owned by uid " + std::to_string(st.st_uid) + ", not by uid " +
                  std::to_string(::geteuid()) + ": only its owner's secret is used";
    else if (st.st_mode & 077)
        problem = "is " + std::string(st.st_mode & 044 ? "readable" : "writable") +
                  " by group or others (mode " + mode_text(st.st_mode) +
                  "): the secret would not be secret; chmod 600 it";
    else if (st.st_size > static_cast<off_t>(kMaxBytes))
        problem = "holds " + std::to_string(st.st_size) + " bytes, more than a secret's " +
                  std::to_string(kMaxBytes);
    else if (!read_exactly(fd, bytes, static_cast<std::size_t>(st.st_size)))
        problem = "cannot be read: short read";
    ::close(fd);
    if (!problem.empty())
        throw refuse(problem);
    if (bytes.ends_with('\n'))
        bytes.pop_back();
    if (bytes.ends_with('\r'))
        bytes.pop_back();
    if (bytes.size() < kMinBytes)
        throw refuse("holds " + std::to_string(bytes.size()) + " bytes; a secret needs at least " +
                     std::to_string(kMinBytes) + " (e.g. `openssl rand -hex 32`)");
    return SigningKey(std::move(bytes), name);
}

SigningKey SigningKey::from_bytes(std::string secret, std::string origin) {
    if (secret.size() < kMinBytes)
        throw ConfigError("remote cache secret " + origin + " holds " +
                          std::to_string(secret.size()) + " bytes; a secret needs at least " +
                          std::to_string(kMinBytes));
    return SigningKey(std::move(secret), std::move(origin));
}

Mac SigningKey::sign(std::string_view message) const {
    return hmac_sha256(secret_, message);
}

bool SigningKey::verify(std::string_view message, const Mac& tag) const {
    return same_mac(sign(message), tag);
}

} // namespace kjit
