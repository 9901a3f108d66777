#pragma once

#include <functional>
#include <vector>

#include "engine/attempt_limits.h"
#include "engine/attempt_state.h"
#include "routing/deployment_health.h"
#include "routing/fallback_plan.h"
#include "routing/residency.h"

// What the engine reads of the world, for the server (src/server/chat_handler.cc) and the
// simulator (tools/sim/gateway.cc) alike: the chain as planned for one request, the deployments'
// health before each decision.
namespace switchyard::engine {

// The engine's stages for `groups`: each group's deployments in its strategy's order
// (`uniform` draws from [0, 1)), without those outside `residency`, which are counted in
// `outside`.
std::vector<Stage> PlanStages(const std::vector<routing::PlannedGroup>& groups,
                              const routing::DeploymentHealth& health,
                              const std::function<double()>& uniform,
                              const routing::Regions& residency, int& outside);

// What the shared deployment health says about every deployment of `state`'s chain at `now`,
// written into `out` (indexed by config::Deployment::index): the World's health before a decision.
// `shape` says what the request's attempts look like, for what its latency leads to expect; that
// is read only when `expectations` is set (once per chain: it changes slowly, and reading it
// costs more than the rest).
void ReadTargetHealth(const AttemptState& state, routing::DeploymentHealth& health, TimePoint now,
                      const AttemptShape& shape, bool expectations, std::vector<TargetHealth>& out);

}  // namespace switchyard::engine
