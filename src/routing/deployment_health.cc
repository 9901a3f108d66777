#include "routing/deployment_health.h"

namespace switchyard::routing {

DeploymentHealth::DeploymentHealth(std::size_t deployments, double budget_max_tokens,
                                   double budget_token_ratio)
    : entries_(deployments) {
    for (Entry& e : entries_) {
        e.budget = std::make_unique<policy::RetryBudget>(budget_max_tokens, budget_token_ratio);
    }
}

DeploymentHealth::TimePoint DeploymentHealth::AvailableAt(std::size_t index) const {
    return TimePoint(
        TimePoint::duration(entries_[index].available_at.load(std::memory_order_relaxed)));
}

void DeploymentHealth::RateLimitedUntil(std::size_t index, TimePoint until) {
    auto& slot = entries_[index].available_at;
    TimePoint::rep current = slot.load(std::memory_order_relaxed);
    const TimePoint::rep wanted = until.time_since_epoch().count();
    while (current < wanted &&
           !slot.compare_exchange_weak(current, wanted, std::memory_order_relaxed)) {
    }
}

}  // namespace switchyard::routing
