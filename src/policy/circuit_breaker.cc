#include "policy/circuit_breaker.h"

#include <algorithm>

namespace switchyard::policy {

CircuitBreaker::State CircuitBreaker::StateAt(TimePoint now) const {
    if (state_ == State::kOpen && now >= open_until_) return State::kHalfOpen;
    return state_;
}

bool CircuitBreaker::WouldAllow(TimePoint now) const {
    switch (StateAt(now)) {
        case State::kClosed:
            return true;
        case State::kOpen:
            return false;
        case State::kHalfOpen:
            // A breaker that is still marked open has no probes out yet.
            return state_ == State::kOpen || probes_in_flight_ < options_.half_open_probes;
    }
    return false;
}

bool CircuitBreaker::Allow(TimePoint now) {
    if (state_ == State::kOpen && now >= open_until_) {
        state_ = State::kHalfOpen;
        probes_in_flight_ = 0;
        probe_successes_ = 0;
    }
    switch (state_) {
        case State::kClosed:
            return true;
        case State::kOpen:
            return false;
        case State::kHalfOpen:
            if (probes_in_flight_ >= options_.half_open_probes) return false;
            ++probes_in_flight_;
            return true;
    }
    return false;
}

void CircuitBreaker::Roll(TimePoint now) {
    if (now - window_start_ >= options_.window) {
        window_start_ = now;
        window_calls_ = 0;
        window_failures_ = 0;
    }
}

void CircuitBreaker::Open(TimePoint now) {
    state_ = State::kOpen;
    open_until_ = now + options_.open_duration;
    probes_in_flight_ = 0;
    probe_successes_ = 0;
    consecutive_failures_ = 0;
    window_start_ = now;
    window_calls_ = 0;
    window_failures_ = 0;
}

void CircuitBreaker::OnSuccess(TimePoint now) {
    if (state_ == State::kHalfOpen) {
        probes_in_flight_ = std::max(0, probes_in_flight_ - 1);
        if (++probe_successes_ >= options_.success_threshold) Reset();
        return;
    }
    if (state_ == State::kOpen) return;  // a call admitted before it opened
    Roll(now);
    ++window_calls_;
    consecutive_failures_ = 0;
}

void CircuitBreaker::OnFailure(TimePoint now) {
    if (state_ == State::kHalfOpen) {
        Open(now);
        return;
    }
    if (state_ == State::kOpen) return;
    Roll(now);
    ++window_calls_;
    ++window_failures_;
    ++consecutive_failures_;
    const bool streak = consecutive_failures_ >= options_.consecutive_failures;
    const bool rate = window_calls_ >= options_.minimum_calls &&
                      window_failures_ >= options_.failure_rate * window_calls_;
    if (streak || rate) Open(now);
}

void CircuitBreaker::OnNeutral(TimePoint) {
    if (state_ == State::kHalfOpen) probes_in_flight_ = std::max(0, probes_in_flight_ - 1);
}

void CircuitBreaker::Reset() {
    state_ = State::kClosed;
    open_until_ = {};
    window_calls_ = 0;
    window_failures_ = 0;
    consecutive_failures_ = 0;
    probes_in_flight_ = 0;
    probe_successes_ = 0;
}

void CircuitBreaker::OpenedElsewhere(TimePoint until) {
    if (state_ == State::kOpen) until = std::max(until, open_until_);
    state_ = State::kOpen;
    open_until_ = until;
    probes_in_flight_ = 0;
    probe_successes_ = 0;
    consecutive_failures_ = 0;
    window_calls_ = 0;
    window_failures_ = 0;
}

void CircuitBreaker::TakeStateFrom(const CircuitBreaker& old) {
    state_ = old.state_;
    open_until_ = old.open_until_;
    window_start_ = old.window_start_;
    window_calls_ = old.window_calls_;
    window_failures_ = old.window_failures_;
    consecutive_failures_ = old.consecutive_failures_;
    probes_in_flight_ = 0;
    probe_successes_ = old.probe_successes_;
}

void Cooldown::TakeStateFrom(const Cooldown& old) {
    window_start_ = old.window_start_;
    failures_ = old.failures_;
    successes_ = old.successes_;
    consecutive_ = old.consecutive_;
    cooling_until_ = old.cooling_until_;
}

std::string_view Name(CircuitBreaker::State state) {
    switch (state) {
        case CircuitBreaker::State::kClosed:
            return "closed";
        case CircuitBreaker::State::kOpen:
            return "open";
        case CircuitBreaker::State::kHalfOpen:
            return "half_open";
    }
    return "unknown";
}

void Cooldown::Roll(TimePoint now) {
    if (now - window_start_ < options_.window) return;
    window_start_ = now;
    failures_ = 0;
    successes_ = 0;
}

void Cooldown::OnFailure(TimePoint now) {
    Roll(now);
    ++failures_;
    ++consecutive_;
    const double rate =
        static_cast<double>(failures_) / static_cast<double>(failures_ + successes_);
    if ((failures_ > options_.allowed_fails && rate >= options_.allowed_failure_rate) ||
        consecutive_ >= options_.consecutive_failures) {
        cooling_until_ = std::max(cooling_until_, now + options_.cooldown);
        failures_ = 0;
        successes_ = 0;
        consecutive_ = 0;
        window_start_ = now;
    }
}

void Cooldown::OnSuccess(TimePoint now) {
    Roll(now);
    ++successes_;
    consecutive_ = 0;
}

void Cooldown::CoolingElsewhere(TimePoint until) {
    cooling_until_ = std::max(cooling_until_, until);
}

void Cooldown::Reset() {
    failures_ = 0;
    consecutive_ = 0;
    successes_ = 0;
    cooling_until_ = {};
}

}  // namespace switchyard::policy
