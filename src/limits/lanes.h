#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "config/config.h"
#include "limits/slow_start.h"

namespace switchyard::limits {

// The workload lanes at run time (docs/resilience.md#headroom-and-lanes): how much of a
// deployment's headroom each may use now (its share, ramped by slow start), and how many of its
// requests wait for headroom. A lane yields to any lane with a larger share that has requests
// waiting, so batch only takes what interactive leaves. Thread-safe.
class Lanes final {
  public:
    using TimePoint = std::chrono::steady_clock::time_point;

    explicit Lanes(const std::vector<config::Lane>& lanes);

    std::size_t Size() const { return lanes_.size(); }
    const config::Lane& Config(std::size_t lane) const { return lanes_[lane]->config; }

    // What `lane` may use at `now`: `share`, the fraction of each bucket (0 while a lane with a
    // larger share has requests waiting), and `ramp`, the fraction of a deployment's request rate
    // (below 1 while the lane's slow start ramps up after idleness). Records the lane's activity.
    struct Grant {
        double share = 1;
        double ramp = 1;
    };
    Grant Share(std::size_t lane, TimePoint now);

    // Takes a place in the lane's queue; false when it is full (the request is shed).
    bool Enqueue(std::size_t lane);
    void Dequeue(std::size_t lane);
    int Waiting(std::size_t lane) const;

  private:
    struct State {
        explicit State(const config::Lane& lane) : config(lane), ramp(lane.slow_start) {}
        const config::Lane config;
        std::mutex mutex;  // guards ramp
        SlowStart ramp;
        std::atomic<int> waiting{0};
    };
    std::vector<std::unique_ptr<State>> lanes_;
};

}  // namespace switchyard::limits
