#pragma once

#include <string_view>
#include <vector>

#include "core/error.h"
#include "engine/attempt_state.h"
#include "policy/outcome.h"
#include "routing/residency.h"

// What a request the engine gave up on (Action::Kind::kGiveUp) tells its client, as a value: the
// server renders it in the client's API (src/server/unanswered.cc), which also says when to come
// back. Pure: the same facts give the same error.
namespace switchyard::engine {

// What is known of a request when the engine gives up.
struct GiveUpFacts {
    const std::vector<core::AttemptNote>& attempts;  // every attempt made, in order
    unsigned last_status = 0;                        // of the last attempt's answer; 0: none
    const core::LocalError* last_error = nullptr;    // how the last attempt failed (attempts > 0)
    policy::ErrorClass last_class = policy::ErrorClass::kNone;
    std::string_view lane;  // the request's lane
    int outside = 0;        // deployments of its chain left out for their region
    const routing::Regions* residency = nullptr;  // where it may be served (outside > 0)
};

// The error a give-up answers with. Its kind names the last failure when that had no HTTP answer
// (unreachable, timeout); otherwise all attempts failed — or none was made because no deployment
// had headroom for the lane (kHeadroomExhausted) or none could serve now. The message lists the
// attempts' count and the last one, or says when the first deployment can serve again, and names
// the deployments left out for their region; the status is GiveUpStatus's; `attempts` are the
// attempts made.
core::LocalError GiveUpError(const Action& give_up, const GiveUpFacts& facts);

// The HTTP status of a give-up: 429 when nothing was tried because no deployment had headroom for
// the lane, or every target waits only for a rate limit; 503 when nothing was tried otherwise;
// after attempts, the last upstream status, or 504 when the last attempt timed out and 502 when it
// failed without an HTTP answer.
unsigned GiveUpStatus(const Action& give_up, bool attempted, unsigned last_status,
                      policy::ErrorClass last_class);

}  // namespace switchyard::engine
