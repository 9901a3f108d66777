#pragma once

#include <functional>
#include <vector>

#include "config/config.h"
#include "routing/deployment_health.h"

namespace switchyard::routing {

// The order in which one request tries the deployments of `group`, by the group's strategy
// (config::Strategy). Every deployment appears once; the attempt loop skips the ones that are
// unavailable when their turn comes, so no strategy ever sends to a sick deployment. `uniform`
// returns draws from [0, 1) from the worker's random source.
std::vector<const config::Deployment*> OrderDeployments(const config::ModelGroup& group,
                                                        const DeploymentHealth& health,
                                                        const std::function<double()>& uniform);

}  // namespace switchyard::routing
