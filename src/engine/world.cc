#include "engine/world.h"

#include <algorithm>

#include "routing/strategy.h"

namespace switchyard::engine {

std::vector<Stage> PlanStages(const std::vector<routing::PlannedGroup>& groups,
                              const routing::DeploymentHealth& health,
                              const std::function<double()>& uniform,
                              const routing::Regions& residency, int& outside) {
    std::vector<Stage> stages;
    stages.reserve(groups.size());
    for (const routing::PlannedGroup& group : groups) {
        std::vector<const config::Deployment*> order =
            routing::OrderDeployments(*group.group, health, uniform);
        const auto elsewhere = std::remove_if(
            order.begin(), order.end(),
            [&](const config::Deployment* d) { return !routing::Admits(residency, *d); });
        outside += static_cast<int>(order.end() - elsewhere);
        order.erase(elsewhere, order.end());
        stages.push_back({group, std::move(order)});
    }
    return stages;
}

void ReadTargetHealth(const AttemptState& state, routing::DeploymentHealth& health, TimePoint now,
                      const AttemptShape& shape, bool expectations,
                      std::vector<TargetHealth>& out) {
    for (const Target& target : state.targets) {
        const std::size_t index = target.deployment->index;
        const routing::Availability a = health.AvailabilityAt(index, now);
        TargetHealth& h = out[index];
        h.until = a.until;
        h.block = a.until <= now ? TargetHealth::Block::kNone
                  : a.state == routing::DeploymentState::kRateLimited
                      ? TargetHealth::Block::kRateLimited
                      : TargetHealth::Block::kSick;
        h.retry_budget = health.Budget(index).CanRetry();
        h.panic = h.block == TargetHealth::Block::kSick ? a.panic : 0;
        // Only a chain with more than one target weighs one attempt against another.
        if (expectations) {
            h.expected = state.targets.size() > 1
                             ? ExpectedFirstContent(shape, health.Latency(index, now))
                             : std::nullopt;
        }
    }
}

}  // namespace switchyard::engine
