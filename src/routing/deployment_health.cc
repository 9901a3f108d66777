#include "routing/deployment_health.h"

#include <algorithm>

#include "config/config.h"
#include "policy/spend_cap.h"

namespace switchyard::routing {
namespace {

using policy::ErrorClass;

enum class Effect { kSuccess, kFailure, kNeutral };

// Failures in a row after which a deployment counts as down, not browning out: skipped fast,
// even in a panic. One that fails one call in two has ten in a row once in a thousand calls.
constexpr int kDownAfterFailures = 10;

Effect EffectOf(ErrorClass error) {
    switch (error) {
        case ErrorClass::kNone:
            return Effect::kSuccess;
        case ErrorClass::kOverloaded:
        case ErrorClass::kServerError:
        case ErrorClass::kTimeout:
        case ErrorClass::kConnection:
        case ErrorClass::kTls:
        case ErrorClass::kProtocol:
            return Effect::kFailure;
        case ErrorClass::kRateLimited:
        case ErrorClass::kQuotaExhausted:
        case ErrorClass::kContextWindow:
        case ErrorClass::kContentPolicy:
        case ErrorClass::kRetryableClient:
        case ErrorClass::kBadRequest:
        case ErrorClass::kAuth:
        case ErrorClass::kNotFound:
        // A schema miss says how a model answered one request, not that the deployment is sick.
        case ErrorClass::kInvalidOutput:
        // The gateway's own limit: no deployment's failure.
        case ErrorClass::kLocal:
            return Effect::kNeutral;
    }
    return Effect::kNeutral;
}

}  // namespace

HealthOptions HealthOptionsOf(const config::Config& config) {
    const config::HealthConfig& h = config.health;
    HealthOptions options;
    options.cooldown = {h.allowed_fails, h.window, h.cooldown, h.allowed_failure_rate,
                        h.consecutive_fails > 0 ? h.consecutive_fails : h.allowed_fails + 1};
    options.breaker = {h.breaker_consecutive_failures,
                       h.breaker_failure_rate,
                       h.breaker_minimum_calls,
                       h.window,
                       h.breaker_open,
                       h.breaker_half_open_probes,
                       h.breaker_success_threshold};
    options.budget_max_tokens = config.retry.budget_max_tokens;
    options.budget_token_ratio = config.retry.budget_token_ratio;
    options.latency = {config.timeouts.latency_window, config.timeouts.adaptive_min_samples, 0.99};
    options.panic = h.panic;
    return options;
}

DeploymentHealth::Entry::Entry(const HealthOptions& options)
    : cooldown(options.cooldown),
      breaker(options.breaker),
      latency(options.latency),
      budget(std::make_unique<policy::RetryBudget>(options.budget_max_tokens,
                                                   options.budget_token_ratio)) {}

DeploymentHealth::DeploymentHealth(std::size_t deployments, HealthOptions options)
    : options_(options) {
    for (std::size_t i = 0; i < deployments; ++i) {
        entries_.push_back(std::make_unique<Entry>(options_));
    }
}

DeploymentHealth::TimePoint DeploymentHealth::BlockedUntil(const Entry& e, TimePoint now) {
    TimePoint until = std::max({e.rate_limited_until, e.disabled_until, e.cooldown.CoolingUntil()});
    if (!e.breaker.WouldAllow(now)) {
        // Open: until its open time is up. Half-open with every probe out: soon; poll shortly.
        const TimePoint open_until = e.breaker.OpenUntil();
        until =
            std::max(until, open_until > now ? open_until : now + std::chrono::milliseconds(50));
    }
    return until;
}

DeploymentState DeploymentHealth::StateOf(const Entry& e, TimePoint now) {
    if (e.disabled_until > now) return DeploymentState::kDisabled;
    const policy::CircuitBreaker::State breaker = e.breaker.StateAt(now);
    if (breaker == policy::CircuitBreaker::State::kOpen) return DeploymentState::kOpen;
    if (e.cooldown.Cooling(now)) return DeploymentState::kCooling;
    if (e.rate_limited_until > now) return DeploymentState::kRateLimited;
    if (breaker == policy::CircuitBreaker::State::kHalfOpen) return DeploymentState::kHalfOpen;
    return DeploymentState::kHealthy;
}

double DeploymentHealth::PanicShare(const Entry& e, DeploymentState state, TimePoint now) const {
    if (!options_.panic) return 0;
    if (state != DeploymentState::kCooling && state != DeploymentState::kOpen) return 0;
    if (e.rate_limited_until > now) return 0;
    if (e.failures_since_success >= kDownAfterFailures) return 0;
    return SuccessShare(e, now);  // 0 when no call of the last two windows succeeded
}

void DeploymentHealth::CountCall(Entry& e, bool success, TimePoint now) const {
    const auto window = options_.cooldown.window;
    if (now - e.calls_since >= window) {
        e.calls_before = now - e.calls_since < 2 * window ? e.calls_now : Entry::Calls{};
        e.calls_now = {};
        e.calls_since = now;
    }
    ++e.calls_now.calls;
    if (success) ++e.calls_now.successes;
    e.failures_since_success = success ? 0 : e.failures_since_success + 1;
}

double DeploymentHealth::SuccessShare(const Entry& e, TimePoint now) const {
    const auto window = options_.cooldown.window;
    const auto age = now - e.calls_since;
    if (age >= 2 * window) return 0;
    const Entry::Calls before = age < window ? e.calls_before : Entry::Calls{};
    const Entry::Calls current = e.calls_now;
    const int calls = current.calls + before.calls;
    return calls == 0 ? 0 : static_cast<double>(current.successes + before.successes) / calls;
}

Availability DeploymentHealth::AvailabilityAt(std::size_t index, TimePoint now) const {
    const Entry& e = *entries_[index];
    std::lock_guard lock(e.mutex);
    const DeploymentState state = StateOf(e, now);
    return {state, BlockedUntil(e, now), PanicShare(e, state, now)};
}

bool DeploymentHealth::Available(std::size_t index, TimePoint now) const {
    const Entry& e = *entries_[index];
    std::lock_guard lock(e.mutex);
    return BlockedUntil(e, now) <= now;
}

DeploymentHealth::TimePoint DeploymentHealth::AvailableAt(std::size_t index, TimePoint now) const {
    const Entry& e = *entries_[index];
    std::lock_guard lock(e.mutex);
    return BlockedUntil(e, now);
}

AttemptAdmission DeploymentHealth::AdmitAttempt(std::size_t index, TimePoint now, Admission how) {
    Entry& e = *entries_[index];
    std::lock_guard lock(e.mutex);
    if (how == Admission::kPanic && PanicShare(e, StateOf(e, now), now) > 0) {
        // Past the bench; the breaker's probes are left to ordinary attempts.
        return AttemptAdmission::kAdmitted;
    }
    if (std::max({e.rate_limited_until, e.disabled_until, e.cooldown.CoolingUntil()}) > now) {
        return AttemptAdmission::kRefused;
    }
    const bool probe = e.breaker.StateAt(now) != policy::CircuitBreaker::State::kClosed;
    if (!e.breaker.Allow(now)) return AttemptAdmission::kRefused;
    return probe ? AttemptAdmission::kProbe : AttemptAdmission::kAdmitted;
}

bool DeploymentHealth::OnOutcome(std::size_t index, TimePoint now, WallTime wall_now,
                                 ErrorClass error,
                                 std::optional<std::chrono::milliseconds> retry_after,
                                 std::optional<std::chrono::milliseconds> time_to_first_byte) {
    Entry& e = *entries_[index];
    std::vector<HealthChange> changes;
    bool newly_disabled = false;
    {
        std::lock_guard lock(e.mutex);
        const Marks before = MarksOf(e, now);
        newly_disabled = Record(e, now, wall_now, error, retry_after, time_to_first_byte);
        Changes(before, e, now, changes);
    }
    Tell(index, changes);
    return newly_disabled;
}

bool DeploymentHealth::Record(Entry& e, TimePoint now, WallTime wall_now, ErrorClass error,
                              std::optional<std::chrono::milliseconds> retry_after,
                              std::optional<std::chrono::milliseconds> time_to_first_byte) {
    if (error != ErrorClass::kNone) {
        e.last_error_class = std::string(policy::Name(error));
        e.last_error_at = wall_now;
    }
    switch (EffectOf(error)) {
        case Effect::kSuccess:
            e.breaker.OnSuccess(now);
            e.cooldown.OnSuccess(now);
            CountCall(e, true, now);
            if (time_to_first_byte) {
                const double sample = static_cast<double>(time_to_first_byte->count());
                e.ewma_ttft_ms = e.ewma_ttft_ms < 0
                                     ? sample
                                     : options_.latency_alpha * sample +
                                           (1 - options_.latency_alpha) * e.ewma_ttft_ms;
            }
            break;
        case Effect::kFailure:
            e.breaker.OnFailure(now);
            e.cooldown.OnFailure(now);
            CountCall(e, false, now);
            break;
        case Effect::kNeutral:
            e.breaker.OnNeutral(now);
            break;
    }
    if (error == ErrorClass::kRateLimited && retry_after) {
        e.rate_limited_until = std::max(e.rate_limited_until, now + *retry_after);
    }
    if (error == ErrorClass::kQuotaExhausted) {
        const bool newly = e.disabled_until <= now;
        const auto reset = policy::SpendCapResetAfter(wall_now);
        e.disabled_until =
            std::max(e.disabled_until,
                     now + std::chrono::duration_cast<TimePoint::duration>(reset - wall_now));
        e.disabled_reason = "spend cap reached";
        return newly;
    }
    return false;
}

void DeploymentHealth::Abandon(std::size_t index, TimePoint now) {
    Entry& e = *entries_[index];
    std::lock_guard lock(e.mutex);
    e.breaker.OnNeutral(now);
}

void DeploymentHealth::RateLimitedUntil(std::size_t index, TimePoint until, TimePoint now) {
    Entry& e = *entries_[index];
    std::vector<HealthChange> changes;
    {
        std::lock_guard lock(e.mutex);
        const Marks before = MarksOf(e, now);
        e.rate_limited_until = std::max(e.rate_limited_until, until);
        Changes(before, e, now, changes);
    }
    Tell(index, changes);
}

void DeploymentHealth::Disable(std::size_t index, TimePoint until, std::string reason,
                               TimePoint now) {
    Entry& e = *entries_[index];
    std::vector<HealthChange> changes;
    {
        std::lock_guard lock(e.mutex);
        const Marks before = MarksOf(e, now);
        e.disabled_until = std::max(e.disabled_until, until);
        e.disabled_reason = std::move(reason);
        Changes(before, e, now, changes);
    }
    Tell(index, changes);
}

DeploymentHealth::Marks DeploymentHealth::MarksOf(const Entry& e, TimePoint now) {
    return {e.rate_limited_until, e.cooldown.CoolingUntil(), e.breaker.OpenUntil(),
            e.disabled_until, e.breaker.StateAt(now)};
}

void DeploymentHealth::Changes(const Marks& before, const Entry& e, TimePoint now,
                               std::vector<HealthChange>& out) {
    using Kind = HealthChange::Kind;
    const auto remaining = [now](TimePoint until) {
        return std::chrono::ceil<std::chrono::milliseconds>(until - now);
    };
    if (e.rate_limited_until > before.rate_limited_until && e.rate_limited_until > now) {
        out.push_back({Kind::kRateLimited, remaining(e.rate_limited_until), {}});
    }
    const TimePoint cooling = e.cooldown.CoolingUntil();
    if (cooling > before.cooling_until && cooling > now) {
        out.push_back({Kind::kCooling, remaining(cooling), {}});
    }
    const policy::CircuitBreaker::State breaker = e.breaker.StateAt(now);
    if (breaker == policy::CircuitBreaker::State::kOpen &&
        e.breaker.OpenUntil() != before.open_until) {
        out.push_back({Kind::kBreakerOpen, remaining(e.breaker.OpenUntil()), {}});
    }
    if (breaker == policy::CircuitBreaker::State::kClosed &&
        before.breaker != policy::CircuitBreaker::State::kClosed) {
        out.push_back({Kind::kBreakerClosed, {}, {}});
    }
    if (e.disabled_until > before.disabled_until && e.disabled_until > now) {
        out.push_back({Kind::kDisabled, remaining(e.disabled_until), e.disabled_reason});
    }
}

void DeploymentHealth::Tell(std::size_t index, const std::vector<HealthChange>& changes) const {
    if (!listener_) return;
    for (const HealthChange& change : changes) listener_(index, change);
}

void DeploymentHealth::Apply(std::size_t index, const HealthChange& change, TimePoint now) {
    using Kind = HealthChange::Kind;
    Entry& e = *entries_[index];
    std::lock_guard lock(e.mutex);
    const TimePoint until = now + change.remaining;
    switch (change.kind) {
        case Kind::kRateLimited:
            e.rate_limited_until = std::max(e.rate_limited_until, until);
            break;
        case Kind::kCooling:
            e.cooldown.CoolingElsewhere(until);
            break;
        case Kind::kBreakerOpen:
            e.breaker.OpenedElsewhere(until);
            break;
        case Kind::kBreakerClosed:
            if (e.breaker.StateAt(now) != policy::CircuitBreaker::State::kClosed) {
                e.breaker.Reset();
            }
            break;
        case Kind::kDisabled:
            e.disabled_until = std::max(e.disabled_until, until);
            e.disabled_reason = change.reason;
            break;
        case Kind::kEnabled:
            Clear(e);
            break;
    }
}

void DeploymentHealth::Clear(Entry& e) {
    e.disabled_until = {};
    e.disabled_reason.clear();
    e.rate_limited_until = {};
    e.cooldown.Reset();
    e.breaker.Reset();
}

void DeploymentHealth::CarryOver(const DeploymentHealth& old, std::size_t from, std::size_t to) {
    const Entry& source = *old.entries_[from];
    Entry& target = *entries_[to];
    std::scoped_lock lock(source.mutex, target.mutex);
    target.rate_limited_until = source.rate_limited_until;
    target.disabled_until = source.disabled_until;
    target.disabled_reason = source.disabled_reason;
    target.cooldown.TakeStateFrom(source.cooldown);
    target.breaker.TakeStateFrom(source.breaker);
    target.ewma_ttft_ms = source.ewma_ttft_ms;
    target.latency = source.latency;
    target.calls_now = source.calls_now;
    target.calls_before = source.calls_before;
    target.calls_since = source.calls_since;
    target.failures_since_success = source.failures_since_success;
    target.last_error_class = source.last_error_class;
    target.last_error_at = source.last_error_at;
    target.headroom = source.headroom;
    target.budget->Set(source.budget->Tokens());
}

void DeploymentHealth::Enable(std::size_t index) {
    Entry& e = *entries_[index];
    {
        std::lock_guard lock(e.mutex);
        Clear(e);
    }
    Tell(index, {HealthChange{HealthChange::Kind::kEnabled, {}, {}}});
}

void DeploymentHealth::NoteHeadroom(std::size_t index, const policy::RateLimitHeaders& headroom) {
    if (!headroom.Known()) return;
    Entry& e = *entries_[index];
    std::lock_guard lock(e.mutex);
    e.headroom = headroom;
}

void DeploymentHealth::AddInFlight(std::size_t index, int delta) {
    entries_[index]->in_flight.fetch_add(delta, std::memory_order_relaxed);
}

int DeploymentHealth::InFlight(std::size_t index) const {
    return entries_[index]->in_flight.load(std::memory_order_relaxed);
}

double DeploymentHealth::EwmaTtftMs(std::size_t index) const {
    const Entry& e = *entries_[index];
    std::lock_guard lock(e.mutex);
    return e.ewma_ttft_ms;
}

void DeploymentHealth::RecordLatency(std::size_t index, TimePoint now,
                                     const policy::LatencySample& sample) {
    Entry& e = *entries_[index];
    std::lock_guard lock(e.mutex);
    e.latency.Record(now, sample);
}

policy::LatencyQuantiles DeploymentHealth::Latency(std::size_t index, TimePoint now) const {
    const Entry& e = *entries_[index];
    std::lock_guard lock(e.mutex);
    return e.latency.Quantiles(now);
}

policy::LatencyQuantiles DeploymentHealth::LatencyAt(std::size_t index, TimePoint now, double q,
                                                     int min_samples) const {
    const Entry& e = *entries_[index];
    std::lock_guard lock(e.mutex);
    return e.latency.QuantilesAt(now, q, min_samples);
}

DeploymentSnapshot DeploymentHealth::Snapshot(std::size_t index, TimePoint now) const {
    const Entry& e = *entries_[index];
    std::lock_guard lock(e.mutex);
    DeploymentSnapshot s;
    s.available = BlockedUntil(e, now) <= now;
    s.breaker = e.breaker.StateAt(now);
    if (e.rate_limited_until > now) s.rate_limited_until = e.rate_limited_until;
    if (e.cooldown.Cooling(now)) s.cooling_until = e.cooldown.CoolingUntil();
    if (e.disabled_until > now) {
        s.disabled_until = e.disabled_until;
        s.disabled_reason = e.disabled_reason;
    }
    if (s.breaker == policy::CircuitBreaker::State::kOpen)
        s.breaker_open_until = e.breaker.OpenUntil();
    s.state = StateOf(e, now);
    s.in_flight = e.in_flight.load(std::memory_order_relaxed);
    s.ewma_ttft_ms = e.ewma_ttft_ms;
    s.latency_p50 = e.latency.QuantilesAt(now, 0.5, 1);
    s.latency_p99 = e.latency.QuantilesAt(now, 0.99, 1);
    s.success_share = SuccessShare(e, now);
    s.last_error_class = e.last_error_class;
    s.last_error_at = e.last_error_at;
    s.retry_budget_tokens = e.budget->Tokens();
    s.headroom = e.headroom;
    return s;
}

namespace {

constexpr std::pair<HealthChange::Kind, std::string_view> kChangeNames[] = {
    {HealthChange::Kind::kRateLimited, "rate_limited"},
    {HealthChange::Kind::kCooling, "cooling"},
    {HealthChange::Kind::kBreakerOpen, "breaker_open"},
    {HealthChange::Kind::kBreakerClosed, "breaker_closed"},
    {HealthChange::Kind::kDisabled, "disabled"},
    {HealthChange::Kind::kEnabled, "enabled"},
};

}  // namespace

std::string_view Name(HealthChange::Kind kind) {
    for (const auto& [k, name] : kChangeNames) {
        if (k == kind) return name;
    }
    return "unknown";
}

std::optional<HealthChange::Kind> HealthChangeKind(std::string_view name) {
    for (const auto& [k, n] : kChangeNames) {
        if (n == name) return k;
    }
    return std::nullopt;
}

std::string_view Name(DeploymentState state) {
    switch (state) {
        case DeploymentState::kHealthy:
            return "healthy";
        case DeploymentState::kRateLimited:
            return "rate_limited";
        case DeploymentState::kCooling:
            return "cooling";
        case DeploymentState::kOpen:
            return "open";
        case DeploymentState::kHalfOpen:
            return "half_open";
        case DeploymentState::kDisabled:
            return "disabled";
    }
    return "unknown";
}

}  // namespace switchyard::routing
