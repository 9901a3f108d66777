#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

#include "policy/retry_budget.h"

namespace switchyard::routing {

// What every request knows about every deployment: until when it is rate-limited (a 429 with
// retry-after holds for all requests, not just the one that saw it) and its retry budget.
// Indexed by config::Deployment::index. Shared by all workers; lock-free.
class DeploymentHealth final {
  public:
    using TimePoint = std::chrono::steady_clock::time_point;

    DeploymentHealth(std::size_t deployments, double budget_max_tokens, double budget_token_ratio);

    // The first instant the deployment may be tried again; in the past when it may be now.
    TimePoint AvailableAt(std::size_t index) const;
    bool Available(std::size_t index, TimePoint now) const { return AvailableAt(index) <= now; }

    // Not tried again before `until` by any request. Extends, never shortens.
    void RateLimitedUntil(std::size_t index, TimePoint until);

    policy::RetryBudget& Budget(std::size_t index) { return *entries_[index].budget; }

  private:
    struct Entry {
        std::atomic<TimePoint::rep> available_at{TimePoint::min().time_since_epoch().count()};
        std::unique_ptr<policy::RetryBudget> budget;
    };
    std::vector<Entry> entries_;
};

}  // namespace switchyard::routing
