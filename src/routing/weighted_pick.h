#pragma once

#include "config/config.h"

namespace switchyard::routing {

// Picks one deployment of `group` with probability proportional to its weight. `uniform` is a
// draw from [0, 1) supplied by the caller's random source. `group` must have a deployment.
const config::Deployment& PickWeighted(const config::ModelGroup& group, double uniform);

}  // namespace switchyard::routing
