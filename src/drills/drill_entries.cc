#include "drills/drill_entries.h"

#include <algorithm>

#include "routing/fallback_plan.h"

namespace switchyard::drills {

std::vector<DrillEntry> EntriesOf(const config::Config& config, const config::ModelGroup& group) {
    const std::vector<routing::PlannedGroup> chain =
        routing::PlanGroups(config, {group.name}, std::nullopt, /*fallbacks_enabled=*/true);
    struct Stage {
        routing::PlannedGroup planned;
        std::string_view name;
    };
    std::vector<Stage> stages;
    for (const routing::PlannedGroup& planned : chain) {
        stages.push_back({planned, planned.depth == 0 ? "primary" : "fallback"});
    }
    const int deepest = chain.empty() ? 0 : chain.back().depth;
    const auto seen = [&](const config::ModelGroup* g) {
        return std::any_of(stages.begin(), stages.end(),
                           [&](const Stage& s) { return s.planned.group == g; });
    };
    for (const routing::PlannedGroup& planned : chain) {
        for (const auto action :
             {policy::Action::kContextFallback, policy::Action::kContentFallback}) {
            for (const routing::PlannedGroup& semantic :
                 routing::SemanticFallbacks(config, *planned.group, action, deepest + 1)) {
                if (seen(semantic.group)) continue;
                stages.push_back({semantic, action == policy::Action::kContextFallback
                                                ? "context_window"
                                                : "content_policy"});
            }
        }
    }
    std::vector<DrillEntry> out;
    for (const Stage& stage : stages) {
        for (const config::Deployment& deployment : stage.planned.group->deployments) {
            out.push_back(
                {&group, stage.planned.group, &deployment, stage.planned.depth, stage.name});
        }
    }
    return out;
}

}  // namespace switchyard::drills
