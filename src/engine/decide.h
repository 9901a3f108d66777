#pragma once

#include "engine/attempt_state.h"

namespace switchyard::engine {

// The attempt engine's one decision (docs/architecture.md, "The attempt engine"): records `event`
// in `state` and returns what the request does next. Pure: no I/O, no clock, no shared state; the
// caller executes the action, records its outcome in health, budgets and headroom, and reports it
// as the next event.
//
// The rules, in the order they apply:
//  - An answer ends the walk (kDone); a client error is passed through; a context-window or
//    content-policy outcome asks for the semantic fallbacks (kReplaceChain), which replace the rest
//    of the chain, the current stage included — or, when there are none, the answer is passed
//    through. A fail-over class excludes the target for the rest of the request, and so does an
//    attempt cut by its own limits when it was not the chain's last resort.
//  - Never more than `max_attempts` attempts, and nothing is sent at or after the deadline.
//  - The chain is walked forward, stage by stage. In the current stage the first untried target
//    that can serve now gets the request at once: moving beats waiting.
//  - Otherwise the stage's soonest wait-then-send is considered: a retry of a tried target (within
//    its class cap, the stage's retries, the deployment's and the client's retry budgets; after a
//    full-jitter backoff, and never before the provider's retry-after), or an untried target that
//    waits for a known instant (a rate limit's reset, headroom for the lane). A cooldown, an open
//    breaker or a disabled deployment is no known instant: it is skipped, never waited for.
//  - Such a wait is started only if it ends before the deadline and, unless the policy gives
//    stages their own retries, if it leaves one attempt — and time for an attempt as long as the
//    last one — for every later stage that could serve now. Otherwise the walk moves on.
//  - When no stage has anything left, the request gives up with the time until some target of the
//    chain can serve again (when every one is blocked until a known instant).
Action Decide(AttemptState& state, Event event, const World& world);

// A hedge of the send in flight, which has produced no content yet
// (docs/resilience.md#hedged-attempts): a kSend to the target the engine would choose next if that
// send failed — the first untried target of the chain that can serve now — when the request may
// make one more attempt after both and its deadline has not passed; nullopt otherwise. Its outcome
// comes with the send's (event::Attempted::hedge) unless it answered.
std::optional<Action> Hedge(AttemptState& state, const World& world);

}  // namespace switchyard::engine
