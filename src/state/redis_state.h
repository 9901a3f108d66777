#pragma once

#include <array>
#include <atomic>
#include <boost/json/object.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/config.h"
#include "core/asio.h"
#include "limits/headroom.h"
#include "observe/metrics.h"
#include "routing/deployment_health.h"
#include "state/redis_connection.h"
#include "state/redis_scripts.h"

namespace switchyard::state {

// A client key's limits as the shared window checks them.
struct KeyLimits {
    std::int64_t rpm = 0;  // 0: none (already ramped by slow start)
    std::int64_t tpm = 0;
    double monthly_budget = 0;
};

// The shared verdict on one request of a key.
struct KeyVerdict {
    enum class Refusal { kNone, kRequests, kTokens, kBudget } refusal = Refusal::kNone;
    std::chrono::milliseconds retry_after{0};
    std::int64_t slot = 0;     // the window slot it was counted in (for the settlement)
    std::int64_t counted = 0;  // tokens counted
};

// The fleet's shared state in Redis (docs/state.md): client keys' windows and budgets, headroom
// buckets, health marks and their broadcast, half-open probe slots, and keys added at runtime.
// One connection per worker carries that worker's requests (pipelined, never blocking the event
// loop); one more subscribes to the fleet's events. Every operation on a request's way has the
// configured timeout: past it, or while Redis is down, it answers nothing and the caller decides
// from this replica's own state, counted in switchyard_state_fallbacks_total. Thread-safe: the
// per-worker calls are made on that worker's thread; the Share* calls from any thread.
class RedisState final : public RedisObserver {
  public:
    // What another replica shared.
    struct Handlers {
        std::function<void(std::string_view deployment, const routing::HealthChange&)> health;
        // The deployments of the config now serving, whose marks are read after a reconnect.
        std::function<std::vector<std::string>()> deployments;
        std::function<void(const boost::json::object& key)> key_added;
        std::function<void(std::string_view name)> key_removed;
        // Every key added at runtime, as read after a (re)connect.
        std::function<void(const std::vector<boost::json::object>& keys)> keys_loaded;
        // Every runtime key removed through the admin API (and not added again), as read after a
        // (re)connect: a removal this replica missed while it was cut off.
        std::function<void(const std::vector<std::string>& names)> keys_removed;
    };

    RedisState(const config::StateConfig& config, observe::Metrics& metrics,
               asio::ssl::context* tls, std::uint64_t seed);

    // Set before Start().
    void SetHandlers(Handlers handlers) { handlers_ = std::move(handlers); }

    // Connects one connection per worker executor and the subscriber (on the first); returns at
    // once.
    void Start(const std::vector<asio::any_io_executor>& workers);
    // Drops the connections once the workers' loops have stopped (before they are destroyed).
    void Release();
    bool Up() const;

    // Client keys (the key's SHA-256 names it). nullopt: decide locally.
    asio::awaitable<std::optional<KeyVerdict>> AdmitKey(unsigned worker, std::string key_hash,
                                                        KeyLimits limits, std::int64_t tokens,
                                                        std::string month);
    // After the answer: `delta` tokens reconcile the window's slot, `cost` adds to the month.
    void SettleKey(unsigned worker, std::string_view key_hash, std::int64_t slot,
                   std::int64_t delta, double cost, std::string_view month);

    // Headroom: 0 reserved, more: how long until it would fit, nullopt: decide locally.
    asio::awaitable<std::optional<std::chrono::milliseconds>> ReserveHeadroom(
        unsigned worker, std::string deployment, std::vector<limits::BucketDemand> buckets);
    // Takes each bucket's `take` (negative gives back), without waiting for the reply.
    void AdjustHeadroom(unsigned worker, std::string_view deployment,
                        const std::vector<limits::BucketDemand>& buckets);
    // The provider reported remaining counts (per bucket, in `take`): levels only go down. Sent
    // at most every 100 ms per deployment and worker: every response carries a report, and the
    // reports of concurrent responses say nearly the same.
    void CorrectHeadroom(unsigned worker, std::string_view deployment,
                         const std::vector<limits::BucketDemand>& buckets,
                         std::chrono::steady_clock::time_point now);

    // A half-open probe slot shared by the fleet: true taken, false all taken, nullopt: decide
    // locally. A slot left behind by a replica that died frees itself after `ttl`.
    asio::awaitable<std::optional<bool>> TakeProbe(unsigned worker, std::string deployment,
                                                   int limit, std::chrono::milliseconds ttl);
    void ReleaseProbe(unsigned worker, std::string_view deployment);

    // How long an idempotency claim waits for Redis before deciding from this replica's store.
    static constexpr std::chrono::milliseconds kIdempotencyClaimTimeout{1000};

    // Idempotency keys (`key`: already hashed with its client's scope). The value as stored
    // ('' when this call claimed it for `lease`; docs/state.md#idempotency-keys), nullopt: decide
    // locally.
    asio::awaitable<std::optional<std::string>> ClaimIdempotency(unsigned worker, std::string key,
                                                                 std::string fingerprint,
                                                                 std::chrono::milliseconds lease);
    // The claimed request ended: `value` ('D'/'U' + fingerprint ...) is kept for `ttl`.
    void CompleteIdempotency(unsigned worker, std::string_view key, std::string value,
                             std::chrono::milliseconds ttl);
    // The claimed request ended without an answer to keep: the key is free again.
    void ReleaseIdempotency(unsigned worker, std::string_view key, std::string_view fingerprint);

    // A change of a deployment's health seen here: stored with its expiry and broadcast.
    void ShareHealth(std::string deployment, routing::HealthChange change);
    // A key added or removed at runtime through the admin API: stored and broadcast.
    void ShareKeyAdded(boost::json::object key);
    void ShareKeyRemoved(std::string name);

    // RedisObserver.
    void ConnectionUp(bool after_failure, bool first) override;
    void ConnectionDown(const std::string& why) override;

  private:
    asio::awaitable<RedisConnection::Reply> Eval(RedisConnection& connection,
                                                 const RedisScript& script,
                                                 std::vector<std::string> keys,
                                                 std::vector<std::string> args,
                                                 std::chrono::milliseconds timeout);
    void EvalAndForget(RedisConnection& connection, const RedisScript& script,
                       std::vector<std::string> keys, std::vector<std::string> args);
    // The connection of `worker`, or null when none is up.
    RedisConnection* For(unsigned worker) const;
    void Fallback(std::string_view operation);
    void OnMessage(const RespValue& push);
    // After the subscriber (re)connects: reads every deployment's marks and the runtime keys.
    asio::awaitable<void> Resync();
    // One pass of Resync; false when a read failed (what it read is applied all the same).
    asio::awaitable<bool> ResyncOnce();
    // On the first worker's thread, with its connection.
    void Publish(std::string message);

    std::string Key(std::string_view tag, std::string_view suffix) const;
    std::string DeploymentKey(std::string_view deployment, std::string_view suffix) const;
    std::string ClientKey(std::string_view key_hash, std::string_view suffix) const;

    config::StateConfig config_;
    observe::Metrics& metrics_;
    Handlers handlers_;
    asio::ssl::context* tls_;
    std::uint64_t seed_;
    std::string replica_;  // random id: a replica ignores its own broadcasts
    std::string channel_;

    std::vector<asio::any_io_executor> executors_;
    std::vector<std::shared_ptr<RedisConnection>> connections_;
    // Per worker (touched only on its thread): when each deployment's report was last sent.
    std::vector<std::unordered_map<std::string, std::chrono::steady_clock::time_point>> corrected_;
    std::shared_ptr<RedisConnection> subscriber_;

    std::atomic<int> total_{0};    // connections: one per worker and the subscriber
    std::atomic<int> ever_up_{0};  // connections that have been up at least once
    std::atomic<int> down_{0};     // connections reported down and not back
    std::mutex episode_mutex_;
    bool in_episode_ = false;  // logged as unreachable, not yet as back
};

}  // namespace switchyard::state
