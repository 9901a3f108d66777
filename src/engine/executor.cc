#include "engine/executor.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <exception>

#include "engine/decide.h"
#include "engine/world.h"
#include "routing/fallback_plan.h"

namespace switchyard::engine {

namespace asio = boost::asio;
using std::chrono::milliseconds;
using Kind = Action::Kind;

asio::awaitable<std::optional<milliseconds>> Ports::ReserveShared(
    const config::Deployment&, std::vector<limits::BucketDemand>) {
    co_return std::nullopt;
}
void Ports::AdjustShared(const config::Deployment&, std::vector<limits::BucketDemand>) {}
asio::awaitable<std::optional<bool>> Ports::TakeSharedProbe(const config::Deployment&) {
    co_return std::nullopt;
}
void Ports::ReleaseSharedProbe(const config::Deployment&) {}
void Ports::NoHeadroom(const config::Deployment&, milliseconds) {}
void Ports::Recorded(const config::Deployment&, const routing::PlannedGroup&, const AttemptReport&,
                     bool, bool) {}
void Ports::Queued(const Action&) {}
void Ports::After(milliseconds wait, asio::any_io_executor executor, std::function<void()> then) {
    auto timer = std::make_shared<asio::steady_timer>(executor, wait);
    timer->async_wait(
        [timer, then = std::move(then)](const boost::system::error_code&) { then(); });
}

namespace {

// A place in a lane's queue for one deployment, given back when the request stops waiting (on
// every path). Its ticket, taken when it first waits, keeps its place in line between tries.
class QueueSlot final {
  public:
    QueueSlot(limits::Lanes& lanes, std::size_t lane) : lanes_(lanes), lane_(lane) {}
    QueueSlot(const QueueSlot&) = delete;
    QueueSlot& operator=(const QueueSlot&) = delete;
    ~QueueSlot() { Leave(); }

    bool Enter(std::size_t deployment) {
        if (held_ && deployment_ == deployment) return true;
        Leave();
        if (!ticket_) ticket_ = lanes_.Ticket(lane_);
        deployment_ = deployment;
        return held_ = lanes_.Enqueue(lane_, deployment_, *ticket_);
    }
    void Leave() {
        if (held_) lanes_.Dequeue(lane_, deployment_, *ticket_);
        held_ = false;
    }
    // How many wait for `deployment` before this request.
    int Ahead(std::size_t deployment) const { return lanes_.Ahead(lane_, deployment, ticket_); }

  private:
    limits::Lanes& lanes_;
    std::size_t lane_;
    std::optional<std::uint64_t> ticket_;
    std::size_t deployment_ = 0;
    bool held_ = false;
};

// An admitted attempt: in its deployment's in-flight count while it runs, and reported to the
// deployment's health exactly once — with its outcome or, when none is known or it says nothing
// about the deployment, as abandoned (its half-open probe slot is freed).
class AdmittedAttempt final {
  public:
    AdmittedAttempt(const Surroundings& around, const config::Deployment& deployment, Ports& ports)
        : around_(around), deployment_(deployment), ports_(ports) {
        around_.health.AddInFlight(deployment_.index, 1);
    }
    AdmittedAttempt(const AdmittedAttempt&) = delete;
    AdmittedAttempt& operator=(const AdmittedAttempt&) = delete;
    ~AdmittedAttempt() {
        Ended();
        if (!reported_) around_.health.Abandon(deployment_.index, around_.clock.Now());
        if (shared_probe_) ports_.ReleaseSharedProbe(deployment_);
    }

    // It holds one of the fleet's half-open probe slots, freed when it ends.
    void HoldSharedProbe() { shared_probe_ = true; }

    // The attempt no longer runs.
    void Ended() {
        if (running_) around_.health.AddInFlight(deployment_.index, -1);
        running_ = false;
    }
    // Its outcome; true when it newly disabled the deployment (a spend cap).
    bool Report(policy::ErrorClass error, std::optional<milliseconds> retry_after,
                std::optional<milliseconds> time_to_first_byte) {
        Ended();
        reported_ = true;
        return around_.health.OnOutcome(deployment_.index, around_.clock.Now(),
                                        around_.clock.WallNow(), error, retry_after,
                                        time_to_first_byte);
    }

  private:
    const Surroundings& around_;
    const config::Deployment& deployment_;
    Ports& ports_;
    bool running_ = true;
    bool reported_ = false;
    bool shared_probe_ = false;
};

// Headroom reserved for an attempt: settled with the attempt's outcome, or given back whole if
// the attempt never settles it (it was not sent, or it was cut short). A reservation the fleet's
// shared buckets made is settled there too.
class HeadroomReservation final {
  public:
    HeadroomReservation(const Surroundings& around, const config::Deployment& deployment,
                        limits::HeadroomCost cost, Ports* shared)
        : around_(around), deployment_(deployment), cost_(cost), shared_(shared) {}
    HeadroomReservation(const HeadroomReservation&) = delete;
    HeadroomReservation& operator=(const HeadroomReservation&) = delete;
    ~HeadroomReservation() {
        if (!open_) return;
        if (shared_ != nullptr) {
            shared_->AdjustShared(deployment_,
                                  around_.headroom.CancelDemands(deployment_.index, cost_));
        }
        around_.headroom.Cancel(deployment_.index, cost_, around_.clock.Now());
    }

    void Settle(bool answered, std::int64_t input_tokens, std::int64_t output_tokens) {
        if (!open_) return;
        open_ = false;
        if (shared_ != nullptr) {
            shared_->AdjustShared(deployment_,
                                  around_.headroom.SettleDemands(deployment_.index, cost_, answered,
                                                                 input_tokens, output_tokens));
        }
        around_.headroom.Settle(deployment_.index, cost_, answered, input_tokens, output_tokens,
                                around_.clock.Now());
    }

  private:
    const Surroundings& around_;
    const config::Deployment& deployment_;
    limits::HeadroomCost cost_;
    Ports* shared_;
    bool open_ = true;
};

// Reserves `cost` on `deployment` for the request's lane: in the fleet's shared buckets when
// there are any (`shared` is then set), else (or when the fleet does not answer) in this
// gateway's. Returns 0 when reserved, else how long until it would fit.
asio::awaitable<milliseconds> ReserveHeadroom(const Surroundings& around, const RequestFacts& facts,
                                              Ports& ports, const config::Deployment& deployment,
                                              limits::HeadroomCost cost, TimePoint now,
                                              bool& shared) {
    shared = false;
    const limits::Lanes::Grant grant = around.lanes.Share(facts.lane, now);
    limits::Headroom& headroom = around.headroom;
    if (!ports.SharesState()) {
        co_return headroom.TryReserve(deployment.index, cost, grant.share, now, facts.lane,
                                      grant.ramp);
    }
    std::vector<limits::BucketDemand> demands;
    const milliseconds local =
        headroom.Demands(deployment.index, cost, grant.share, now, facts.lane, grant.ramp, demands);
    if (local > milliseconds(0)) co_return local;
    if (!demands.empty()) {
        const std::optional<milliseconds> wait =
            co_await ports.ReserveShared(deployment, std::move(demands));
        if (wait) {
            if (*wait > milliseconds(0)) co_return *wait;
            headroom.Reserved(deployment.index, cost, now, facts.lane, grant.ramp);
            shared = true;
            co_return milliseconds(0);
        }
    }
    co_return headroom.TryReserve(deployment.index, cost, grant.share, now, facts.lane, grant.ramp);
}

// After an attempt: its outcome goes to the deployment's headroom, health and retry budget and
// the client's retry budget. An attempt the request itself cut short — its deadline, or a client
// that left — or one the gateway's own limits stopped says nothing about the deployment: it is
// abandoned (AdmittedAttempt), not reported.
void Record(const Surroundings& around, const RequestFacts& facts, Ports& ports,
            const config::Deployment& deployment, const routing::PlannedGroup& stage,
            AdmittedAttempt& admitted, HeadroomReservation* headroom, const AttemptReport& end) {
    if (headroom != nullptr) {
        headroom->Settle(end.answered, end.input_tokens, end.output_tokens);
    }
    const policy::ErrorClass error = end.outcome.error_class;
    const bool reported = !end.cut_by_deadline && !end.lost && !ports.ClientGone() &&
                          error != policy::ErrorClass::kLocal;
    bool disabled = false;
    if (reported) {
        // A stream that failed after its commit point is a failure of the deployment all the same.
        disabled = admitted.Report(error, end.outcome.retry_after, end.time_to_first_byte);
        if (error == policy::ErrorClass::kNone && end.answered) {
            around.health.RecordLatency(
                deployment.index, around.clock.Now(),
                {end.streamed, end.time_to_first_byte, end.first_token_after_head, end.longest_gap,
                 end.output_tokens});
        }
        policy::RetryBudget& deployment_budget = around.health.Budget(deployment.index);
        if (error == policy::ErrorClass::kNone) {
            if (facts.client_budget != nullptr) facts.client_budget->OnSuccess();
            deployment_budget.OnSuccess();
        } else {
            if (facts.client_budget != nullptr) facts.client_budget->OnFailure();
            deployment_budget.OnFailure();
        }
    }
    ports.Recorded(deployment, stage, end, reported, disabled);
}

// The semantic fallbacks of the current stage, planned as the request's chain was: a fallback
// with nothing in an allowed region is no fallback.
std::vector<Stage> SemanticStages(const AttemptState& state, const Surroundings& around,
                                  RequestFacts& facts, Ports& ports, policy::Action semantic) {
    const routing::PlannedGroup stage = state.stages[state.stage].group;
    const std::vector<routing::PlannedGroup> groups =
        facts.fallbacks
            ? routing::SemanticFallbacks(around.config, *stage.group, semantic, stage.depth + 1)
            : std::vector<routing::PlannedGroup>{};
    const std::function<double()> draw = [&ports] { return ports.Uniform(); };
    std::vector<Stage> stages =
        PlanStages(groups, around.health, draw, facts.residency, facts.outside);
    std::erase_if(stages, [](const Stage& s) { return s.deployments.empty(); });
    return stages;
}

// The limits of the attempt `send` orders (docs/resilience.md#timeouts).
AttemptLimits LimitsOf(const Surroundings& around, const RequestFacts& facts,
                       const config::Deployment& deployment, const Action& send, TimePoint now) {
    // The last resort gets the rest of the deadline and the configured limits: a deployment
    // that is slower than its history still answers when nothing else could.
    const policy::LatencyQuantiles history = send.last_resort || !facts.shape.ceilings.adaptive
                                                 ? policy::LatencyQuantiles{}
                                                 : around.health.Latency(deployment.index, now);
    return WithinBudget(AdaptedLimits(facts.shape, history, !send.last_resort), send.budget,
                        send.last_resort);
}

// One send to the target of `send`: headroom, admission, the attempt and its record. Returns the
// event for the engine, or nullopt when the attempt answered the client.
asio::awaitable<std::optional<Event>> SendAttempt(AttemptState& state, const Surroundings& around,
                                                  RequestFacts& facts, Ports& ports,
                                                  const QueueSlot& queue, const Action& send,
                                                  TimePoint now, AttemptRole role) {
    const Target& target = state.targets[send.target];
    const config::Deployment& deployment = *target.deployment;
    const routing::PlannedGroup stage = state.stages[target.stage].group;
    std::optional<HeadroomReservation> reserved;
    if (around.config.limits.self_throttle) {
        // Send only where the provider's limits leave room for this lane.
        const limits::HeadroomCost cost =
            limits::CostOf(deployment.provider, facts.input_estimate, facts.max_tokens);
        bool shared = false;
        const milliseconds wait =
            co_await ReserveHeadroom(around, facts, ports, deployment, cost, now, shared);
        if (wait > milliseconds(0)) {
            // Predictive shedding: the requests before it for this deployment go first, each
            // `spacing` apart; past its deadline the engine sheds it now.
            const double ramp = around.lanes.Share(facts.lane, now).ramp;
            const milliseconds spacing =
                around.headroom.Spacing(deployment.index, cost, now, facts.lane, ramp);
            ports.NoHeadroom(deployment, spacing);
            co_return event::NoHeadroom{
                limits::ExpectedWait(wait, queue.Ahead(deployment.index), spacing)};
        }
        reserved.emplace(around, deployment, cost, shared ? &ports : nullptr);
    }
    const routing::AttemptAdmission admission = around.health.AdmitAttempt(
        deployment.index, now,
        send.panic ? routing::Admission::kPanic : routing::Admission::kNormal);
    if (admission == routing::AttemptAdmission::kRefused) {
        // Another request took the last half-open probe slot (the reservation goes back as
        // `reserved` ends).
        co_return event::NotAdmitted{};
    }
    AdmittedAttempt admitted(around, deployment, ports);
    if (admission == routing::AttemptAdmission::kProbe && ports.SharesState()) {
        // A probe of a half-open breaker: the fleet's probe slots are shared.
        const std::optional<bool> slot = co_await ports.TakeSharedProbe(deployment);
        if (slot && !*slot) co_return event::NotAdmitted{};  // another replica is probing
        if (slot) admitted.HoldSharedProbe();
    }
    const AttemptReport end = co_await ports.Attempt(
        target, stage, LimitsOf(around, facts, deployment, send, now), send.panic, role);
    admitted.Ended();
    const Event attempted =
        event::Attempted{end.outcome, now, around.clock.Now(), end.timed_out && !end.answered};
    // Cut short for a client that left before any answer: nothing to record (the walk stops).
    if (ports.ClientGone() && !end.answered) co_return attempted;
    Record(around, facts, ports, deployment, stage, admitted, reserved ? &*reserved : nullptr, end);
    if (end.answered) co_return std::nullopt;
    co_return attempted;
}

// How long the attempt `send` orders may go without content before it is hedged; nullopt when it
// is not to be hedged (docs/resilience.md#hedged-attempts).
std::optional<milliseconds> RaceDelay(const AttemptState& state, const Surroundings& around,
                                      const RequestFacts& facts, Ports& ports, const Action& send,
                                      TimePoint now) {
    const Target& target = state.targets[send.target];
    const std::optional<config::HedgeConfig>& hedge = state.stages[target.stage].group.group->hedge;
    if (!hedge || !ports.CanRace() || send.panic || send.last_resort) return std::nullopt;
    const std::size_t index = target.deployment->index;
    if (state.attempts == 0) around.health.Hedges(index).OnRequest(hedge->max_ratio);
    return HedgeDelay(
        *hedge, facts.shape,
        around.health.LatencyAt(index, now, 0.5, facts.shape.ceilings.adaptive_min_samples));
}

// A send that may be hedged: its attempt runs on its own, and if it has begun no answer after
// `delay`, a hedge goes to the target the engine chooses (within the primary deployment's hedge
// budget and the hedge target's headroom and admission). The first to answer the client wins;
// the port cancels the other, which is abandoned. Returns as SendAttempt does, with the hedge's
// outcome in the event when neither answered.
asio::awaitable<std::optional<Event>> SendRacing(AttemptState& state, const Surroundings& around,
                                                 RequestFacts& facts, Ports& ports,
                                                 const QueueSlot& queue, const Action& send,
                                                 milliseconds delay,
                                                 std::vector<TargetHealth>& health_now) {
    struct Runner {
        bool done = false;
        std::optional<Event> event;
        std::exception_ptr error;
    };
    // What the race waits on: cancelled when a runner ends or the hedge delay passes. Shared with
    // the delay's handler, which may outlive the race.
    struct Signal {
        explicit Signal(const asio::any_io_executor& executor)
            : wake(executor, asio::steady_timer::time_point::max()) {}
        asio::steady_timer wake;
        bool delay_passed = false;
    };
    const asio::any_io_executor executor = co_await asio::this_coro::executor;
    const auto signal = std::make_shared<Signal>(executor);
    const auto wait = [&signal]() -> asio::awaitable<void> {
        co_await signal->wake.async_wait(asio::as_tuple(asio::use_awaitable));
        signal->wake.expires_at(asio::steady_timer::time_point::max());
    };
    Runner first;
    Runner second;
    bool hedged = false;
    const auto run = [&](const Action& action, Runner& runner, AttemptRole role) {
        asio::co_spawn(
            executor,
            SendAttempt(state, around, facts, ports, queue, action, around.clock.Now(), role),
            [&runner, signal](std::exception_ptr error, std::optional<Event> event) {
                runner.done = true;
                runner.event = std::move(event);
                runner.error = error;
                signal->wake.cancel();
            });
    };
    ports.RaceBegins();
    run(send, first, AttemptRole::kRacing);
    ports.After(delay, executor, [signal] {
        signal->delay_passed = true;
        signal->wake.cancel();
    });
    while (!first.done && !signal->delay_passed) co_await wait();
    if (!first.done && !ports.RaceDecided() && !ports.ClientGone()) {
        const TimePoint now = around.clock.Now();
        ReadTargetHealth(state, around.health, now, facts.shape, false, health_now);
        const World world{health_now, true, now, ports.Uniform()};
        if (const std::optional<Action> hedge = Hedge(state, world)) {
            const std::size_t primary = state.targets[send.target].deployment->index;
            hedged = around.health.Hedges(primary).TryHedge();
            if (hedged) run(*hedge, second, AttemptRole::kHedge);
        }
    }
    while (!first.done || (hedged && !second.done)) co_await wait();
    if (first.error) std::rethrow_exception(first.error);
    if (second.error) std::rethrow_exception(second.error);
    if (!first.event || (hedged && !second.event)) co_return std::nullopt;  // answered
    auto* attempted = std::get_if<event::Attempted>(&*first.event);
    const auto* hedge = hedged ? std::get_if<event::Attempted>(&*second.event) : nullptr;
    if (attempted != nullptr && hedge != nullptr) {
        attempted->hedge = event::Hedged{hedge->outcome, hedge->cut};
    }
    co_return std::move(first.event);
}

}  // namespace

asio::awaitable<Executed> Execute(AttemptState& state, Surroundings around, RequestFacts& facts,
                                  Ports& ports) {
    const config::Config& config = around.config;
    std::vector<TargetHealth> health_now(config.deployment_count);
    QueueSlot queue(around.lanes, facts.lane);
    std::size_t expected_for = 0;  // the chain's length when its expectations were read
    Event event = event::Start{};
    for (;;) {
        if (ports.ClientGone()) {
            Executed gone;
            gone.last.kind = Kind::kDone;  // nobody to answer: the request ends here
            gone.client_gone = true;
            co_return gone;
        }
        const TimePoint now = around.clock.Now();
        // What each target's latency leads to expect: read once per chain (again when a semantic
        // fallback changed it).
        const bool new_chain = state.targets.size() != expected_for;
        expected_for = state.targets.size();
        ReadTargetHealth(state, around.health, now, facts.shape, new_chain, health_now);
        const bool client_budget =
            facts.client_budget == nullptr || facts.client_budget->CanRetry();
        const World world{health_now, client_budget, now, ports.Uniform()};
        const Action action = Decide(state, std::move(event), world);
        if (action.kind != Kind::kWait || action.wait_for != Action::WaitFor::kHeadroom) {
            queue.Leave();  // no longer waiting for headroom: other lanes need not yield
        }
        switch (action.kind) {
            case Kind::kSend: {
                const std::optional<milliseconds> race =
                    RaceDelay(state, around, facts, ports, action, now);
                std::optional<Event> next =
                    race ? co_await SendRacing(state, around, facts, ports, queue, action, *race,
                                               health_now)
                         : co_await SendAttempt(state, around, facts, ports, queue, action, now,
                                                AttemptRole::kAlone);
                if (!next) {
                    Executed done;
                    done.last.kind = Kind::kDone;
                    co_return done;
                }
                event = std::move(*next);
                break;
            }
            case Kind::kWait:
                if (action.wait_for == Action::WaitFor::kHeadroom) {
                    if (!queue.Enter(state.targets[action.target].deployment->index)) {
                        event = event::QueueFull{};
                        break;
                    }
                    ports.Queued(action);
                }
                co_await ports.Sleep(action.wait, action.wait_for);
                event = event::Waited{};
                break;
            case Kind::kReplaceChain:
                // A semantic fallback: the same prompt would fail the same way anywhere else.
                event = event::ChainReplaced{
                    SemanticStages(state, around, facts, ports, action.semantic)};
                break;
            case Kind::kDone:
            case Kind::kPassThrough:
            case Kind::kGiveUp: {
                Executed stopped;
                stopped.last = action;
                co_return stopped;
            }
        }
    }
}

}  // namespace switchyard::engine
