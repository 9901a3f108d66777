#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "observe/recent_failures.h"
#include "observe/request_record.h"

namespace switchyard::observe {

// Prometheus metrics (docs/observability.md#metrics). Per-request series are sharded per worker
// so the request path only ever takes its own worker's (uncontended) mutex; a scrape locks each
// shard in turn. Rare events share one map. Every family prints its HELP and TYPE lines even
// before its first sample, so dashboards and alert rules can rely on the names. Thread-safe.
class Metrics final {
  public:
    explicit Metrics(unsigned shards);

    // One finished downstream request: its count, its duration, and the tokens and cost it used.
    void Record(unsigned shard, const RequestRecord& record);
    // One upstream attempt and how it ended ("none" for success).
    void CountAttempt(unsigned shard, std::string_view deployment, std::string_view error_class);
    // An attempt sent after an earlier attempt of the same request failed with `error_class`.
    void CountRetry(unsigned shard, std::string_view model_group, std::string_view error_class);
    // A request that reached the attempt engine (the denominator of the retry amplification).
    void CountEngineRequest() { engine_requests_.fetch_add(1, std::memory_order_relaxed); }
    // A stream's first content event, `seconds` after its attempt started.
    void ObserveTimeToFirstToken(unsigned shard, std::string_view model_group,
                                 std::string_view deployment, double seconds);
    // A wait of the attempt engine: backoff, retry_after or headroom.
    void ObserveWait(unsigned shard, std::string_view reason, double seconds);
    // A chat request that a client SDK sent as its own retry (x-stainless-retry-count > 0).
    void CountClientRetry() { client_retries_.fetch_add(1, std::memory_order_relaxed); }
    void CountClientRepeat() { client_repeats_.fetch_add(1, std::memory_order_relaxed); }
    // A request answered by the fallback group at `depth` (1: the first fallback).
    void CountFallback(int depth);
    // Rate-limit events (rare next to requests, so one shared map): a client key refused for
    // `reason` (requests, tokens, budget), a request that waited for headroom in `lane`, and a
    // request shed because its lane had no headroom in time.
    void CountKeyRefusal(std::string_view key, std::string_view reason);
    void CountHeadroomWait(std::string_view lane);
    void CountShed(std::string_view lane);
    // The response cache's answer for a request of `model_group`: hit, miss, stale or stored.
    void CountCache(std::string_view model_group, std::string_view result);
    // What a request's idempotency key did: claimed, replayed, waited, reused (422), in_use (409),
    // unavailable (409).
    void CountIdempotency(std::string_view outcome);
    // An answer of `deployment` checked against a requested JSON schema: passed or failed.
    void CountValidation(std::string_view deployment, std::string_view result);
    // A spend cap that disabled `deployment` until the end of the month.
    void CountSpendCapDisable(std::string_view deployment);
    // An attempt sent to a benched `deployment` because nothing else could serve.
    void CountPanicAttempt(std::string_view deployment);
    // A hedge sent to `deployment` (docs/resilience.md#hedged-attempts) and how its race ended:
    // won (it answered), lost (the attempt it hedged answered), failed (neither answered).
    void CountHedge(std::string_view deployment, std::string_view result);
    // Fallback drills (docs/drills.md#scheduled-drills): each case on each entry as it ends
    // (passed, failed, skipped); per entry, the cases it failed in its group's last drill; per
    // group, when its last drill ended (Unix seconds).
    void CountDrillCase(std::string_view group, std::string_view deployment,
                        std::string_view result);
    // A group's drill ended at `unix_seconds` with `failing` cases per entry (deployment): its
    // gauges become exactly these (an entry no longer in the chain is dropped).
    void SetDrillRun(std::string_view group,
                     const std::vector<std::pair<std::string, int>>& failing, double unix_seconds);
    // Drops the gauges of every group not in `groups` (its drill left the config).
    void KeepDrillGroups(const std::vector<std::string>& groups);
    // Shared state (Redis): an operation decided locally because Redis did not answer in time,
    // and whether Redis is reachable (rendered once set).
    void CountStateFallback(std::string_view operation);
    void SetStateUp(int up) { state_up_.store(up, std::memory_order_relaxed); }
    // The durable store (state.backend: sqlite): whether its last write reached the disk
    // (rendered once set), and each write by result.
    void SetStoreUp(int up) { store_up_.store(up, std::memory_order_relaxed); }
    // The two gauges as set (-1: never set), for /status.
    int StateUp() const { return state_up_.load(std::memory_order_relaxed); }
    int StoreUp() const { return store_up_.load(std::memory_order_relaxed); }
    void CountStoreWrite(bool ok) {
        (ok ? store_writes_ok_ : store_writes_failed_).fetch_add(1, std::memory_order_relaxed);
    }
    // Batch jobs (docs/batches.md): each line as it ends, by where it ran (`provider`: on a
    // provider's batch API) and how (succeeded, failed, canceled, expired); the jobs running now;
    // each job as it ends, by status (completed, failed, expired, cancelled).
    void CountBatchLine(bool provider, std::size_t result) {
        if (result < 4)
            batch_lines_[provider ? 4 + result : result].fetch_add(1, std::memory_order_relaxed);
    }
    void AddBatchJobsRunning(int delta) {
        batch_jobs_running_.fetch_add(delta, std::memory_order_relaxed);
    }
    void CountBatchJobEnded(std::size_t status) {
        if (status < 4) batch_jobs_ended_[status].fetch_add(1, std::memory_order_relaxed);
    }
    // Trace spans handed to the exporter and sent, or dropped (`reason`: queue_full, export).
    void CountSpansExported(std::uint64_t n) {
        spans_exported_.fetch_add(n, std::memory_order_relaxed);
    }
    void CountSpansDropped(std::string_view reason, std::uint64_t n);
    void AddInFlight(int delta) { in_flight_.fetch_add(delta, std::memory_order_relaxed); }
    std::int64_t InFlight() const { return in_flight_.load(std::memory_order_relaxed); }
    void AddConnections(int delta) { connections_.fetch_add(delta, std::memory_order_relaxed); }
    std::int64_t Connections() const { return connections_.load(std::memory_order_relaxed); }
    void CountUpstreamConnect() { upstream_connects_.fetch_add(1, std::memory_order_relaxed); }
    void CountLogDropped() { log_dropped_.fetch_add(1, std::memory_order_relaxed); }

    // The last failed upstream attempts, for /status and the dashboard.
    RecentFailures& Failures() { return failures_; }
    const RecentFailures& Failures() const { return failures_; }

    // The Prometheus text exposition format (version 0.0.4).
    std::string Render() const;

    static constexpr std::array<double, 14> kLatencyBuckets = {
        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120};

    struct Histogram {
        std::array<std::uint64_t, kLatencyBuckets.size()> buckets{};
        std::uint64_t count = 0;
        double sum = 0;

        void Observe(double seconds);
        Histogram& operator+=(const Histogram& other);
    };
    struct Usage {
        std::uint64_t input_tokens = 0;
        std::uint64_t output_tokens = 0;
        double cost_usd = 0;

        Usage& operator+=(const Usage& other);
    };
    // Series keyed by their label values joined with \x1f.
    template <typename Value>
    using Series = std::map<std::string, Value, std::less<>>;

  private:
    // Render's parts: the per-shard series (returns the attempts they count), the engine's
    // amplification, the event counters, and the plain totals and gauges.
    std::uint64_t RenderShardSeries(std::string& out) const;
    void RenderEngine(std::string& out, std::uint64_t total_attempts) const;
    void RenderEvents(std::string& out) const;
    void RenderTotalsAndGauges(std::string& out) const;

    struct Shard {
        mutable std::mutex mutex;
        Series<std::uint64_t> requests;  // route, model_group, deployment, status
        Series<Histogram> durations;     // route, model_group, deployment
        Series<Histogram> first_token;   // model_group, deployment
        Series<std::uint64_t> attempts;  // deployment, error_class
        Series<std::uint64_t> retries;   // model_group, error_class
        Series<Histogram> waits;         // reason
        Series<Usage> usage;             // key, deployment
    };

    // One more of `metric` with `labels` (Prometheus label text, already escaped).
    void CountEvent(std::string_view metric, std::string labels, std::uint64_t n = 1);

    std::vector<Shard> shards_;
    mutable std::mutex event_mutex_;
    // key: metric \x1f label text
    Series<std::uint64_t> events_;
    // group -> (deployment -> failing cases), group -> last run; under event_mutex_.
    std::map<std::string, std::map<std::string, int>, std::less<>> drill_failing_;
    std::map<std::string, double, std::less<>> drill_last_run_;
    std::atomic<std::int64_t> in_flight_{0};
    std::atomic<std::int64_t> connections_{0};
    std::atomic<std::uint64_t> upstream_connects_{0};
    std::atomic<std::uint64_t> log_dropped_{0};
    std::atomic<std::uint64_t> client_retries_{0};
    std::atomic<std::uint64_t> client_repeats_{0};
    std::atomic<std::uint64_t> engine_requests_{0};
    std::atomic<std::uint64_t> spans_exported_{0};
    std::atomic<int> state_up_{-1};  // -1: no shared state
    std::atomic<int> store_up_{-1};  // -1: no durable store
    std::atomic<std::uint64_t> store_writes_ok_{0};
    std::atomic<std::uint64_t> store_writes_failed_{0};
    std::array<std::atomic<std::uint64_t>, 8> batch_lines_{};  // gateway x4, provider x4
    std::atomic<int> batch_jobs_running_{0};
    std::array<std::atomic<std::uint64_t>, 4> batch_jobs_ended_{};
    RecentFailures failures_{50};
};

// Label values escaped as the exposition format requires (backslash, quote, newline).
std::string EscapeLabel(std::string_view value);

}  // namespace switchyard::observe
