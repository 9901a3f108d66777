#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "observe/request_record.h"

namespace switchyard::observe {

// Prometheus metrics. Counters are sharded per worker so the request path only ever takes its
// own worker's (uncontended) mutex; a scrape locks each shard in turn. Thread-safe.
class Metrics final {
  public:
    explicit Metrics(unsigned shards);

    void Record(unsigned shard, const RequestRecord& record);
    // One upstream attempt and how it ended ("none" for success).
    void CountAttempt(unsigned shard, std::string_view deployment, std::string_view error_class);
    // A chat request that a client SDK sent as its own retry (x-stainless-retry-count > 0).
    void CountClientRetry() { client_retries_.fetch_add(1, std::memory_order_relaxed); }
    void CountFallback() { fallbacks_.fetch_add(1, std::memory_order_relaxed); }
    // Rate-limit events (rare next to requests, so one shared map): a client key refused for
    // `reason` (requests, tokens, budget), a request that waited for headroom in `lane`, and a
    // request shed because its lane had no headroom in time.
    void CountKeyRefusal(std::string_view key, std::string_view reason);
    void CountHeadroomWait(std::string_view lane);
    void CountShed(std::string_view lane);
    // Shared state (Redis): an operation decided locally because Redis did not answer in time,
    // and whether Redis is reachable (rendered once set).
    void CountStateFallback(std::string_view operation);
    void SetStateUp(int up) { state_up_.store(up, std::memory_order_relaxed); }
    void AddInFlight(int delta) { in_flight_.fetch_add(delta, std::memory_order_relaxed); }
    std::int64_t InFlight() const { return in_flight_.load(std::memory_order_relaxed); }
    void AddConnections(int delta) { connections_.fetch_add(delta, std::memory_order_relaxed); }
    std::int64_t Connections() const { return connections_.load(std::memory_order_relaxed); }
    void CountUpstreamConnect() { upstream_connects_.fetch_add(1, std::memory_order_relaxed); }
    void CountLogDropped() { log_dropped_.fetch_add(1, std::memory_order_relaxed); }

    // The Prometheus text exposition format (version 0.0.4).
    std::string Render() const;

    static constexpr std::array<double, 14> kLatencyBuckets = {
        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120};

  private:
    struct Histogram {
        std::array<std::uint64_t, kLatencyBuckets.size()> buckets{};
        std::uint64_t count = 0;
        double sum = 0;
    };
    struct Shard {
        mutable std::mutex mutex;
        // key: route \x1f model_group \x1f deployment \x1f status
        std::map<std::string, std::uint64_t, std::less<>> requests;
        // key: route \x1f model_group
        std::map<std::string, Histogram, std::less<>> latency;
        // key: deployment \x1f error_class
        std::map<std::string, std::uint64_t, std::less<>> attempts;
    };

    // One more of `metric` with `labels` (Prometheus label text, already escaped).
    void CountLimitEvent(std::string_view metric, std::string labels);

    std::vector<Shard> shards_;
    mutable std::mutex limit_mutex_;
    // key: metric \x1f label text
    std::map<std::string, std::uint64_t, std::less<>> limit_events_;
    std::atomic<std::int64_t> in_flight_{0};
    std::atomic<std::int64_t> connections_{0};
    std::atomic<std::uint64_t> upstream_connects_{0};
    std::atomic<std::uint64_t> log_dropped_{0};
    std::atomic<std::uint64_t> client_retries_{0};
    std::atomic<std::uint64_t> fallbacks_{0};
    std::atomic<int> state_up_{-1};  // -1: no shared state
};

}  // namespace switchyard::observe
