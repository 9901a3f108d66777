#include "server/runtime.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard::server {

std::optional<std::size_t> FindDeployment(const config::Config& config, std::string_view name) {
    for (const auto& group : config.models) {
        for (const auto& d : group.deployments) {
            if (d.name == name) return d.index;
        }
    }
    return std::nullopt;
}

std::shared_ptr<Runtime> BuildRuntime(std::shared_ptr<const config::Config> config,
                                      std::chrono::steady_clock::time_point now,
                                      const Runtime* previous, HealthSink sink) {
    auto runtime = std::make_shared<Runtime>();
    runtime->health = std::make_unique<routing::DeploymentHealth>(
        config->deployment_count, routing::HealthOptionsOf(*config));
    if (sink) {
        std::vector<std::string> names(config->deployment_count);
        for (const auto& group : config->models) {
            for (const auto& d : group.deployments) names[d.index] = d.name;
        }
        runtime->health->SetListener([sink = std::move(sink), names = std::move(names)](
                                         std::size_t index, const routing::HealthChange& change) {
            sink(names[index], change);
        });
    }
    runtime->headroom = std::make_unique<limits::Headroom>(*config, now);
    runtime->lanes = std::make_unique<limits::Lanes>(config->limits.lanes);
    if (previous != nullptr) {
        std::map<std::string, std::size_t> before;
        for (const auto& group : previous->config->models) {
            for (const auto& d : group.deployments) before.emplace(d.name, d.index);
        }
        for (const auto& group : config->models) {
            for (const auto& d : group.deployments) {
                const auto it = before.find(d.name);
                if (it == before.end()) continue;
                runtime->health->CarryOver(*previous->health, it->second, d.index);
                runtime->headroom->CarryOver(*previous->headroom, it->second, d.index);
            }
        }
    }
    runtime->config = std::move(config);
    return runtime;
}

}  // namespace switchyard::server
