#include "engine/attempt_limits.h"

#include <algorithm>
#include <cmath>

namespace switchyard::engine {
namespace {

// `multiplier` times `percentile` (scaled), between the floor and the ceiling.
milliseconds Adapted(milliseconds percentile, double scale, const config::Timeouts& t,
                     milliseconds ceiling) {
    const double ms =
        std::ceil(t.adaptive_multiplier * scale * static_cast<double>(percentile.count()));
    const milliseconds limit(static_cast<std::int64_t>(std::min(ms, 1e12)));
    return std::min(ceiling, std::max(limit, t.adaptive_floor));
}

}  // namespace

AttemptLimits AdaptedLimits(const AttemptShape& shape, const policy::LatencyQuantiles& history,
                            bool adapt) {
    const config::Timeouts& t = shape.ceilings;
    AttemptLimits limits;
    limits.connect = t.connect;
    limits.first_byte = t.first_byte;
    limits.first_token = t.first_token;
    limits.chunk = t.chunk;
    if (adapt && t.adaptive) {
        if (shape.stream) {
            if (history.stream_first_byte) {
                limits.first_byte = Adapted(*history.stream_first_byte, 1, t, t.first_byte);
                limits.adapted = true;
            }
            if (history.first_token) {
                limits.first_token = Adapted(*history.first_token, 1, t, t.first_token);
                limits.adapted = true;
            }
            if (history.gap) {
                limits.chunk = Adapted(*history.gap, 1, t, t.chunk);
                limits.adapted = true;
            }
        } else if (history.whole) {
            // A longer answer than the history's takes longer: never mistake it for a hang.
            const double usual = std::max(1.0, history.whole_tokens.value_or(1));
            const double scale = shape.max_tokens > 0
                                     ? std::max(1.0, static_cast<double>(shape.max_tokens) / usual)
                                     : 1.0;
            limits.first_byte = Adapted(*history.whole, scale, t, t.first_byte);
            limits.adapted = true;
        }
    }
    limits.first_content =
        shape.stream ? limits.first_byte + limits.first_token : limits.first_byte;
    return limits;
}

std::optional<milliseconds> ExpectedFirstContent(const AttemptShape& shape,
                                                 const policy::LatencyQuantiles& history) {
    const AttemptLimits limits = AdaptedLimits(shape, history, true);
    if (!limits.adapted) return std::nullopt;
    return limits.first_content;
}

AttemptLimits WithinBudget(AttemptLimits limits, milliseconds budget, bool is_deadline) {
    budget = std::max(budget, milliseconds(1));
    if (budget < limits.first_content) {
        limits.first_content = budget;
        limits.deadline_bound = is_deadline;
    }
    limits.connect = std::min(limits.connect, limits.first_content);
    limits.first_byte = std::min(limits.first_byte, limits.first_content);
    return limits;
}

std::optional<milliseconds> HedgeDelay(const config::HedgeConfig& hedge, const AttemptShape& shape,
                                       const policy::LatencyQuantiles& median) {
    if (hedge.delay) return *hedge.delay;
    // Never under 50 ms: below that, answers that are merely jittery would be hedged.
    constexpr milliseconds kLeast{50};
    if (shape.stream) {
        if (!median.stream_first_byte || !median.first_token) return std::nullopt;
        return std::max(kLeast, 2 * (*median.stream_first_byte + *median.first_token));
    }
    if (!median.whole) return std::nullopt;
    return std::max(kLeast, 2 * *median.whole);
}

}  // namespace switchyard::engine
