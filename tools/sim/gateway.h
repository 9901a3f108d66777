#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "config/config.h"
#include "engine/executor.h"
#include "limits/headroom.h"
#include "limits/lanes.h"
#include "policy/retry_budget.h"
#include "provider.h"
#include "routing/deployment_health.h"
#include "virtual_time.h"

namespace switchyard::sim {

// One request as it reaches the gateway.
struct GatewayRequest {
    std::string model;  // the model group asked for
    std::size_t lane = 0;
    std::int64_t input_tokens = 500;
    std::int64_t max_tokens = 256;
    bool stream = false;
    int sdk_retry_count = -1;                      // x-stainless-retry-count; -1: absent
    std::optional<milliseconds> deadline;          // x-switchyard-deadline-ms
    policy::RetryBudget* client_budget = nullptr;  // the client's retry budget
};

// The gateway's answer, as the client reads it.
struct GatewayAnswer {
    unsigned status = 200;
    bool degraded = false;     // the static degradation (200)
    bool interrupted = false;  // a stream that broke after its commit point (200, then an error)
    bool shed = false;         // no headroom for the lane in time (429)
    std::string head;          // the headers a client's retry logic reads ("name: value\r\n")
    std::string served_by;     // the deployment that answered
    int attempts = 0;          // upstream attempts made for it

    bool Ok() const { return status >= 200 && status < 300 && !degraded && !interrupted; }
};

// Switchyard's request path with time made virtual: the production attempt engine
// (engine::Decide), deployment health (cooldowns, breakers, rate-limit marks, retry budgets),
// headroom and lanes, the fallback plan and the strategies, the classifier and the rate-limit
// header parser, and the executor that acts on the engine's decisions (src/engine/executor.cc),
// the gateway's own — driven by events instead of sockets. What this file adds are the executor's
// ports: a send becomes a call to a SimProvider, a wait an event later in time.
class SimGateway final {
  public:
    SimGateway(const config::Config& config, EventLoop& loop, VirtualClock& clock,
               std::vector<SimProvider*> providers, std::uint64_t seed);
    ~SimGateway();
    SimGateway(const SimGateway&) = delete;
    SimGateway& operator=(const SimGateway&) = delete;

    // Serves `request`; `done` is called exactly once, later in virtual time.
    void Handle(GatewayRequest request, std::function<void(GatewayAnswer)> done);

    routing::DeploymentHealth& Health() { return health_; }

  private:
    struct Walk;
    class Ports;
    // One request's walk through the executor, answered through Finish.
    boost::asio::awaitable<void> Serve(std::shared_ptr<Walk> walk);
    // One attempt on `deployment`: the provider's reply, after its duration in virtual time. A
    // racing one (a hedged attempt or its hedge) that another answers first ends at that instant,
    // lost, as the gateway closes its connection.
    boost::asio::awaitable<engine::AttemptReport> Attempt(Walk& walk,
                                                          const config::Deployment& deployment,
                                                          const engine::AttemptLimits& limits,
                                                          engine::AttemptRole role);
    // Resumes after `delay` of virtual time.
    boost::asio::awaitable<void> After(milliseconds delay);
    // Calls `then` (on the walks' io_context) after `delay` of virtual time.
    void Then(milliseconds delay, std::function<void()> then);
    // Resumes after `delay` of virtual time, or sooner when `wake` is cancelled.
    boost::asio::awaitable<void> AfterUnlessWoken(milliseconds delay,
                                                  std::shared_ptr<boost::asio::steady_timer> wake);
    // Runs the walks that are ready to go on, at the current virtual time.
    void Poll();
    void Finish(const std::shared_ptr<Walk>& walk, GatewayAnswer answer);
    double Draw() { return std::uniform_real_distribution<double>(0, 1)(rng_); }

    const config::Config& config_;
    EventLoop& loop_;
    VirtualClock& clock_;
    std::vector<SimProvider*> providers_;  // by deployment index
    routing::DeploymentHealth health_;
    limits::Headroom headroom_;
    limits::Lanes lanes_;
    std::mt19937_64 rng_;
    // The walks' coroutines: resumed by the event loop's callbacks, never run on their own.
    boost::asio::io_context io_;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{
        io_.get_executor()};
    bool polling_ = false;
};

}  // namespace switchyard::sim
