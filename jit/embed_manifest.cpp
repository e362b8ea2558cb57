#include "jit/embed_manifest.hpp"

#include "core/text_file.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <set>

namespace kjit {

namespace {

// The header is assembled from two halves so that the reader's own copy of it (in kjit's
// binary) is not a header followed by a manifest.
constexpr std::string_view kHeadA = "KJIT-EMBED-";
constexpr std::string_view kHeadB = "MANIFEST 1\n";
constexpr std::string_view kEnd = "end\n";
constexpr std::size_t kMaxName = 4096;
// A binary is read whole; engines with large embedded tables stay well under this.
constexpr std::uint64_t kMaxBinaryBytes = 4ull << 30;

std::string header() { return std::string(kHeadA) + std::string(kHeadB); }

// "<length>:<bytes>"
void put_counted(std::string& out, std::string_view s) {
    out += std::to_string(s.size());
    out += ':';
    out += s;
}

// Reads what the writer wrote, advancing `at`; nullopt on anything else.
class Reader {
  public:
    Reader(std::string_view text, std::size_t at) : text_(text), at_(at) {}
    [[nodiscard]] std::size_t at() const { return at_; }
    bool literal(std::string_view s) {
        if (text_.substr(at_, s.size()) != s)
            return false;
        at_ += s.size();
        return true;
    }
    template <class Int> std::optional<Int> integer() {
        Int v{};
        const char* begin = text_.data() + at_;
        const auto [end, ec] = std::from_chars(begin, text_.data() + text_.size(), v);
        if (ec != std::errc() || end == begin)
            return std::nullopt;
        at_ += static_cast<std::size_t>(end - begin);
        return v;
    }
    // A name or prefix: at most kMaxName bytes, none of them a control character.
    std::optional<std::string> counted() {
        const auto n = integer<std::size_t>();
        if (!n || *n > kMaxName || !literal(":") || *n > text_.size() - at_)
            return std::nullopt;
        const std::string_view s = text_.substr(at_, *n);
        if (std::any_of(s.begin(), s.end(),
                        [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
            return std::nullopt;
        at_ += *n;
        return std::string(s);
    }
    std::optional<Hash128> hash() {
        if (text_.size() - at_ < 32)
            return std::nullopt;
        const auto h = Hash128::parse(text_.substr(at_, 32));
        if (h)
            at_ += 32;
        return h;
    }

  private:
    std::string_view text_;
    std::size_t at_;
};

// A file's name in its tree: relative, and never leading out of it.
bool relative_name(const std::string& name) {
    if (name.empty() || name.front() == '/')
        return false;
    for (std::size_t at = 0; at <= name.size();) {
        const std::size_t end = std::min(name.find('/', at), name.size());
        if (name.compare(at, end - at, "..") == 0 && end - at == 2)
            return false;
        at = end + 1;
    }
    return true;
}

std::optional<EmbedManifest> parse_at(std::string_view bytes, std::size_t& at) {
    Reader r(bytes, at);
    EmbedManifest m;
    if (!r.literal(header()) || !r.literal("prefix "))
        return std::nullopt;
    auto prefix = r.counted();
    if (!prefix || !r.literal("\n"))
        return std::nullopt;
    m.prefix = std::move(*prefix);
    std::set<std::string> names;
    while (!r.literal(kEnd)) {
        EmbedManifest::File f;
        const auto h = r.hash();
        if (!h || !r.literal(" "))
            return std::nullopt;
        const auto mtime = r.integer<std::int64_t>();
        if (!mtime || !r.literal(" "))
            return std::nullopt;
        auto name = r.counted();
        if (!name || !r.literal("\n") || !relative_name(*name) || !names.insert(*name).second)
            return std::nullopt;
        f.name = std::move(*name);
        f.hash = *h;
        f.mtime_ns = *mtime;
        m.files.push_back(std::move(f));
    }
    at = r.at();
    return m;
}

} // namespace

std::string format_manifest(const EmbedManifest& manifest) {
    std::string out = header() + "prefix ";
    put_counted(out, manifest.prefix);
    out += '\n';
    for (const auto& f : manifest.files) {
        out += f.hash.hex() + ' ' + std::to_string(f.mtime_ns) + ' ';
        put_counted(out, f.name);
        out += '\n';
    }
    out += kEnd;
    return out;
}

std::vector<EmbedManifest> find_manifests(std::string_view bytes) {
    std::vector<EmbedManifest> out;
    // A binary may hold one manifest twice (its debug information keeps a constexpr array's
    // value): each distinct text counts once.
    std::set<std::string_view> seen;
    const std::string head = header();
    std::size_t at = 0;
    while ((at = bytes.find(head, at)) != std::string_view::npos) {
        std::size_t end = at;
        if (auto m = parse_at(bytes, end)) {
            if (seen.insert(bytes.substr(at, end - at)).second)
                out.push_back(std::move(*m));
            at = end;
        } else {
            at += head.size();
        }
    }
    return out;
}

std::vector<EmbedManifest> read_manifests(const std::filesystem::path& binary) {
    return find_manifests(read_text_file(binary, "binary", kMaxBinaryBytes));
}

} // namespace kjit
