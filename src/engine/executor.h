#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "config/config.h"
#include "core/clock.h"
#include "engine/attempt_limits.h"
#include "engine/attempt_state.h"
#include "limits/headroom.h"
#include "limits/lanes.h"
#include "policy/retry_budget.h"
#include "routing/deployment_health.h"
#include "routing/residency.h"

// The one loop that carries out the engine's decisions (docs/architecture.md, "The executor"):
// the gateway runs it over sockets (src/server/gateway_ports.cc), the simulator on a virtual clock
// (tools/sim/gateway.cc). What differs between the two is behind `Ports`; everything that decides
// or keeps count — headroom and lane queues, admission by health and probe slots, what an
// attempt's outcome does to health and retry budgets, the semantic fallbacks — is here, once.
namespace switchyard::engine {

// What every request of one gateway (or simulated gateway) shares.
struct Surroundings {
    const config::Config& config;
    routing::DeploymentHealth& health;
    limits::Headroom& headroom;
    limits::Lanes& lanes;
    const core::Clock& clock;
};

// What the executor needs to know about the request besides its engine state.
struct RequestFacts {
    std::size_t lane = 0;             // index into the config's lanes
    std::int64_t input_estimate = 0;  // input tokens estimated from the body
    std::int64_t max_tokens = 0;      // 0 when absent
    bool fallbacks = true;            // the request allows fallbacks
    routing::Regions residency;       // where it may be served
    int outside = 0;                  // deployments of its chain left out for their region
    policy::RetryBudget* client_budget = nullptr;  // the client's retry budget (null: none)
    AttemptShape shape;                            // what its attempts look like to their limits
};

// Where an attempt stands among the request's attempts in flight
// (docs/resilience.md#hedged-attempts).
enum class AttemptRole {
    kAlone,   // the only one
    kRacing,  // it may be hedged: the first of the race's attempts to answer the client wins
    kHedge,   // the hedge of a racing attempt
};

// How one attempt ended, as far as the executor acts on it.
struct AttemptReport {
    policy::Outcome outcome;
    // A response went to the client: a success, or a stream past its commit point (which may
    // still have failed: `outcome` says how).
    bool answered = false;
    // The timeout that ended it was the request's own deadline: a fact about the request, not
    // about the deployment's health.
    bool cut_by_deadline = false;
    // No answer came within the attempt's limits (not a provider's 504): unless the attempt was
    // the chain's last resort, the engine moves on rather than wait as long again on it.
    bool timed_out = false;
    std::optional<std::chrono::milliseconds> time_to_first_byte;
    // A stream's: its head to its first content event, and the longest wait between content
    // events (with the first byte, what its deployment's latency model learns).
    bool streamed = false;
    std::optional<std::chrono::milliseconds> first_token_after_head;
    std::optional<std::chrono::milliseconds> longest_gap;
    std::int64_t input_tokens = 0;    // for the headroom settlement
    std::int64_t output_tokens = -1;  // -1: unknown
    // A racing attempt that another one beat: cancelled, it says nothing about its deployment.
    bool lost = false;
};

// Where the gateway and the simulator differ: I/O, time passing, randomness, the fleet's shared
// state and what is observed. One Ports object serves one request.
class Ports {
  public:
    virtual ~Ports() = default;

    // One draw from [0, 1).
    virtual double Uniform() = 0;
    // Nobody is left to answer: the request stops.
    virtual bool ClientGone() const { return false; }

    // Sends one attempt to `target` as a member of `stage`, within `limits`, and reads how it
    // ended. Admission and headroom are already taken; the rate-limit headers of the answer are
    // the port's to note. `panic`: the target is benched and tried anyway.
    virtual boost::asio::awaitable<AttemptReport> Attempt(const Target& target,
                                                          const routing::PlannedGroup& stage,
                                                          const AttemptLimits& limits, bool panic,
                                                          AttemptRole role) = 0;
    // Hedged attempts: whether two attempts of one request may run at once here; RaceBegins
    // starts a race (the kRacing and kHedge attempts until the next one compete for the client,
    // and the port cancels the losers); RaceDecided: one of them has begun to answer.
    virtual bool CanRace() const { return false; }
    virtual void RaceBegins() {}
    virtual bool RaceDecided() const { return false; }
    // Calls `then` on `executor` once `wait` has passed (the hedge delay). `then` holds nothing
    // of the request that may be gone by then. By default on the steady clock.
    virtual void After(std::chrono::milliseconds wait, boost::asio::any_io_executor executor,
                       std::function<void()> then);
    // Lets `wait` pass (less when the client leaves).
    virtual boost::asio::awaitable<void> Sleep(std::chrono::milliseconds wait,
                                               Action::WaitFor wait_for) = 0;

    // The fleet's shared buckets and probe slots (state.backend: redis); alone, there are none.
    virtual bool SharesState() const { return false; }
    // ReserveShared: nullopt when the fleet did not answer (the replica's own buckets decide),
    // else 0 when reserved or how long until the demands fit.
    virtual boost::asio::awaitable<std::optional<std::chrono::milliseconds>> ReserveShared(
        const config::Deployment& deployment, std::vector<limits::BucketDemand> demands);
    virtual void AdjustShared(const config::Deployment& deployment,
                              std::vector<limits::BucketDemand> demands);
    // nullopt: no fleet, or it did not answer; else whether this request got a probe slot.
    virtual boost::asio::awaitable<std::optional<bool>> TakeSharedProbe(
        const config::Deployment& deployment);
    virtual void ReleaseSharedProbe(const config::Deployment& deployment);

    // Observations. Recorded: the attempt's outcome reached health and the budgets (`reported`
    // false: it was abandoned instead), and `disabled` says whether it newly disabled the
    // deployment (a spend cap).
    virtual void NoHeadroom(const config::Deployment& deployment,
                            std::chrono::milliseconds spacing);
    virtual void Recorded(const config::Deployment& deployment, const routing::PlannedGroup& stage,
                          const AttemptReport& report, bool reported, bool disabled);
    virtual void Queued(const Action& wait);
};

// How the walk ended.
struct Executed {
    Action last;               // kDone, kPassThrough or kGiveUp
    bool client_gone = false;  // it stopped because nobody was left to answer
};

// Carries out the engine's decisions for one request until it is answered or the engine stops.
// The engine decides; this acts, and records what each attempt did to the shared state.
boost::asio::awaitable<Executed> Execute(AttemptState& state, Surroundings around,
                                         RequestFacts& facts, Ports& ports);

}  // namespace switchyard::engine
