#pragma once

// Builds chains of fake model groups and deployments for the engine's tests: only identity and
// index matter to the engine.

#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "engine/attempt_state.h"

namespace switchyard::engine::testing {

using namespace std::chrono_literals;

inline const TimePoint kT0 = TimePoint(std::chrono::hours(1'000));

// Owns the groups and deployments a chain points at.
class ChainBuilder {
  public:
    // A stage of `deployments` deployments; the group gets `name`.
    Stage Add(const std::string& name, int deployments, int depth) {
        auto group = std::make_unique<config::ModelGroup>();
        group->name = name;
        Stage stage;
        stage.group = {group.get(), depth};
        for (int i = 0; i < deployments; ++i) {
            auto d = std::make_unique<config::Deployment>();
            d->name = name + std::to_string(i + 1);
            d->index = deployments_.size();
            stage.deployments.push_back(d.get());
            deployments_.push_back(std::move(d));
        }
        groups_.push_back(std::move(group));
        return stage;
    }
    std::size_t DeploymentCount() const { return deployments_.size(); }

  private:
    std::vector<std::unique_ptr<config::ModelGroup>> groups_;
    std::vector<std::unique_ptr<config::Deployment>> deployments_;
};

inline EnginePolicy DefaultPolicy() {
    EnginePolicy p;
    p.max_attempts = 6;
    p.backoff = {std::chrono::milliseconds(500), std::chrono::milliseconds(20'000)};
    p.class_retries = config::DefaultClassRetries();
    return p;
}

inline policy::Outcome Retry(policy::ErrorClass c,
                             std::optional<std::chrono::milliseconds> retry_after = {}) {
    return {policy::Action::kRetry, c, retry_after};
}

}  // namespace switchyard::engine::testing
