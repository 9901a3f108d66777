#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <utility>
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

    // A request's place in line in `lane`: numbers in arrival order, kept while it waits (and
    // between its tries), so each deployment's queue in the lane is ordered by arrival.
    std::uint64_t Ticket(std::size_t lane);
    // Takes a place in the lane's queue for `deployment`; false when the lane's queue is full
    // (the request is shed).
    bool Enqueue(std::size_t lane, std::size_t deployment, std::uint64_t ticket);
    void Dequeue(std::size_t lane, std::size_t deployment, std::uint64_t ticket);
    int Waiting(std::size_t lane) const;
    // How many wait in `lane` for `deployment` before `ticket` (all of them for a request without
    // one yet).
    int Ahead(std::size_t lane, std::size_t deployment, std::optional<std::uint64_t> ticket) const;

    // A shed request's hint (docs/resilience.md#headroom-and-lanes): the time capacity for it
    // will exist — not before `earliest`, and `spacing` after the last time promised to a
    // request shed from `lane` for `deployment` — which is then promised to it. Requests shed
    // together are so told to come back one after the other, not all at the first free slot.
    TimePoint Promise(std::size_t lane, std::size_t deployment, TimePoint earliest,
                      std::chrono::milliseconds spacing);

  private:
    struct State {
        explicit State(const config::Lane& lane) : config(lane), ramp(lane.slow_start) {}
        const config::Lane config;
        std::mutex mutex;  // guards ramp
        SlowStart ramp;
        std::atomic<int> waiting{0};
        std::atomic<std::uint64_t> next_ticket{0};
        mutable std::mutex queue_mutex;                         // guards queue
        std::set<std::pair<std::size_t, std::uint64_t>> queue;  // (deployment, ticket) waiting
        std::map<std::size_t, TimePoint> promised;  // per deployment: the last time promised
    };
    std::vector<std::unique_ptr<State>> lanes_;
};

// Predictive shedding (docs/resilience.md#headroom-and-lanes): when a request of a lane finds no
// headroom, it is served after the `ahead` requests waiting before it in its lane, each `spacing`
// apart, and not before its own `wait` — so it can expect to be sent `wait + ahead × spacing`
// from now. A request whose expected time is past its deadline is shed at once.
std::chrono::milliseconds ExpectedWait(std::chrono::milliseconds wait, int ahead,
                                       std::chrono::milliseconds spacing);

}  // namespace switchyard::limits
