#include "jit/remote/remote_cache.hpp"

#include "core/warnings.hpp"

#include <unistd.h>

#include <cctype>
#include <random>

namespace kjit {

namespace {

// Leases: take up to ARGV[3] of KEYS that no one holds (SET NX PX), in order; release or
// renew only the leases whose value is this holder's token (never another holder's).
constexpr const char* kClaimScript = R"(local got = {}
for i, k in ipairs(KEYS) do
  if redis.call('SET', k, ARGV[1], 'NX', 'PX', ARGV[2]) then
    got[#got + 1] = i
    if #got >= tonumber(ARGV[3]) then break end
  end
end
return got)";
constexpr const char* kReleaseScript = R"(local n = 0
for _, k in ipairs(KEYS) do
  if redis.call('GET', k) == ARGV[1] then n = n + redis.call('DEL', k) end
end
return n)";
constexpr const char* kRenewScript = R"(local n = 0
for _, k in ipairs(KEYS) do
  if redis.call('GET', k) == ARGV[1] then n = n + redis.call('PEXPIRE', k, ARGV[2]) end
end
return n)";

/// How many bytes of an entry a listing reads first (the headers and most metas).
constexpr std::size_t kPeekBytes = 4096;

bool valid_prefix(const std::string& p) {
    if (p.empty() || p.size() > 64)
        return false;
    for (char c : p)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.' &&
            c != ':' && c != '/')
            return false;
    return true;
}

std::string host_name() {
    char h[256] = {};
    if (::gethostname(h, sizeof h - 1) != 0 || !*h)
        return "unknown";
    return h;
}

std::vector<std::string> eval(const char* script, const std::vector<std::string>& keys,
                              std::initializer_list<std::string> args) {
    std::vector<std::string> cmd{"EVAL", script, std::to_string(keys.size())};
    cmd.insert(cmd.end(), keys.begin(), keys.end());
    cmd.insert(cmd.end(), args.begin(), args.end());
    return cmd;
}

/// `used_memory_human` and the like from an INFO reply.
std::string info_field(const std::string& info, const std::string& name) {
    const auto at = info.find(name + ":");
    if (at == std::string::npos)
        return "?";
    const auto start = at + name.size() + 1;
    return info.substr(start, info.find_first_of("\r\n", start) - start);
}

} // namespace

RemoteSettings RemoteSettings::from_flags(const ResolvedFlags& flags) {
    RemoteSettings s;
    s.url = flags.get_string(kFlagRemoteCache);
    s.prefix = flags.get_string(kFlagRemotePrefix);
    s.secret = flags.get_string(kFlagRemoteSecret);
    s.allow_unsigned = flags.get_bool(kFlagRemoteUnsigned);
    s.timeout = std::chrono::milliseconds(flags.get_int(kFlagRemoteTimeout));
    s.lease = std::chrono::milliseconds(flags.get_int(kFlagRemoteLease));
    return s;
}

RemoteCache::RemoteCache(RemoteSettings settings, WarningSink warn)
    : settings_(std::move(settings)),
      warn_(warn ? std::move(warn) : [](const std::string& m) { kjit::warn(m); }) {
    if (settings_.url.empty()) {
        disabled_reason_ = "KJIT_REMOTE_CACHE is not set";
        return;
    }
    // What is wrong in the configuration is an error; what is missing on this machine is not.
    address_ = std::make_unique<RedisAddress>(RedisAddress::parse(settings_.url));
    if (!valid_prefix(settings_.prefix))
        throw ConfigError("KJIT_REMOTE_PREFIX='" + settings_.prefix +
                          "' must be 1 to 64 letters, digits and _ - . : /");
    describe_ = address_->text() + " prefix " + settings_.prefix;
    if (!settings_.secret.empty())
        key_ = SigningKey::from_file(settings_.secret);
    std::string why;
    if (!RedisClient::available(&why)) {
    } else if (!key_ && !settings_.allow_unsigned) {
        why = "KJIT_REMOTE_SECRET is not set: entries must be signed (set it to an owner-only "
              "secret file, or KJIT_REMOTE_UNSIGNED=1 to trust every writer of the store)";
    } else if (key_ && !hmac_available(&why)) {
    }
    if (!why.empty()) {
        disabled_reason_ = why;
        warn_("remote cache " + describe_ + " is off: " + why);
        return;
    }
    thread_local std::mt19937_64 rng{std::random_device{}()};
    token_ = std::to_string(::getpid()) + "@" + host_name() + "/" + hex64(rng());
    enabled_ = true;
}

RemoteCache::~RemoteCache() {
    {
        std::lock_guard lock(keeper_mutex_);
        keeper_stop_ = true;
    }
    keeper_wake_.notify_all();
    if (keeper_.joinable())
        keeper_.join();
    std::vector<std::string> held;
    {
        std::lock_guard lock(mutex_);
        held.assign(held_.begin(), held_.end());
        held_.clear();
    }
    if (!held.empty())
        run({eval(kReleaseScript, held, {token_})});
}

std::string RemoteCache::disabled_reason() const {
    std::lock_guard lock(mutex_);
    return enabled_ ? std::string() : disabled_reason_;
}

std::string RemoteCache::signing() const {
    if (key_)
        return "signed, HMAC-SHA-256 with the secret in " + key_->origin();
    return "UNSIGNED (KJIT_REMOTE_UNSIGNED): whoever can write the store can run code here";
}

std::string RemoteCache::entry_key(const Hash128& key) const {
    return settings_.prefix + ":e:" + key.hex();
}

std::string RemoteCache::lease_key(const Hash128& key) const {
    return settings_.prefix + ":l:" + key.hex();
}

void RemoteCache::turn_off(const std::string& why) {
    // Called with mutex_ held; only the first failure warns.
    if (!enabled_.exchange(false))
        return;
    disabled_reason_ = why;
    warn_("remote cache " + describe_ + " is off for this process: " + why +
          "; kernels are compiled and cached on this host only");
}

void RemoteCache::stop_writes(const std::string& why) {
    if (!writable_.exchange(false))
        return;
    const bool full = why.starts_with("OOM");
    warn_("remote cache " + describe_ + (full ? " is full" : " refuses writes") + " (" + why +
          "): compiled kernels are no longer written to it and no leases are taken; it is "
          "still read");
}

std::optional<std::vector<RedisReply>>
RemoteCache::run(const std::vector<std::vector<std::string>>& commands) {
    std::lock_guard lock(mutex_);
    if (!enabled_)
        return std::nullopt;
    try {
        if (!client_)
            client_ = std::make_unique<RedisClient>(*address_, settings_.timeout);
        return client_->pipeline(commands);
    } catch (const RemoteStoreError& e) {
        client_.reset();
        turn_off(e.what());
    }
    return std::nullopt;
}

bool RemoteCache::connect() {
    const auto r = run({{"PING"}});
    if (r && r->front().is_error()) {
        std::lock_guard lock(mutex_);
        turn_off("PING: " + r->front().str);
        return false;
    }
    return r.has_value();
}

std::vector<RemoteLookup> RemoteCache::load(std::span<const Hash128> keys) {
    std::vector<RemoteLookup> out(keys.size());
    if (keys.empty() || !enabled_)
        return out;
    std::vector<std::vector<std::string>> commands;
    for (const auto& k : keys)
        commands.push_back({"GET", entry_key(k)});
    auto replies = run(commands);
    if (!replies)
        return out;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        RedisReply& r = (*replies)[i];
        std::string problem;
        if (r.type == RedisReply::Type::nil) {
            ++stats_.misses;
            continue;
        }
        if (r.type == RedisReply::Type::string) {
            stats_.bytes_read += r.str.size();
            out[i].entry = decode_remote_entry(r.str, keys[i], key_ ? &*key_ : nullptr, &problem);
            if (out[i].entry) {
                ++stats_.hits;
                continue;
            }
        } else if (r.is_error() && !r.str.starts_with("WRONGTYPE")) {
            std::lock_guard lock(mutex_);
            turn_off("GET: " + r.str);
            return std::vector<RemoteLookup>(keys.size());
        } else {
            problem = "not an entry (" + (r.is_error() ? r.str : "not a string") + ")";
        }
        out[i].refused = true;
        const std::string name = entry_key(keys[i]);
        bool first = false;
        {
            std::lock_guard lock(mutex_);
            first = refused_.insert(name).second;
        }
        if (first) {
            ++stats_.refused;
            warn_("refusing remote cache entry " + name + " from " + address_->text() + ": " +
                  problem + "; it is not served, the kernel is compiled here");
        }
    }
    return out;
}

std::size_t RemoteCache::store(std::span<const CacheEntry> entries) {
    if (entries.empty() || !enabled_ || !writable_)
        return 0;
    std::vector<std::vector<std::string>> commands;
    for (const auto& e : entries)
        commands.push_back(
            {"SET", entry_key(e.key), encode_remote_entry(e, key_ ? &*key_ : nullptr)});
    const auto replies = run(commands);
    if (!replies)
        return 0;
    std::size_t written = 0;
    for (std::size_t i = 0; i < replies->size(); ++i) {
        if ((*replies)[i].is_error()) {
            stop_writes((*replies)[i].str);
            continue;
        }
        ++written;
        stats_.bytes_written += commands[i][2].size();
    }
    stats_.stores += written;
    return written;
}

std::optional<std::vector<std::size_t>> RemoteCache::claim(std::span<const Hash128> keys,
                                                            std::size_t max) {
    if (!enabled_ || !writable_)
        return std::nullopt;
    std::vector<std::size_t> taken;
    if (keys.empty() || max == 0)
        return taken;
    std::vector<std::string> names;
    for (const auto& k : keys)
        names.push_back(lease_key(k));
    const auto replies = run({eval(kClaimScript, names,
                                   {token_, std::to_string(settings_.lease.count()),
                                    std::to_string(max)})});
    if (!replies)
        return std::nullopt;
    const RedisReply& r = replies->front();
    if (r.is_error()) {
        // A full or read-only store refuses the script's SET: no leases, as no writes.
        for (const char* refusal : {"OOM", "READONLY"})
            if (const auto at = r.str.find(refusal); at != std::string::npos) {
                stop_writes(r.str.substr(at));
                return std::nullopt;
            }
        std::lock_guard lock(mutex_);
        turn_off("EVAL (lease): " + r.str);
        return std::nullopt;
    }
    {
        std::lock_guard lock(mutex_);
        for (const auto& e : r.elements) {
            const auto i = static_cast<std::size_t>(e.integer - 1);
            if (e.integer < 1 || i >= keys.size())
                continue;
            taken.push_back(i);
            held_.insert(names[i]);
        }
    }
    stats_.leases += taken.size();
    if (!taken.empty()) {
        std::lock_guard lock(keeper_mutex_);
        if (!keeper_.joinable() && !keeper_stop_)
            keeper_ = std::thread([this] { renew_leases(); });
    }
    return taken;
}

void RemoteCache::renew_leases() {
    std::unique_lock wait_lock(keeper_mutex_);
    while (!keeper_stop_) {
        keeper_wake_.wait_for(wait_lock, settings_.lease / 3);
        if (keeper_stop_)
            break;
        std::vector<std::string> held;
        {
            std::lock_guard lock(mutex_);
            held.assign(held_.begin(), held_.end());
        }
        if (held.empty() || !enabled_)
            continue;
        wait_lock.unlock();
        run({eval(kRenewScript, held, {token_, std::to_string(settings_.lease.count())})});
        wait_lock.lock();
    }
}

void RemoteCache::release(std::span<const Hash128> keys) {
    std::vector<std::string> names;
    {
        std::lock_guard lock(mutex_);
        for (const auto& k : keys)
            if (held_.erase(lease_key(k)))
                names.push_back(lease_key(k));
    }
    if (!names.empty() && enabled_)
        run({eval(kReleaseScript, names, {token_})});
}

std::string RemoteCache::lease_holder(const Hash128& key) {
    const auto r = run({{"GET", lease_key(key)}});
    if (!r || r->front().type != RedisReply::Type::string)
        return {};
    const std::string& token = r->front().str;
    const auto at = token.find('@');
    const auto slash = token.rfind('/');
    if (at == std::string::npos || slash == std::string::npos || slash < at)
        return "another process";
    return "process " + token.substr(0, at) + " on host " + token.substr(at + 1, slash - at - 1);
}

std::vector<RemoteEntryInfo> RemoteCache::list(bool with_meta) {
    std::vector<RemoteEntryInfo> out;
    const std::string head = settings_.prefix + ":e:";
    std::string cursor = "0";
    do {
        const auto page = run({{"SCAN", cursor, "MATCH", head + "*", "COUNT", "1000"}});
        if (!page || page->front().type != RedisReply::Type::array ||
            page->front().elements.size() != 2)
            return out;
        cursor = page->front().elements[0].str;
        std::vector<std::vector<std::string>> commands;
        std::vector<RemoteEntryInfo> found;
        for (const auto& name : page->front().elements[1].elements) {
            const auto key = Hash128::parse(std::string_view(name.str).substr(
                std::min(head.size(), name.str.size())));
            if (!key)
                continue;
            found.push_back({*key, 0, -1, {}});
            commands.push_back({"STRLEN", name.str});
            commands.push_back({"OBJECT", "IDLETIME", name.str});
            if (with_meta)
                commands.push_back({"GETRANGE", name.str, "0", std::to_string(kPeekBytes - 1)});
        }
        const std::size_t per = with_meta ? 3 : 2;
        const auto replies = run(commands);
        if (!replies)
            return out;
        for (std::size_t i = 0; i < found.size(); ++i) {
            RemoteEntryInfo& e = found[i];
            e.bytes = static_cast<std::uint64_t>(std::max(0LL, (*replies)[i * per].integer));
            if ((*replies)[i * per + 1].type == RedisReply::Type::integer)
                e.idle_s = (*replies)[i * per + 1].integer;
            if (!with_meta)
                continue;
            const std::string& prefix = (*replies)[i * per + 2].str;
            std::size_t need = 0;
            e.meta = peek_remote_meta(prefix, &need);
            if (need > prefix.size() && need <= e.bytes) {
                const auto more =
                    run({{"GETRANGE", entry_key(e.key), "0", std::to_string(need - 1)}});
                if (more)
                    e.meta = peek_remote_meta(more->front().str);
            }
        }
        out.insert(out.end(), found.begin(), found.end());
    } while (cursor != "0");
    return out;
}

std::string RemoteCache::server_text() {
    const auto r = run({{"INFO", "server"}, {"INFO", "memory"}});
    if (!r)
        return "unreachable";
    const std::string& server = (*r)[0].str;
    const std::string& memory = (*r)[1].str;
    return "redis " + info_field(server, "redis_version") + ", used memory " +
           info_field(memory, "used_memory_human") + ", maxmemory " +
           info_field(memory, "maxmemory_human") + " (" +
           info_field(memory, "maxmemory_policy") + ")";
}

} // namespace kjit
