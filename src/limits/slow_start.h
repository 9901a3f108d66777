#pragma once

#include <chrono>

namespace switchyard::limits {

using TimePoint = std::chrono::steady_clock::time_point;

// Ramps a rate up after idleness, so a backfill that starts at full speed does not trip a
// provider's acceleration limits (OpenAI and Azure throttle sharp increases in usage). After `idle`
// without activity (and before the first activity), the next activity starts a new ramp: the
// allowed fraction of the full rate grows linearly from `initial` to 1 over `ramp`. Off when
// ramp <= 0: the fraction is always 1. Pure and not thread-safe: the owner serialises access and
// passes the time in. A time earlier than one already seen counts as that later time.
class SlowStart final {
  public:
    // `initial` is clamped to [0, 1].
    SlowStart(std::chrono::milliseconds ramp, double initial = 0.1,
              std::chrono::milliseconds idle = std::chrono::minutes(1));

    // The fraction of the full rate allowed at `now`, in [initial, 1]; records activity at `now`.
    double Fraction(TimePoint now);
    // Same, without recording activity.
    double Peek(TimePoint now) const;

  private:
    // Whether activity at `now` would start a new ramp.
    bool Idle(TimePoint now) const;

    std::chrono::nanoseconds ramp_;
    double initial_;
    std::chrono::nanoseconds idle_;
    bool active_ = false;  // any activity recorded yet
    TimePoint ramp_start_{};
    TimePoint last_activity_{};
};

}  // namespace switchyard::limits
