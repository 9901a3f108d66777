#include "limits/slow_start.h"

#include <algorithm>

namespace switchyard::limits {

SlowStart::SlowStart(std::chrono::milliseconds ramp, double initial, std::chrono::milliseconds idle)
    : ramp_(ramp), initial_(std::clamp(initial, 0.0, 1.0)), idle_(idle) {}

bool SlowStart::Idle(TimePoint now) const { return !active_ || now - last_activity_ >= idle_; }

double SlowStart::Peek(TimePoint now) const {
    if (ramp_.count() <= 0) return 1.0;
    if (Idle(now)) return initial_;  // activity now would start a ramp, at its first step
    const auto elapsed = std::max(now, last_activity_) - ramp_start_;
    if (elapsed >= ramp_) return 1.0;
    const double progress =
        static_cast<double>(elapsed.count()) / static_cast<double>(ramp_.count());
    return initial_ + (1.0 - initial_) * progress;
}

double SlowStart::Fraction(TimePoint now) {
    if (ramp_.count() <= 0) return 1.0;
    if (Idle(now)) ramp_start_ = now;
    last_activity_ = active_ ? std::max(last_activity_, now) : now;
    active_ = true;
    return Peek(now);
}

}  // namespace switchyard::limits
