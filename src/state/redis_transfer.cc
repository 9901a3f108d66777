#include "state/redis_transfer.h"

#include <fmt/format.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <map>
#include <optional>

#include "state/redis_keys.h"
#include "state/resp.h"

namespace switchyard::state {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

// A month's spend outlives its month by a few days (as the gateway writes it).
constexpr std::int64_t kSpendTtlMs = std::int64_t{35} * 24 * 3600 * 1000;
constexpr std::string_view kMarkKinds[] = {"rate_limited", "cooling", "breaker_open", "disabled"};

// One blocking connection, for a command-line tool: every command waits for its reply.
class BlockingRedis final {
  public:
    explicit BlockingRedis(const config::StateConfig& config)
        : tls_context_(asio::ssl::context::tls_client), stream_(io_, tls_context_) {
        try {
            tcp::resolver resolver(io_);
            asio::connect(stream_.next_layer(),
                          resolver.resolve(config.host, std::to_string(config.port)));
            if (config.tls) {
                tls_context_.set_default_verify_paths();
                if (!config.ca_file.empty()) tls_context_.load_verify_file(config.ca_file);
                stream_.set_verify_mode(asio::ssl::verify_peer);
                stream_.set_verify_callback(asio::ssl::host_name_verification(config.host));
                SSL_set_tlsext_host_name(stream_.native_handle(), config.host.c_str());
                stream_.handshake(asio::ssl::stream_base::client);
                tls_ = true;
            }
        } catch (const std::exception& e) {
            throw StoreError(fmt::format("cannot reach Redis at {}: {}", config.url, e.what()));
        }
        if (!config.password.Empty()) {
            if (config.username.empty()) {
                Command({"AUTH", config.password.Reveal()});
            } else {
                Command({"AUTH", config.username, config.password.Reveal()});
            }
        }
        if (config.db != 0) Command({"SELECT", std::to_string(config.db)});
    }

    RespValue Command(const std::vector<std::string>& args) {
        std::string bytes;
        EncodeCommand(args, bytes);
        RespValue reply;
        try {
            if (tls_) {
                asio::write(stream_, asio::buffer(bytes));
            } else {
                asio::write(stream_.next_layer(), asio::buffer(bytes));
            }
            char buffer[16384];
            for (;;) {
                const RespReader::Status status = reader_.Next(reply);
                if (status == RespReader::Status::kValue) break;
                if (status == RespReader::Status::kError) throw StoreError("a malformed reply");
                const std::size_t n = tls_ ? stream_.read_some(asio::buffer(buffer))
                                           : stream_.next_layer().read_some(asio::buffer(buffer));
                reader_.Feed(std::string_view(buffer, n));
            }
        } catch (const StoreError& e) {
            throw StoreError(fmt::format("Redis {}: {}", args.front(), e.what()));
        } catch (const std::exception& e) {
            throw StoreError(fmt::format("Redis {}: {}", args.front(), e.what()));
        }
        if (reply.IsError())
            throw StoreError(fmt::format("Redis {}: {}", args.front(), reply.text));
        return reply;
    }

    // Every key matching `pattern` (SCAN, so a large database is never blocked).
    std::vector<std::string> Scan(const std::string& pattern) {
        std::vector<std::string> keys;
        std::string cursor = "0";
        do {
            const RespValue reply = Command({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
            if (reply.items.size() != 2) throw StoreError("Redis SCAN: an unexpected reply");
            cursor = reply.items[0].text;
            for (const RespValue& key : reply.items[1].items) keys.push_back(key.text);
        } while (cursor != "0");
        return keys;
    }

  private:
    asio::io_context io_;
    asio::ssl::context tls_context_;
    asio::ssl::stream<tcp::socket> stream_;
    bool tls_ = false;
    RespReader reader_;
};

// `text` with the glob characters of a SCAN pattern escaped.
std::string Literal(std::string_view text) {
    std::string out;
    for (const char c : text) {
        if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

// What lies between `open` and the next '}' in `key` after the prefix; nullopt when it is not
// there.
std::optional<std::string> TagOf(std::string_view key, std::string_view prefix,
                                 std::string_view open) {
    if (!key.starts_with(prefix)) return std::nullopt;
    key.remove_prefix(prefix.size());
    if (!key.starts_with(open)) return std::nullopt;
    key.remove_prefix(open.size());
    const std::size_t close = key.find("}:");
    if (close == std::string_view::npos) return std::nullopt;
    return std::string(key.substr(0, close));
}

// The rest of `key` after the tag's "}:".
std::string_view SuffixOf(std::string_view key) {
    const std::size_t close = key.find("}:");
    return close == std::string_view::npos ? std::string_view() : key.substr(close + 2);
}

}  // namespace

RedisRead ReadFromRedis(const config::StateConfig& config,
                        const std::vector<std::string>& key_hashes, std::int64_t now_ms) {
    const RedisKeys names{config.key_prefix};
    const std::string prefix = Literal(config.key_prefix);
    BlockingRedis redis(config);
    RedisRead read;
    // The spend's shortened hashes, resolved by the keys the config and the runtime keys name.
    std::map<std::string, std::string, std::less<>> by_short;
    for (const std::string& hash : key_hashes) by_short.emplace(hash.substr(0, 32), hash);
    const RespValue runtime = redis.Command({"HGETALL", names.RuntimeKeys()});
    for (std::size_t i = 0; i + 1 < runtime.items.size(); i += 2) {
        const std::string& body = runtime.items[i + 1].text;
        read.contents.keys.push_back({runtime.items[i].text, body, now_ms});
        boost::system::error_code ec;
        const boost::json::value parsed = boost::json::parse(body, ec);
        if (const auto* o = parsed.if_object(); !ec && o != nullptr) {
            if (const auto* hash = o->if_contains("key_sha256"); hash && hash->is_string()) {
                const std::string full(hash->get_string());
                by_short.emplace(full.substr(0, 32), full);
            }
        }
    }
    for (const std::string& key : redis.Scan(prefix + "{k:*}:spend:*")) {
        const auto tag = TagOf(key, config.key_prefix, "{k:");
        const std::string_view suffix = SuffixOf(key);
        const auto full = tag ? by_short.find(*tag) : by_short.end();
        if (full == by_short.end() || !suffix.starts_with("spend:")) {
            ++read.unknown_spend;
            continue;
        }
        const RespValue value = redis.Command({"GET", key});
        if (value.IsNull()) continue;
        read.contents.spend.push_back({full->second, std::string(suffix.substr(6)),
                                       std::strtod(value.text.c_str(), nullptr), 0, 0});
    }
    for (const std::string& key : redis.Scan(prefix + "{d:*}:*")) {
        const auto deployment = TagOf(key, config.key_prefix, "{d:");
        const std::string_view kind = SuffixOf(key);
        if (!deployment ||
            std::find(std::begin(kMarkKinds), std::end(kMarkKinds), kind) == std::end(kMarkKinds)) {
            continue;  // headroom, probes
        }
        const RespValue ttl = redis.Command({"PTTL", key});
        const RespValue value = redis.Command({"GET", key});
        const std::int64_t left = ttl.AsInteger().value_or(-1);
        if (left <= 0 || value.IsNull()) continue;
        read.contents.marks.push_back({*deployment, std::string(kind), now_ms + left, value.text});
    }
    constexpr std::size_t kFingerprint = 64;
    for (const std::string& key : redis.Scan(prefix + "{i:*}:answer")) {
        const auto tag = TagOf(key, config.key_prefix, "{i:");
        if (!tag) continue;
        const RespValue ttl = redis.Command({"PTTL", key});
        const RespValue value = redis.Command({"GET", key});
        const std::int64_t left = ttl.AsInteger().value_or(-1);
        const std::string& v = value.text;
        // 'P': a request runs it now; its outcome is not known yet.
        if (left <= 0 || value.IsNull() || v.size() < 1 + kFingerprint || v[0] == 'P') continue;
        read.contents.idempotency.push_back({*tag, "", v.substr(1, kFingerprint), v[0] == 'D',
                                             v[0] == 'D' ? v.substr(1 + kFingerprint) : "",
                                             now_ms + left});
    }
    return read;
}

void WriteToRedis(const config::StateConfig& config, const StoreContents& contents,
                  std::int64_t now_ms) {
    const RedisKeys names{config.key_prefix};
    BlockingRedis redis(config);
    for (const StoredKey& key : contents.keys) {
        redis.Command({"HSET", names.RuntimeKeys(), key.name, key.body});
        redis.Command({"HDEL", names.RemovedKeys(), key.name});
    }
    for (const StoredSpend& spend : contents.spend) {
        redis.Command({"SET", names.Client(spend.key_sha256, "spend:" + spend.month),
                       fmt::format("{}", spend.spent), "PX", std::to_string(kSpendTtlMs)});
    }
    for (const StoredMark& mark : contents.marks) {
        const std::int64_t left = mark.until_ms - now_ms;
        if (left <= 0) continue;
        redis.Command({"SET", names.Deployment(mark.deployment, mark.kind), mark.reason, "PX",
                       std::to_string(left)});
    }
    for (const StoredIdempotency& kept : contents.idempotency) {
        const std::int64_t left = kept.expires_ms - now_ms;
        if (left <= 0) continue;
        std::string value(kept.has_answer ? "D" : "U");
        value += kept.fingerprint;
        value += kept.answer;
        redis.Command(
            {"SET", names.Idempotency(kept.key), std::move(value), "PX", std::to_string(left)});
    }
}

}  // namespace switchyard::state
