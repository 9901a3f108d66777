#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "engine/executor.h"
#include "engine/request_options.h"
#include "routing/deployment_health.h"

// The request's fallback chain, planned once before its first attempt: by the gateway and by the
// simulator alike.
namespace switchyard::engine {

// The chain of the `requested` groups and their fallbacks (`request_fallbacks`: the body's own
// list, if any), each group's deployments in its strategy's order (`uniform` draws from [0, 1)),
// within the regions the request may be served in: the options' (the residency header's and the
// client key's) narrowed by each requested group's. `facts` records that residency and how many
// deployments it left out.
std::vector<Stage> PlanChain(const config::Config& config,
                             const std::vector<std::string>& requested,
                             const std::optional<std::vector<std::string>>& request_fallbacks,
                             const RequestOptions& options, const routing::DeploymentHealth& health,
                             const std::function<double()>& uniform, RequestFacts& facts);

// True when the request's residency left no deployment anywhere in `chain`: it is refused.
bool NoDeploymentAllowed(const std::vector<Stage>& chain, const RequestFacts& facts);

}  // namespace switchyard::engine
