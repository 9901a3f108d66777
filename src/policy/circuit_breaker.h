#pragma once

#include <chrono>
#include <string_view>

namespace switchyard::policy {

// A per-deployment circuit breaker (Fowler; Envoy's outlier detection is the same idea):
//  - closed: calls pass; it opens after `consecutive_failures` failures in a row, or when at least
//    `minimum_calls` calls in the current `window` failed at `failure_rate` or more;
//  - open: calls are refused without touching the deployment, for `open_duration`;
//  - half-open: up to `half_open_probes` calls at a time are let through as probes;
//    `success_threshold` successful probes close it, one failed probe opens it again.
// Pure and not thread-safe: the owner serialises access and passes the time in.
class CircuitBreaker final {
  public:
    using TimePoint = std::chrono::steady_clock::time_point;
    enum class State { kClosed, kOpen, kHalfOpen };

    struct Options {
        int consecutive_failures = 5;
        double failure_rate = 0.5;
        int minimum_calls = 20;
        std::chrono::milliseconds window{60'000};
        std::chrono::milliseconds open_duration{30'000};
        int half_open_probes = 1;
        int success_threshold = 2;
    };

    explicit CircuitBreaker(Options options) : options_(options) {}

    // The state at `now` (an open breaker whose time is up reads as half-open).
    State StateAt(TimePoint now) const;
    // Whether a call could be admitted now, without admitting it.
    bool WouldAllow(TimePoint now) const;
    // Admits a call: always when closed; as a probe when half-open and a probe slot is free.
    bool Allow(TimePoint now);
    // The outcome of an admitted call.
    void OnSuccess(TimePoint now);
    void OnFailure(TimePoint now);
    // An admitted call that ended neither way (a client error): frees its probe slot.
    void OnNeutral(TimePoint now);
    // Back to closed with clean counters (an operator re-enabled the deployment).
    void Reset();
    // A config reload: takes `old`'s state but keeps this breaker's options. Probes in flight stay
    // with `old` (they report there), so none is counted here: no slot can be held for good.
    void TakeStateFrom(const CircuitBreaker& old);

    // Another replica's breaker for the same deployment opened until `until`: this one is open
    // until then too (a later end of its own stands), with clean counters.
    void OpenedElsewhere(TimePoint until);

    TimePoint OpenUntil() const { return open_until_; }

  private:
    void Open(TimePoint now);
    void Roll(TimePoint now);  // starts a new failure-rate window when the old one is over

    Options options_;
    State state_ = State::kClosed;
    TimePoint open_until_{};
    TimePoint window_start_{};
    int window_calls_ = 0;
    int window_failures_ = 0;
    int consecutive_failures_ = 0;
    int probes_in_flight_ = 0;
    int probe_successes_ = 0;
};

std::string_view Name(CircuitBreaker::State state);

// LiteLLM-style cooldown: more than `allowed_fails` failures within `window` bench the deployment
// for `cooldown` — and so do `consecutive_failures` in a row (Envoy's consecutive-failure
// ejection), however many older successes the window holds. A new cooldown extends a running one,
// never shortens it. Pure, not thread-safe.
class Cooldown final {
  public:
    using TimePoint = std::chrono::steady_clock::time_point;
    struct Options {
        int allowed_fails = 3;
        std::chrono::milliseconds window{60'000};
        std::chrono::milliseconds cooldown{30'000};
        // Besides more than `allowed_fails` failures, at least this fraction of the window's
        // attempts must have failed: a busy deployment's background error rate never benches it.
        double allowed_failure_rate = 0.2;
        int consecutive_failures = 4;
    };

    explicit Cooldown(Options options) : options_(options) {}

    void OnFailure(TimePoint now);
    void OnSuccess(TimePoint now);
    bool Cooling(TimePoint now) const { return now < cooling_until_; }
    TimePoint CoolingUntil() const { return cooling_until_; }
    void Reset();
    // A config reload: takes `old`'s state, keeps this cooldown's options.
    void TakeStateFrom(const Cooldown& old);
    // Another replica benched the same deployment until `until`; extends, never shortens.
    void CoolingElsewhere(TimePoint until);

  private:
    Options options_;
    TimePoint window_start_{};
    int failures_ = 0;
    int successes_ = 0;
    int consecutive_ = 0;  // failures since the last success
    TimePoint cooling_until_{};
    // Starts a new window at `now` when the current one has passed.
    void Roll(TimePoint now);
};

}  // namespace switchyard::policy
