#include "limits/token_bucket.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace switchyard::limits {

TokenBucket::TokenBucket(double capacity, std::chrono::milliseconds period, TimePoint now)
    : limited_(true), capacity_(capacity), period_(period), level_(capacity), last_(now) {}

double TokenBucket::Capacity() const {
    return limited_ ? capacity_ : std::numeric_limits<double>::infinity();
}

double TokenBucket::Tolerance() const { return 1e-9 * std::max(1.0, capacity_); }

double TokenBucket::Snap(double level) const {
    const double whole = std::round(level);
    return std::abs(level - whole) <= Tolerance() ? whole : level;
}

double TokenBucket::Level(TimePoint now) const {
    if (!limited_) return std::numeric_limits<double>::infinity();
    const auto elapsed = std::max(std::chrono::nanoseconds(0), now - last_);
    // Multiplying before dividing keeps whole-token refills exact (60/min after 1 s is exactly 1).
    const double refill =
        capacity_ * static_cast<double>(elapsed.count()) / static_cast<double>(period_.count());
    return std::min(capacity_, Snap(level_ + refill));
}

void TokenBucket::Refill(TimePoint now) {
    level_ = Level(now);
    last_ = std::max(last_, now);
}

bool TokenBucket::TryTake(double cost, TimePoint now, double floor) {
    if (!limited_) return true;
    Refill(now);
    const bool fits = level_ - cost >= floor - Tolerance();
    const bool oversized_and_full = cost > capacity_ - floor && level_ >= capacity_ - Tolerance();
    if (!fits && !oversized_and_full) return false;
    level_ -= cost;
    return true;
}

std::chrono::milliseconds TokenBucket::TimeUntil(double cost, TimePoint now, double floor) const {
    if (!limited_) return std::chrono::milliseconds(0);
    const double level = Level(now);
    const double tolerance = Tolerance();
    const bool oversized = cost > capacity_ - floor;
    if (level - cost >= floor - tolerance) return std::chrono::milliseconds(0);
    if (oversized && level >= capacity_ - tolerance) return std::chrono::milliseconds(0);
    // An oversized cost never fits above the floor, so it waits for a full bucket instead.
    // TryTake succeeds within `tolerance` of its target; aiming at half that slack keeps a rounding
    // error from turning an exact 1000 ms into 1001 ms, and a TryTake at the answer from falling a
    // few ulps short.
    const double target = (oversized ? capacity_ : floor + cost) - tolerance / 2;
    const double refill_ns = (target - level) * static_cast<double>(period_.count()) / capacity_;
    // Refilling resumes at last_ (a `now` before it refills nothing).
    const double wait_ns =
        static_cast<double>(std::max(std::chrono::nanoseconds(0), last_ - now).count()) +
        std::ceil(refill_ns);
    if (!(wait_ns < 9e18)) return std::chrono::milliseconds::max();
    return std::chrono::ceil<std::chrono::milliseconds>(
        std::chrono::nanoseconds(static_cast<std::int64_t>(wait_ns)));
}

std::chrono::milliseconds TokenBucket::TimeToRefill(double amount) const {
    if (!limited_ || amount <= 0) return std::chrono::milliseconds(0);
    const double ns = amount * static_cast<double>(period_.count()) / capacity_;
    if (!(ns < 9e18)) return std::chrono::milliseconds::max();
    return std::chrono::ceil<std::chrono::milliseconds>(
        std::chrono::nanoseconds(static_cast<std::int64_t>(std::ceil(ns))));
}

void TokenBucket::Take(double cost, TimePoint now, std::chrono::milliseconds transit) {
    if (!limited_) return;
    Refill(now);
    if (transit > std::chrono::milliseconds(0) && level_ >= capacity_ - Tolerance()) {
        last_ = std::max(last_, now + transit);
    }
    level_ -= cost;
}

void TokenBucket::Give(double amount, TimePoint now) {
    if (!limited_) return;
    Refill(now);
    level_ = std::min(capacity_, level_ + amount);
}

void TokenBucket::Correct(std::optional<double> limit, std::optional<double> remaining,
                          TimePoint now, std::chrono::milliseconds period) {
    const bool credible_limit = limit.has_value() && *limit > 0;
    if (!limited_) {
        if (!credible_limit) return;
        *this = TokenBucket(*limit, period, now);
    } else {
        Refill(now);
        if (credible_limit) {
            capacity_ = *limit;
            level_ = std::min(level_, capacity_);
        }
    }
    if (remaining.has_value()) level_ = std::min(*remaining, capacity_);
}

}  // namespace switchyard::limits
