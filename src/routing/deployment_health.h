#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "policy/circuit_breaker.h"
#include "policy/hedge_budget.h"
#include "policy/latency_model.h"
#include "policy/outcome.h"
#include "policy/rate_limit_headers.h"
#include "policy/retry_budget.h"

namespace switchyard::config {
struct Config;
}

namespace switchyard::routing {

// Options for every deployment's health state.
struct HealthOptions {
    policy::Cooldown::Options cooldown;
    policy::CircuitBreaker::Options breaker;
    double budget_max_tokens = 100;
    double budget_token_ratio = 0.1;
    double latency_alpha = 0.3;  // EWMA weight of the newest time to first byte
    policy::LatencyModel::Options latency;
    // A benched deployment that still answers some of its calls may be tried when nothing else
    // can serve (docs/resilience.md#a-bench-is-a-preference).
    bool panic = true;
};

// The health options a config sets (its `health` and the retry budget of `retry`).
HealthOptions HealthOptionsOf(const config::Config& config);

// What a deployment is now, the most severe first when several apply: disabled (a spend cap or an
// operator), open (circuit breaker), cooling (cooldown), rate_limited (until a known instant),
// half_open (probes decide), healthy.
enum class DeploymentState { kHealthy, kRateLimited, kCooling, kOpen, kHalfOpen, kDisabled };

std::string_view Name(DeploymentState state);

// Whether a deployment may be tried now and, if not, what holds it back and until when.
struct Availability {
    DeploymentState state = DeploymentState::kHealthy;
    std::chrono::steady_clock::time_point until{};  // may be tried again; <= now: available
    // Benched (cooling or open) yet answering some of its calls: the share of its recent calls
    // that succeeded, in (0, 1]; 0 when it may not be tried in a panic (healthy, disabled, rate
    // limited, or every recent call failed).
    double panic = 0;
};

// A change of a deployment's health that every replica of a fleet should know at once
// (docs/state.md#what-is-shared-and-how-exactly): a mark that benches it until an instant, or the
// end of one. Durations, not instants: replicas share no clock.
struct HealthChange {
    enum class Kind { kRateLimited, kCooling, kBreakerOpen, kBreakerClosed, kDisabled, kEnabled };
    Kind kind = Kind::kCooling;
    std::chrono::milliseconds remaining{0};  // the marks with an end: how long from now
    std::string reason;                      // kDisabled

    bool operator==(const HealthChange&) const = default;
};

std::string_view Name(HealthChange::Kind kind);
std::optional<HealthChange::Kind> HealthChangeKind(std::string_view name);

// Whether an attempt may go to a deployment now, and whether it goes as a probe of a half-open
// breaker.
enum class AttemptAdmission { kRefused, kAdmitted, kProbe };

// How an attempt asks to be admitted: as usual, or in a panic (every target that could serve is
// benched), past a cooldown or an open breaker but never past a disable or a rate limit.
enum class Admission { kNormal, kPanic };

// One deployment's health as /status and the strategies see it.
struct DeploymentSnapshot {
    using TimePoint = std::chrono::steady_clock::time_point;
    bool available = true;
    DeploymentState state = DeploymentState::kHealthy;
    std::optional<TimePoint> rate_limited_until;
    std::optional<TimePoint> cooling_until;
    std::optional<TimePoint> disabled_until;
    std::string disabled_reason;
    policy::CircuitBreaker::State breaker = policy::CircuitBreaker::State::kClosed;
    std::optional<TimePoint> breaker_open_until;
    int in_flight = 0;
    double ewma_ttft_ms = -1;  // -1: no measurement yet
    policy::LatencyQuantiles latency_p50, latency_p99;
    double success_share = 0;  // of the calls of the last two health windows, those that succeeded
    std::string last_error_class;
    std::optional<std::chrono::system_clock::time_point> last_error_at;
    double retry_budget_tokens = 0;
    std::optional<policy::RateLimitHeaders> headroom;  // as the last response reported it
};

// What every request knows about every deployment
// (docs/resilience.md#cooldowns-and-circuit-breakers): until when it is rate-limited (a 429 with
// retry-after holds for every request), its cooldown, its circuit breaker, whether a spend cap
// disabled it, how many attempts are in flight, its latency, and its retry budget. Indexed by
// config::Deployment::index. Shared by all workers: each deployment has its own mutex, never held
// across I/O, so there is no global lock and no race between requests flipping a breaker.
class DeploymentHealth final {
  public:
    using TimePoint = std::chrono::steady_clock::time_point;
    using WallTime = std::chrono::system_clock::time_point;

    // Told of every change worth sharing (by the deployment's index), after the change, outside
    // any lock.
    using Listener = std::function<void(std::size_t, const HealthChange&)>;

    DeploymentHealth(std::size_t deployments, HealthOptions options);

    // Set once, before the first request.
    void SetListener(Listener listener) { listener_ = std::move(listener); }
    // A change another replica saw: applied as if seen here (a mark is extended, never
    // shortened), and not told to the listener.
    void Apply(std::size_t index, const HealthChange& change, TimePoint now);

    // May an attempt go there now? No side effects (a half-open breaker with a free probe slot
    // counts as available).
    bool Available(std::size_t index, TimePoint now) const;
    // The first instant it may be tried again (now or earlier when available).
    TimePoint AvailableAt(std::size_t index, TimePoint now) const;
    // Its state and the first instant it may be tried again, read together.
    Availability AvailabilityAt(std::size_t index, TimePoint now) const;
    // Admits an attempt, taking a half-open probe slot when needed. False: choose another.
    bool Admit(std::size_t index, TimePoint now) {
        return AdmitAttempt(index, now) != AttemptAdmission::kRefused;
    }
    // The same, saying whether the attempt took a probe slot.
    AttemptAdmission AdmitAttempt(std::size_t index, TimePoint now,
                                  Admission how = Admission::kNormal);

    // Records the outcome of an admitted attempt. Rate limits mark the deployment until
    // retry-after (not sick); server errors, timeouts and connection failures count toward the
    // cooldown and the breaker; client errors, context-window and content-policy refusals count
    // for nothing. A spend cap disables it until the provider's reset; returns true when this
    // outcome newly disabled it (the caller alerts).
    bool OnOutcome(std::size_t index, TimePoint now, WallTime wall_now, policy::ErrorClass error,
                   std::optional<std::chrono::milliseconds> retry_after,
                   std::optional<std::chrono::milliseconds> time_to_first_byte);

    // An admitted attempt that ended without an outcome (the gateway itself failed): frees its
    // half-open probe slot and counts for nothing.
    void Abandon(std::size_t index, TimePoint now);

    // Not tried again before `until` by any request. Extends, never shortens.
    void RateLimitedUntil(std::size_t index, TimePoint until, TimePoint now);
    void Disable(std::size_t index, TimePoint until, std::string reason, TimePoint now);
    // A config reload: deployment `to` takes over what `old` knew about its deployment `from`
    // (the same name): rate limit, cooldown and breaker state (under the new settings),
    // spend-cap disable, latency, last error, headroom report and retry budget. In-flight
    // attempts and probes stay with `old`, where they report.
    void CarryOver(const DeploymentHealth& old, std::size_t from, std::size_t to);

    // An operator's re-enable: clears the disabled mark, the cooldown and the breaker.
    void Enable(std::size_t index);

    // The provider's rate-limit headers of the latest response (its headroom).
    void NoteHeadroom(std::size_t index, const policy::RateLimitHeaders& headroom);

    void AddInFlight(std::size_t index, int delta);
    int InFlight(std::size_t index) const;
    double EwmaTtftMs(std::size_t index) const;  // -1 before the first measurement

    // The latency of a successful attempt, for the deployment's latency model.
    void RecordLatency(std::size_t index, TimePoint now, const policy::LatencySample& sample);
    // Its high percentiles (the options' quantile), where its history is long enough.
    policy::LatencyQuantiles Latency(std::size_t index, TimePoint now) const;
    // Its quantile `q`, where its history has at least `min_samples` answers.
    policy::LatencyQuantiles LatencyAt(std::size_t index, TimePoint now, double q,
                                       int min_samples) const;

    DeploymentSnapshot Snapshot(std::size_t index, TimePoint now) const;
    policy::RetryBudget& Budget(std::size_t index) { return *entries_[index]->budget; }
    // The hedges its requests may start (docs/resilience.md#hedged-attempts).
    policy::HedgeBudget& Hedges(std::size_t index) { return entries_[index]->hedges; }

  private:
    struct Entry {
        explicit Entry(const HealthOptions& options);
        mutable std::mutex mutex;
        TimePoint rate_limited_until{};
        TimePoint disabled_until{};
        std::string disabled_reason;
        policy::Cooldown cooldown;
        policy::CircuitBreaker breaker;
        double ewma_ttft_ms = -1;
        policy::LatencyModel latency;
        // Calls that succeeded, of those that counted, in this window and the one before, and
        // the failures since the last success.
        struct Calls {
            int calls = 0;
            int successes = 0;
        } calls_now, calls_before;
        TimePoint calls_since{};
        int failures_since_success = 0;
        std::string last_error_class;
        std::optional<WallTime> last_error_at;
        std::optional<policy::RateLimitHeaders> headroom;
        std::atomic<int> in_flight{0};
        std::unique_ptr<policy::RetryBudget> budget;
        policy::HedgeBudget hedges;
    };
    // Blockers at `now` for a locked entry.
    static TimePoint BlockedUntil(const Entry& e, TimePoint now);
    static DeploymentState StateOf(const Entry& e, TimePoint now);
    // Availability::panic for a locked entry.
    double PanicShare(const Entry& e, DeploymentState state, TimePoint now) const;
    // Counts a call that succeeded or failed in the entry's success share.
    void CountCall(Entry& e, bool success, TimePoint now) const;
    double SuccessShare(const Entry& e, TimePoint now) const;
    // The marks of a locked entry, to tell what a call changed.
    struct Marks {
        TimePoint rate_limited_until, cooling_until, open_until, disabled_until;
        policy::CircuitBreaker::State breaker;
    };
    static Marks MarksOf(const Entry& e, TimePoint now);
    // OnOutcome on a locked entry.
    bool Record(Entry& e, TimePoint now, WallTime wall_now, policy::ErrorClass error,
                std::optional<std::chrono::milliseconds> retry_after,
                std::optional<std::chrono::milliseconds> time_to_first_byte);
    static void Clear(Entry& e);
    // What changed between `before` and the entry now, for the listener.
    static void Changes(const Marks& before, const Entry& e, TimePoint now,
                        std::vector<HealthChange>& out);
    void Tell(std::size_t index, const std::vector<HealthChange>& changes) const;

    HealthOptions options_;
    std::vector<std::unique_ptr<Entry>> entries_;
    Listener listener_;
};

}  // namespace switchyard::routing
