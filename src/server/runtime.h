#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>

#include "config/config.h"
#include "limits/headroom.h"
#include "limits/lanes.h"
#include "routing/deployment_health.h"

namespace switchyard::server {

// Everything whose shape one config decides: the config itself and the state kept per deployment
// and per lane. A request takes the current one when it starts and keeps it to its end; a reload
// builds a new one and swaps it in for new requests (RuntimeSlot), so in-flight requests finish on
// theirs.
struct Runtime {
    std::shared_ptr<const config::Config> config;
    std::unique_ptr<routing::DeploymentHealth> health;
    std::unique_ptr<limits::Headroom> headroom;
    std::unique_ptr<limits::Lanes> lanes;
};

// Where a change of a deployment's health goes besides its own state: the fleet's shared state,
// the durable store.
using HealthSink =
    std::function<void(std::string_view deployment, const routing::HealthChange& change)>;

// A runtime for `config`. With `previous`, every deployment that exists in both under the same
// name keeps its health (cooldown, breaker, rate limit, spend-cap disable, retry budget) and its
// headroom buckets. With `sink`, every change of a deployment's health is told to it.
std::shared_ptr<Runtime> BuildRuntime(std::shared_ptr<const config::Config> config,
                                      std::chrono::steady_clock::time_point now,
                                      const Runtime* previous, HealthSink sink = {});

// The index of the deployment named `name` in `config`; nullopt when it has none.
std::optional<std::size_t> FindDeployment(const config::Config& config, std::string_view name);

// The current runtime, swapped whole. Thread-safe.
class RuntimeSlot final {
  public:
    explicit RuntimeSlot(std::shared_ptr<Runtime> runtime) : runtime_(std::move(runtime)) {}
    std::shared_ptr<Runtime> Current() const {
        std::lock_guard lock(mutex_);
        return runtime_;
    }
    void Replace(std::shared_ptr<Runtime> runtime) {
        std::lock_guard lock(mutex_);
        runtime_.swap(runtime);
        // The old one (in `runtime`) goes when its last request does.
    }

  private:
    mutable std::mutex mutex_;
    std::shared_ptr<Runtime> runtime_;
};

}  // namespace switchyard::server
