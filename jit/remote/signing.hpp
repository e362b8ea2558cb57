#pragma once
// HMAC-SHA-256 through OpenSSL's libcrypto, opened with dlopen (libcrypto.so.3, else .so.1.1)
// so that a kjit binary starts where it is absent; and the secret remote entries are signed
// with, read from a file only its owner can read.

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace kjit {

/// An HMAC-SHA-256 tag.
using Mac = std::array<std::uint8_t, 32>;

/// True when libcrypto can be opened; `why_not` says otherwise.
bool hmac_available(std::string* why_not = nullptr);

/// HMAC-SHA-256 of `message` under `key`; Error when libcrypto cannot be opened.
Mac hmac_sha256(std::string_view key, std::string_view message);

/// Compares two tags in time that does not depend on where they differ.
bool same_mac(const Mac& a, const Mac& b);

/// The secret remote cache entries are signed with (never printed).
class SigningKey {
  public:
    /// A secret shorter than this is refused.
    static constexpr std::size_t kMinBytes = 16;
    /// A secret file longer than this is refused (it is not a secret).
    static constexpr std::size_t kMaxBytes = 4096;

    /// Reads the secret from `file` (links followed, never blocking): a regular file owned by
    /// the current user that no one else may read or write (mode 0600 or 0400), of kMinBytes
    /// to kMaxBytes bytes, less one trailing newline. ConfigError naming the file and what is
    /// wrong ("... is readable by group or others (mode 644): chmod 600 it").
    static SigningKey from_file(const std::filesystem::path& file);
    /// A secret given as bytes (tests, tools); ConfigError when shorter than kMinBytes.
    static SigningKey from_bytes(std::string secret, std::string origin = "(given in memory)");

    /// The tag of `message`.
    [[nodiscard]] Mac sign(std::string_view message) const;
    /// True when `tag` is the tag of `message`.
    [[nodiscard]] bool verify(std::string_view message, const Mac& tag) const;
    /// Where the secret came from (the file's path), for messages.
    [[nodiscard]] const std::string& origin() const { return origin_; }

  private:
    SigningKey(std::string secret, std::string origin)
        : secret_(std::move(secret)), origin_(std::move(origin)) {}
    std::string secret_;
    std::string origin_;
};

} // namespace kjit
