#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "config/config.h"
#include "policy/latency_model.h"

// How long one attempt may take, before the engine moves on (docs/resilience.md#timeouts): the
// configured timeouts are ceilings; a deployment with enough history gets limits from its own
// latency; and the attempt's share of the request's deadline bounds the wait for its first
// content. Pure.
namespace switchyard::engine {

using std::chrono::milliseconds;

// What an attempt of one request looks like to its limits.
struct AttemptShape {
    config::Timeouts ceilings;  // the config's, with the request's overrides
    bool stream = false;        // the upstream answer streams
    std::int64_t max_tokens = 0;
};

struct AttemptLimits {
    milliseconds connect{0};
    milliseconds first_byte{0};   // request sent -> response head
    milliseconds first_token{0};  // stream: response head -> first content event
    milliseconds chunk{0};        // stream: between content events
    // From the attempt's start to its first content (a whole answer's head, a stream's first
    // content event): the attempt's share of the deadline.
    milliseconds first_content{0};
    bool adapted = false;  // some limit came from the deployment's latency
    // The request's own deadline set `first_content` (and `first_byte` too when they are
    // equal): a cut by it says nothing about the deployment.
    bool deadline_bound = false;
};

// The limits from the ceilings, shortened by `history` (the deployment's high percentiles) when
// `adapt`: multiplier times the percentile, never under the floor nor over the ceiling. A whole
// answer's limit grows with the answer it may be: `max_tokens` over the history's answer size.
AttemptLimits AdaptedLimits(const AttemptShape& shape, const policy::LatencyQuantiles& history,
                            bool adapt);

// What an attempt on a deployment with `history` is expected to take at most before content
// (its adapted first-content limit); nullopt without enough history or with adaptation off.
std::optional<milliseconds> ExpectedFirstContent(const AttemptShape& shape,
                                                 const policy::LatencyQuantiles& history);

// `limits` within `budget` (the attempt's share of what is left of the deadline); `is_deadline`:
// the budget is the whole rest of the deadline, so a cut is the request's, not the deployment's.
AttemptLimits WithinBudget(AttemptLimits limits, milliseconds budget, bool is_deadline);

// How long an attempt may go without content before it is hedged
// (docs/resilience.md#hedged-attempts): the configured delay, or (`auto`) twice the deployment's
// median time to its first content as `median` gives it, at least 50 ms; nullopt under `auto` while
// the history is too short.
std::optional<milliseconds> HedgeDelay(const config::HedgeConfig& hedge, const AttemptShape& shape,
                                       const policy::LatencyQuantiles& median);

}  // namespace switchyard::engine
