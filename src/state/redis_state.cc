#include "state/redis_state.h"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <random>

#include "core/json.h"
#include "state/redis_keys.h"

namespace switchyard::state {
namespace {

using std::chrono::milliseconds;

// The marks a deployment can have, in the order MarksReadScript reads them.
constexpr std::array<routing::HealthChange::Kind, 4> kMarks = {
    routing::HealthChange::Kind::kRateLimited, routing::HealthChange::Kind::kCooling,
    routing::HealthChange::Kind::kBreakerOpen, routing::HealthChange::Kind::kDisabled};

// A client key's windows count in 1 s slots over a minute
// (docs/state.md#what-is-shared-and-how-exactly).
constexpr milliseconds kKeySlot{1'000};
constexpr int kKeySlots = 60;
// A month's spend outlives its month by a few days, then Redis forgets it.
constexpr milliseconds kSpendTtl = std::chrono::hours(24 * 35);
// The shortest time between two headroom reports of one deployment from one worker.
constexpr milliseconds kCorrectionInterval{100};

std::string Number(double value) { return fmt::format("{}", value); }

}  // namespace

RedisState::RedisState(const config::StateConfig& config, observe::Metrics& metrics,
                       asio::ssl::context* tls, std::uint64_t seed)
    : config_(config),
      metrics_(metrics),
      tls_(tls),
      seed_(seed),
      channel_(config.key_prefix + "events") {
    std::mt19937_64 rng(seed);
    replica_ = fmt::format("{:016x}", rng());
    metrics_.SetStateUp(0);
}

std::string RedisState::Key(std::string_view tag, std::string_view suffix) const {
    return RedisKeys{config_.key_prefix}.Key(tag, suffix);
}

std::string RedisState::DeploymentKey(std::string_view deployment, std::string_view suffix) const {
    return RedisKeys{config_.key_prefix}.Deployment(deployment, suffix);
}

std::string RedisState::ClientKey(std::string_view key_hash, std::string_view suffix) const {
    return RedisKeys{config_.key_prefix}.Client(key_hash, suffix);
}

void RedisState::Start(const std::vector<asio::any_io_executor>& workers) {
    executors_ = workers;
    corrected_.resize(workers.size());
    RedisEndpoint endpoint;
    endpoint.host = config_.host;
    endpoint.port = config_.port;
    endpoint.username = config_.username;
    endpoint.password = config_.password.Reveal();
    endpoint.db = config_.db;
    endpoint.tls = config_.tls;
    RedisOptions options;
    options.connect_timeout = config_.connect_timeout;
    std::uint64_t seed = seed_;
    for (const asio::any_io_executor& executor : workers) {
        auto connection =
            std::make_shared<RedisConnection>(executor, endpoint, options, tls_, this, ++seed);
        RedisConnection* raw = connection.get();
        // Scripts are cached by the server; a restarted server has none, so load them again.
        connection->OnUp([raw] {
            for (const RedisScript* script :
                 {&KeyAdmitScript(), &KeySettleScript(), &HeadroomScript(),
                  &HeadroomCorrectScript(), &ProbeTakeScript(), &ProbeReleaseScript(),
                  &MarkSetScript(), &MarksReadScript()}) {
                raw->Send({"SCRIPT", "LOAD", std::string(script->source)});
            }
        });
        connections_.push_back(std::move(connection));
    }
    subscriber_ =
        std::make_shared<RedisConnection>(workers.front(), endpoint, options, tls_, this, ++seed);
    subscriber_->Subscribe([this](const RespValue& push) { OnMessage(push); });
    subscriber_->OnUp([this] {
        subscriber_->Send({"SUBSCRIBE", channel_});
        asio::co_spawn(executors_.front(), Resync(), asio::detached);
    });
    total_.store(static_cast<int>(connections_.size()) + 1, std::memory_order_relaxed);
    for (const auto& connection : connections_) connection->Start();
    subscriber_->Start();
}

void RedisState::Release() {
    // The loops no longer run: nothing else touches the connections.
    for (const auto& connection : connections_) connection->Stop();
    if (subscriber_) subscriber_->Stop();
    connections_.clear();
    subscriber_.reset();
    executors_.clear();
}

bool RedisState::Up() const {
    // Every connection: one that has not come up yet leaves its worker deciding locally.
    const int total = total_.load(std::memory_order_relaxed);
    return total > 0 && down_.load(std::memory_order_relaxed) == 0 &&
           ever_up_.load(std::memory_order_relaxed) == total;
}

void RedisState::ConnectionUp(bool after_failure, bool first) {
    if (first) ever_up_.fetch_add(1, std::memory_order_relaxed);
    if (after_failure) down_.fetch_sub(1, std::memory_order_relaxed);
    std::lock_guard lock(episode_mutex_);
    if (in_episode_ && down_.load(std::memory_order_relaxed) == 0) {
        in_episode_ = false;
        fmt::print(stderr,
                   "{{\"level\":\"info\",\"event\":\"state_redis_back\",\"redis\":\"{}\"}}\n",
                   fmt::format("{}:{}", config_.host, config_.port));
    }
    metrics_.SetStateUp(Up() ? 1 : 0);
}

void RedisState::ConnectionDown(const std::string& why) {
    // A connection that was up and one that never came up both count as down until they are up.
    down_.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(episode_mutex_);
    if (!in_episode_) {
        in_episode_ = true;
        fmt::print(stderr,
                   "{{\"level\":\"warn\",\"event\":\"state_redis_unavailable\",\"redis\":\"{}\","
                   "\"error\":{},\"serving\":\"local state\"}}\n",
                   fmt::format("{}:{}", config_.host, config_.port),
                   boost::json::serialize(boost::json::value(why)));
    }
    metrics_.SetStateUp(0);
}

RedisConnection* RedisState::For(unsigned worker) const {
    if (worker >= connections_.size()) return nullptr;
    RedisConnection* connection = connections_[worker].get();
    return connection->Up() ? connection : nullptr;
}

namespace {

// EVALSHA sha numkeys keys... args...
std::vector<std::string> EvalShaCommand(const RedisScript& script, std::vector<std::string> keys,
                                        std::vector<std::string> args) {
    std::vector<std::string> command;
    command.reserve(3 + keys.size() + args.size());
    command.emplace_back("EVALSHA");
    command.emplace_back(script.sha1);
    command.emplace_back(std::to_string(keys.size()));
    for (std::string& key : keys) command.push_back(std::move(key));
    for (std::string& arg : args) command.push_back(std::move(arg));
    return command;
}

}  // namespace

void RedisState::Fallback(std::string_view operation) { metrics_.CountStateFallback(operation); }

asio::awaitable<RedisConnection::Reply> RedisState::Eval(RedisConnection& connection,
                                                         const RedisScript& script,
                                                         std::vector<std::string> keys,
                                                         std::vector<std::string> args,
                                                         milliseconds timeout) {
    std::vector<std::string> command = EvalShaCommand(script, std::move(keys), std::move(args));
    RedisConnection::Reply reply = co_await connection.Call(command, timeout);
    if (reply && reply->IsError() && reply->text.starts_with("NOSCRIPT")) {
        // The server lost its script cache (SCRIPT FLUSH): send the source once.
        command[0] = "EVAL";
        command[1] = std::string(script.source);
        reply = co_await connection.Call(std::move(command), timeout);
    }
    co_return reply;
}

void RedisState::EvalAndForget(RedisConnection& connection, const RedisScript& script,
                               std::vector<std::string> keys, std::vector<std::string> args) {
    std::vector<std::string> command = EvalShaCommand(script, std::move(keys), std::move(args));
    // The server lost its script cache (SCRIPT FLUSH, a failover to a server that never had it):
    // this command goes again with the script's source, which also loads it for the next ones.
    // The handler lives in the connection's queue, so the connection outlives it.
    auto resend = [&connection, &script, command](const RespValue& error) mutable {
        if (!error.text.starts_with("NOSCRIPT")) return;
        command[0] = "EVAL";
        command[1] = std::string(script.source);
        connection.Send(std::move(command));
    };
    connection.Send(std::move(command), std::move(resend));
}

asio::awaitable<std::optional<KeyVerdict>> RedisState::AdmitKey(unsigned worker,
                                                                std::string key_hash,
                                                                KeyLimits limits,
                                                                std::int64_t tokens,
                                                                std::string month) {
    RedisConnection* connection = For(worker);
    if (connection == nullptr) {
        Fallback("key_admit");
        co_return std::nullopt;
    }
    // Built before the co_await: g++ 12 mishandles braced lists inside one.
    std::vector<std::string> keys{ClientKey(key_hash, "requests"), ClientKey(key_hash, "tokens"),
                                  ClientKey(key_hash, "spend:" + month)};
    std::vector<std::string> args{std::to_string(limits.rpm),       std::to_string(limits.tpm),
                                  std::to_string(tokens),           Number(limits.monthly_budget),
                                  std::to_string(kKeySlot.count()), std::to_string(kKeySlots)};
    RedisConnection::Reply reply = co_await Eval(*connection, KeyAdmitScript(), std::move(keys),
                                                 std::move(args), config_.timeout);
    if (!reply || reply->type != RespValue::Type::kArray || reply->items.size() != 4) {
        Fallback("key_admit");
        co_return std::nullopt;
    }
    KeyVerdict verdict;
    const auto field = [&](std::size_t i) { return reply->items[i].AsInteger().value_or(0); };
    switch (field(0)) {
        case 1:
            verdict.refusal = KeyVerdict::Refusal::kRequests;
            break;
        case 2:
            verdict.refusal = KeyVerdict::Refusal::kTokens;
            break;
        case 3:
            verdict.refusal = KeyVerdict::Refusal::kBudget;
            break;
        default:
            break;
    }
    verdict.retry_after = milliseconds(std::max<std::int64_t>(0, field(1)));
    verdict.slot = field(2);
    verdict.counted = field(3);
    co_return verdict;
}

void RedisState::SettleKey(unsigned worker, std::string_view key_hash, std::int64_t slot,
                           std::int64_t delta, double cost, std::string_view month) {
    if (delta == 0 && cost <= 0) return;
    RedisConnection* connection = For(worker);
    if (connection == nullptr) return;
    EvalAndForget(
        *connection, KeySettleScript(),
        {ClientKey(key_hash, "tokens"), ClientKey(key_hash, fmt::format("spend:{}", month))},
        {std::to_string(slot), std::to_string(delta), Number(cost),
         std::to_string(kSpendTtl.count())});
}

namespace {

void AppendBuckets(const std::vector<limits::BucketDemand>& buckets,
                   std::vector<std::string>& args) {
    for (const limits::BucketDemand& b : buckets) {
        args.emplace_back(b.name);
        args.push_back(Number(b.capacity));
        args.push_back(std::to_string(std::max<std::int64_t>(1, b.period.count())));
        args.push_back(Number(b.need));
        args.push_back(Number(b.take));
        args.push_back(Number(b.floor));
        args.push_back(std::to_string(b.transit.count()));
    }
}

}  // namespace

asio::awaitable<std::optional<milliseconds>> RedisState::ReserveHeadroom(
    unsigned worker, std::string deployment, std::vector<limits::BucketDemand> buckets) {
    RedisConnection* connection = For(worker);
    if (connection == nullptr) {
        Fallback("headroom");
        co_return std::nullopt;
    }
    std::vector<std::string> args{"1"};
    AppendBuckets(buckets, args);
    std::vector<std::string> keys{DeploymentKey(deployment, "headroom")};
    RedisConnection::Reply reply = co_await Eval(*connection, HeadroomScript(), std::move(keys),
                                                 std::move(args), config_.timeout);
    const std::optional<std::int64_t> wait = reply ? reply->AsInteger() : std::nullopt;
    if (!wait) {
        Fallback("headroom");
        co_return std::nullopt;
    }
    co_return milliseconds(std::max<std::int64_t>(0, *wait));
}

void RedisState::AdjustHeadroom(unsigned worker, std::string_view deployment,
                                const std::vector<limits::BucketDemand>& buckets) {
    RedisConnection* connection = For(worker);
    if (connection == nullptr || buckets.empty()) return;
    std::vector<std::string> args{"0"};
    AppendBuckets(buckets, args);
    EvalAndForget(*connection, HeadroomScript(), {DeploymentKey(deployment, "headroom")},
                  std::move(args));
}

void RedisState::CorrectHeadroom(unsigned worker, std::string_view deployment,
                                 const std::vector<limits::BucketDemand>& buckets,
                                 std::chrono::steady_clock::time_point now) {
    RedisConnection* connection = For(worker);
    if (connection == nullptr || buckets.empty()) return;
    auto [last, fresh] = corrected_[worker].try_emplace(std::string(deployment), now);
    if (!fresh) {
        if (now - last->second < kCorrectionInterval) return;
        last->second = now;
    }
    std::vector<std::string> args;
    for (const limits::BucketDemand& b : buckets) {
        args.emplace_back(b.name);
        args.push_back(Number(b.capacity));
        args.push_back(std::to_string(std::max<std::int64_t>(1, b.period.count())));
        args.push_back(Number(b.take));
    }
    EvalAndForget(*connection, HeadroomCorrectScript(), {DeploymentKey(deployment, "headroom")},
                  std::move(args));
}

asio::awaitable<std::optional<bool>> RedisState::TakeProbe(unsigned worker, std::string deployment,
                                                           int limit, milliseconds ttl) {
    RedisConnection* connection = For(worker);
    if (connection == nullptr) {
        Fallback("probe");
        co_return std::nullopt;
    }
    std::vector<std::string> keys{DeploymentKey(deployment, "probes")};
    std::vector<std::string> args{std::to_string(limit),
                                  std::to_string(std::max<std::int64_t>(1, ttl.count()))};
    RedisConnection::Reply reply = co_await Eval(*connection, ProbeTakeScript(), std::move(keys),
                                                 std::move(args), config_.timeout);
    const std::optional<std::int64_t> taken = reply ? reply->AsInteger() : std::nullopt;
    if (!taken) {
        Fallback("probe");
        co_return std::nullopt;
    }
    co_return *taken == 1;
}

asio::awaitable<std::optional<std::string>> RedisState::ClaimIdempotency(unsigned worker,
                                                                         std::string key,
                                                                         std::string fingerprint,
                                                                         milliseconds lease) {
    RedisConnection* connection = For(worker);
    if (connection == nullptr) {
        Fallback("idempotency");
        co_return std::nullopt;
    }
    std::vector<std::string> keys{Key(fmt::format("i:{}", key), "answer")};
    std::vector<std::string> args{std::move(fingerprint),
                                  std::to_string(std::max<std::int64_t>(1, lease.count()))};
    // A claim decided locally would let two replicas run the same key: it waits for Redis up to
    // a second (the request it guards takes longer than that anyway), not the usual timeout.
    const milliseconds timeout = std::max(config_.timeout, kIdempotencyClaimTimeout);
    RedisConnection::Reply reply = co_await Eval(*connection, IdempotencyClaimScript(),
                                                 std::move(keys), std::move(args), timeout);
    if (!reply || reply->type != RespValue::Type::kBulk) {
        Fallback("idempotency");
        co_return std::nullopt;
    }
    co_return std::move(reply->text);
}

void RedisState::CompleteIdempotency(unsigned worker, std::string_view key, std::string value,
                                     milliseconds ttl) {
    RedisConnection* connection = For(worker);
    if (connection == nullptr) return;
    connection->Send({"SET", Key(fmt::format("i:{}", key), "answer"), std::move(value), "PX",
                      std::to_string(std::max<std::int64_t>(1, ttl.count()))});
}

void RedisState::ReleaseIdempotency(unsigned worker, std::string_view key,
                                    std::string_view fingerprint) {
    RedisConnection* connection = For(worker);
    if (connection == nullptr) return;
    EvalAndForget(*connection, IdempotencyReleaseScript(),
                  {Key(fmt::format("i:{}", key), "answer")}, {std::string(fingerprint)});
}

void RedisState::ReleaseProbe(unsigned worker, std::string_view deployment) {
    RedisConnection* connection = For(worker);
    if (connection == nullptr) return;
    EvalAndForget(*connection, ProbeReleaseScript(), {DeploymentKey(deployment, "probes")}, {});
}

void RedisState::Publish(std::string message) {
    RedisConnection* connection = For(0);
    if (connection == nullptr) return;
    connection->Send({"PUBLISH", channel_, std::move(message)});
}

void RedisState::ShareHealth(std::string deployment, routing::HealthChange change) {
    if (executors_.empty()) return;
    asio::post(executors_.front(), [this, deployment = std::move(deployment),
                                    change = std::move(change)] {
        RedisConnection* connection = For(0);
        if (connection == nullptr) return;  // the other replicas learn it from their own calls
        using Kind = routing::HealthChange::Kind;
        const std::string_view kind = routing::Name(change.kind);
        switch (change.kind) {
            case Kind::kBreakerClosed:
                connection->Send({"DEL", DeploymentKey(deployment, "breaker_open")});
                break;
            case Kind::kEnabled:
                connection->Send({"DEL", DeploymentKey(deployment, "rate_limited"),
                                  DeploymentKey(deployment, "cooling"),
                                  DeploymentKey(deployment, "breaker_open"),
                                  DeploymentKey(deployment, "disabled")});
                break;
            default:
                EvalAndForget(*connection, MarkSetScript(), {DeploymentKey(deployment, kind)},
                              {std::to_string(std::max<std::int64_t>(1, change.remaining.count())),
                               change.reason});
                break;
        }
        Publish(boost::json::serialize(boost::json::object{{"from", replica_},
                                                           {"type", "health"},
                                                           {"deployment", deployment},
                                                           {"change", kind},
                                                           {"ms", change.remaining.count()},
                                                           {"reason", change.reason}}));
    });
}

void RedisState::ShareKeyAdded(boost::json::object key) {
    if (executors_.empty()) return;
    asio::post(executors_.front(), [this, key = std::move(key)] {
        RedisConnection* connection = For(0);
        if (connection == nullptr) return;
        const std::string name(key.at("name").as_string());
        connection->Send({"HSET", Key("keys", "runtime"), name, boost::json::serialize(key)});
        connection->Send({"HDEL", Key("keys", "removed"), name});
        Publish(boost::json::serialize(
            boost::json::object{{"from", replica_}, {"type", "key_added"}, {"key", key}}));
    });
}

void RedisState::ShareKeyRemoved(std::string name) {
    if (executors_.empty()) return;
    asio::post(executors_.front(), [this, name = std::move(name)] {
        RedisConnection* connection = For(0);
        if (connection == nullptr) return;
        connection->Send({"HDEL", Key("keys", "runtime"), name});
        // Kept, so a replica that misses the message removes the key when it reconnects.
        connection->Send({"HSET", Key("keys", "removed"), name, "1"});
        Publish(boost::json::serialize(
            boost::json::object{{"from", replica_}, {"type", "key_removed"}, {"name", name}}));
    });
}

void RedisState::OnMessage(const RespValue& push) {
    // ["message", channel, payload]; subscription confirmations are ignored.
    if (push.type != RespValue::Type::kArray || push.items.size() != 3 ||
        push.items[0].text != "message") {
        return;
    }
    boost::system::error_code ec;
    const boost::json::value parsed = core::ParseJson(push.items[2].text, ec);
    if (ec || !parsed.is_object()) return;
    const boost::json::object& message = parsed.as_object();
    const auto text = [&](std::string_view field) -> std::string_view {
        const boost::json::value* v = message.if_contains(field);
        return v != nullptr && v->is_string() ? std::string_view(v->as_string())
                                              : std::string_view();
    };
    if (text("from") == replica_) return;
    const std::string_view type = text("type");
    if (type == "health" && handlers_.health) {
        const auto kind = routing::HealthChangeKind(text("change"));
        const boost::json::value* ms = message.if_contains("ms");
        if (!kind || ms == nullptr || !ms->is_int64()) return;
        handlers_.health(text("deployment"),
                         {*kind, milliseconds(ms->as_int64()), std::string(text("reason"))});
    } else if (type == "key_added" && handlers_.key_added) {
        const boost::json::value* key = message.if_contains("key");
        if (key != nullptr && key->is_object()) handlers_.key_added(key->as_object());
    } else if (type == "key_removed" && handlers_.key_removed) {
        handlers_.key_removed(text("name"));
    }
}

asio::awaitable<void> RedisState::Resync() {
    // A read that fails (a timeout, the connection lost again) is tried again with a growing
    // wait, while the subscriber that asked for it is still up.
    asio::steady_timer wait(executors_.front());
    milliseconds pause(20);
    for (int tries = 0; tries < 12 && subscriber_ && subscriber_->Up(); ++tries) {
        if (co_await ResyncOnce()) co_return;
        wait.expires_after(pause);
        auto [ec] = co_await wait.async_wait(kTuple);
        (void)ec;
        pause = std::min(pause * 2, milliseconds(2'000));
    }
}

asio::awaitable<bool> RedisState::ResyncOnce() {
    RedisConnection* connection = For(0);
    if (connection == nullptr) co_return false;  // the first worker's command connection reads
    bool complete = true;
    const milliseconds timeout = config_.connect_timeout;
    if (handlers_.deployments && handlers_.health) {
        for (const std::string& deployment : handlers_.deployments()) {
            std::vector<std::string> keys;
            for (const auto kind : kMarks) {
                keys.push_back(DeploymentKey(deployment, routing::Name(kind)));
            }
            std::vector<std::string> no_args;
            RedisConnection::Reply reply = co_await Eval(
                *connection, MarksReadScript(), std::move(keys), std::move(no_args), timeout);
            if (!reply || reply->type != RespValue::Type::kArray ||
                reply->items.size() != 2 * kMarks.size()) {
                complete = false;
                continue;
            }
            for (std::size_t i = 0; i < kMarks.size(); ++i) {
                const std::int64_t left = reply->items[2 * i].AsInteger().value_or(-2);
                if (left <= 0) continue;
                handlers_.health(deployment,
                                 {kMarks[i], milliseconds(left), reply->items[2 * i + 1].text});
            }
        }
    }
    if (handlers_.keys_removed) {
        std::vector<std::string> command{"HKEYS", Key("keys", "removed")};
        RedisConnection::Reply reply = co_await connection->Call(std::move(command), timeout);
        if (reply && reply->type == RespValue::Type::kArray) {
            std::vector<std::string> names;
            for (const RespValue& name : reply->items) names.push_back(name.text);
            handlers_.keys_removed(names);
        } else {
            complete = false;
        }
    }
    if (handlers_.keys_loaded) {
        std::vector<std::string> command{"HGETALL", Key("keys", "runtime")};
        RedisConnection::Reply reply = co_await connection->Call(std::move(command), timeout);
        if (!reply || reply->type != RespValue::Type::kArray) co_return false;
        std::vector<boost::json::object> keys;
        for (std::size_t i = 1; i < reply->items.size(); i += 2) {
            boost::system::error_code ec;
            boost::json::value key = core::ParseJson(reply->items[i].text, ec);
            if (!ec && key.is_object()) keys.push_back(std::move(key.as_object()));
        }
        handlers_.keys_loaded(keys);
    }
    co_return complete;
}

}  // namespace switchyard::state
