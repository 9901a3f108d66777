#pragma once

#include <vector>

#include "engine/attempt_state.h"
#include "routing/deployment_health.h"

namespace switchyard::engine {

// What the shared deployment health says about every deployment of `state`'s chain at `now`,
// written into `out` (indexed by config::Deployment::index): the World's health before a decision.
void ReadTargetHealth(const AttemptState& state, routing::DeploymentHealth& health, TimePoint now,
                      std::vector<TargetHealth>& out);

// The HTTP status of a give-up (Action::Kind::kGiveUp): 429 when nothing was tried because no
// deployment had headroom for the lane, or every target waits only for a rate limit; 503 when
// nothing was tried otherwise; after attempts, the last upstream status, or 504 when the last
// attempt timed out and 502 when it failed without an HTTP answer.
unsigned GiveUpStatus(const Action& give_up, bool attempted, unsigned last_status,
                      policy::ErrorClass last_class);

}  // namespace switchyard::engine
