#include "engine/give_up.h"

#include <fmt/format.h>

namespace switchyard::engine {

core::LocalError GiveUpError(const Action& give_up, const GiveUpFacts& facts) {
    const bool attempted = !facts.attempts.empty();
    core::LocalError error{attempted && facts.last_status == 0 && facts.last_error != nullptr
                               ? facts.last_error->kind
                               : core::ErrorKind::kAllAttemptsFailed};
    error.attempts = facts.attempts;
    if (!attempted && give_up.headroom_short_for) {
        // Self-throttled: no deployment had headroom for this lane within the deadline, or the
        // lane's queue was full.
        error.kind = core::ErrorKind::kHeadroomExhausted;
        error.message = fmt::format(
            "No deployment of the requested model has rate-limit headroom for the '{}' lane "
            "within the request's deadline (or its queue is full).",
            facts.lane);
    } else if (!attempted) {
        // Nothing was tried: every deployment is sick, or rate-limited past what this request
        // may wait.
        error.message =
            give_up.retry_after
                ? fmt::format(
                      "Every deployment of the requested model is {}; the first can serve again "
                      "in {:.3f} s.",
                      give_up.rate_limited ? "rate-limited"
                                           : "unavailable (cooling down, circuit open or disabled)",
                      static_cast<double>(give_up.retry_after->count()) / 1000.0)
                : std::string("No deployment of the requested model can serve the request now.");
    } else {
        const core::AttemptNote& final_note = facts.attempts.back();
        std::string detail = facts.last_error != nullptr ? facts.last_error->message : "";
        if (facts.last_status != 0) {
            detail = fmt::format("HTTP {} ({})", facts.last_status, final_note.error_class);
        }
        error.message = fmt::format("All {} attempt(s) failed. Last: {}: {}", facts.attempts.size(),
                                    final_note.deployment, detail);
    }
    if (facts.outside > 0 && facts.residency != nullptr && facts.residency->has_value()) {
        error.message +=
            fmt::format(" {} deployment(s) outside the allowed regions ({}) were not tried.",
                        facts.outside, routing::Describe(**facts.residency));
    }
    error.status = GiveUpStatus(give_up, attempted, facts.last_status, facts.last_class);
    return error;
}

unsigned GiveUpStatus(const Action& give_up, bool attempted, unsigned last_status,
                      policy::ErrorClass last_class) {
    if (!attempted) return give_up.headroom_short_for || give_up.rate_limited ? 429 : 503;
    if (last_status != 0) return last_status;
    return last_class == policy::ErrorClass::kTimeout ? 504 : 502;
}

}  // namespace switchyard::engine
