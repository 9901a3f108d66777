#include "routing/fallback_plan.h"

#include <algorithm>

namespace switchyard::routing {
namespace {

void Append(const config::Config& config, const std::string& name, int depth,
            std::vector<PlannedGroup>& plan) {
    // Depth is the position in the chain: how far the request has fallen.
    const config::ModelGroup* group = config.FindGroup(name);
    if (group == nullptr) return;
    const bool seen = std::any_of(plan.begin(), plan.end(),
                                  [&](const PlannedGroup& p) { return p.group == group; });
    if (!seen) plan.push_back({group, depth + static_cast<int>(plan.size())});
}

}  // namespace

std::vector<PlannedGroup> PlanGroups(const config::Config& config,
                                     const std::vector<std::string>& requested,
                                     const std::optional<std::vector<std::string>>& override,
                                     bool fallbacks_enabled) {
    std::vector<PlannedGroup> plan;
    for (std::size_t i = 0; i < requested.size(); ++i) {
        Append(config, requested[i], 0, plan);
    }
    if (!fallbacks_enabled) return plan;
    if (override) {
        for (const std::string& name : *override) Append(config, name, 0, plan);
        return plan;
    }
    // Each group's own fallbacks, breadth first: the chain of the requested groups, then theirs.
    for (std::size_t i = 0; i < plan.size(); ++i) {
        for (const std::string& name : plan[i].group->fallbacks) Append(config, name, 0, plan);
    }
    return plan;
}

std::vector<PlannedGroup> SemanticFallbacks(const config::Config& config,
                                            const config::ModelGroup& group, policy::Action action,
                                            int depth) {
    const std::vector<std::string>& names = action == policy::Action::kContextFallback
                                                ? group.context_window_fallbacks
                                                : group.content_policy_fallbacks;
    std::vector<PlannedGroup> plan;
    for (const std::string& name : names) Append(config, name, depth, plan);
    return plan;
}

}  // namespace switchyard::routing
