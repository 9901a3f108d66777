#include "engine/chain.h"

#include <algorithm>

#include "engine/world.h"
#include "routing/fallback_plan.h"
#include "routing/residency.h"

namespace switchyard::engine {

std::vector<Stage> PlanChain(const config::Config& config,
                             const std::vector<std::string>& requested,
                             const std::optional<std::vector<std::string>>& request_fallbacks,
                             const RequestOptions& options, const routing::DeploymentHealth& health,
                             const std::function<double()>& uniform, RequestFacts& facts) {
    facts.residency = options.residency;
    for (const std::string& name : requested) {
        if (const config::ModelGroup* group = config.FindGroup(name)) {
            facts.residency = routing::Narrow(facts.residency, group->residency);
        }
    }
    return PlanStages(routing::PlanGroups(config, requested, request_fallbacks, options.fallbacks),
                      health, uniform, facts.residency, facts.outside);
}

bool NoDeploymentAllowed(const std::vector<Stage>& chain, const RequestFacts& facts) {
    return facts.residency && std::all_of(chain.begin(), chain.end(), [](const Stage& stage) {
               return stage.deployments.empty();
           });
}

}  // namespace switchyard::engine
