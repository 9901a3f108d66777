#include "gateway.h"

#include <algorithm>
#include <string_view>
#include <utility>
#include <variant>

#include "engine/decide.h"
#include "engine/request_options.h"
#include "engine/world.h"
#include "policy/classify.h"
#include "policy/rate_limit_headers.h"
#include "routing/fallback_plan.h"
#include "routing/strategy.h"

namespace switchyard::sim {

namespace {

using Kind = engine::Action::Kind;

void AddRetryAfter(std::string& head, milliseconds wait) {
    const long long ms = std::max<long long>(1, wait.count());
    head += "retry-after: " + std::to_string((ms + 999) / 1000) + "\r\n";
    head += "retry-after-ms: " + std::to_string(ms) + "\r\n";
}

}  // namespace

// One request's walk: the engine's state and what acting on it needs between events.
struct SimGateway::Walk {
    Walk(GatewayRequest r, std::function<void(GatewayAnswer)> d, engine::RequestOptions o,
         std::vector<engine::Stage> chain, TimePoint deadline, std::size_t deployments)
        : request(std::move(r)),
          done(std::move(d)),
          options(std::move(o)),
          state(options.policy, chain, deadline),
          health_now(deployments) {}

    GatewayRequest request;
    std::function<void(GatewayAnswer)> done;
    engine::RequestOptions options;
    engine::AttemptState state;
    std::vector<engine::TargetHealth> health_now;
    engine::Event event = engine::event::Start{};
    bool queued = false;                  // holds a place in its lane's queue
    std::size_t queued_for = 0;           // the deployment it waits for there
    std::optional<std::uint64_t> ticket;  // its place in line, kept between tries
    int attempts = 0;
    unsigned last_status = 0;
    policy::ErrorClass last_class = policy::ErrorClass::kNone;
    std::string last_head;  // of the last upstream answer, passed through with a client error
    routing::Regions residency;
    int outside = 0;  // deployments left out for their region
};

SimGateway::SimGateway(const config::Config& config, EventLoop& loop, VirtualClock& clock,
                       std::vector<SimProvider*> providers, std::uint64_t seed)
    : config_(config),
      loop_(loop),
      clock_(clock),
      providers_(std::move(providers)),
      health_(config.deployment_count, routing::HealthOptionsOf(config)),
      headroom_(config, clock.Now()),
      lanes_(config.limits.lanes),
      rng_(seed) {}

SimGateway::~SimGateway() = default;

void SimGateway::Handle(GatewayRequest request, std::function<void(GatewayAnswer)> done) {
    const int retry_count = request.sdk_retry_count;
    const std::optional<milliseconds> deadline = request.deadline;
    const std::string retry_text = std::to_string(retry_count);
    const std::string deadline_text = deadline ? std::to_string(deadline->count()) : "";
    const engine::HeaderLookup header =
        [&](std::string_view name) -> std::optional<std::string_view> {
        if (name == "x-stainless-retry-count" && retry_count >= 0) return retry_text;
        if (name == "x-switchyard-deadline-ms" && deadline) return deadline_text;
        return std::nullopt;
    };
    auto read =
        engine::ReadRequestOptions(config_, header, nullptr, request.stream, request.max_tokens);
    engine::RequestOptions options = std::get<engine::RequestOptions>(std::move(read));
    const std::function<double()> draw = [this] { return Draw(); };
    // Residency as the server reads it: the options' (header and key) and the requested group's.
    routing::Regions residency = options.residency;
    if (const config::ModelGroup* group = config_.FindGroup(request.model)) {
        residency = routing::Narrow(residency, group->residency);
    }
    int outside = 0;
    std::vector<engine::Stage> chain = engine::PlanStages(
        routing::PlanGroups(config_, {request.model}, std::nullopt, options.fallbacks), health_,
        draw, residency, outside);
    const TimePoint deadline_at = clock_.Now() + options.deadline;
    auto walk = std::make_shared<Walk>(std::move(request), std::move(done), std::move(options),
                                       std::move(chain), deadline_at, config_.deployment_count);
    walk->residency = std::move(residency);
    walk->outside = outside;
    if (walk->residency &&
        std::all_of(walk->state.stages.begin(), walk->state.stages.end(),
                    [](const engine::StageState& s) { return s.target_count == 0; })) {
        GatewayAnswer refused;  // nothing of the chain is in an allowed region
        refused.status = 403;
        Finish(walk, std::move(refused));
        return;
    }
    Step(walk);
}

void SimGateway::Step(const std::shared_ptr<Walk>& walk) {
    for (;;) {
        const TimePoint now = clock_.Now();
        engine::ReadTargetHealth(walk->state, health_, now, walk->health_now);
        const bool client_budget =
            walk->request.client_budget == nullptr || walk->request.client_budget->CanRetry();
        const engine::World world{walk->health_now, client_budget, now, Draw()};
        const engine::Action action = engine::Decide(walk->state, std::move(walk->event), world);
        const bool headroom_wait =
            action.kind == Kind::kWait && action.wait_for == engine::Action::WaitFor::kHeadroom;
        if (!headroom_wait && walk->queued) {
            lanes_.Dequeue(walk->request.lane, walk->queued_for, *walk->ticket);
            walk->queued = false;
        }
        switch (action.kind) {
            case Kind::kSend: {
                const config::Deployment& deployment =
                    *walk->state.targets[action.target].deployment;
                bool reserved = false;
                if (config_.limits.self_throttle) {
                    const limits::HeadroomCost cost = limits::CostOf(
                        deployment.provider, walk->request.input_tokens, walk->request.max_tokens);
                    const limits::Lanes::Grant grant = lanes_.Share(walk->request.lane, now);
                    const milliseconds wait = headroom_.TryReserve(
                        deployment.index, cost, grant.share, now, walk->request.lane, grant.ramp);
                    if (wait > milliseconds(0)) {
                        // Predictive shedding, as the gateway does it (server/chat_handler.cc).
                        const milliseconds spacing = headroom_.Spacing(
                            deployment.index, cost, now, walk->request.lane, grant.ramp);
                        walk->event = engine::event::NoHeadroom{limits::ExpectedWait(
                            wait, lanes_.Ahead(walk->request.lane, deployment.index, walk->ticket),
                            spacing)};
                        continue;
                    }
                    reserved = true;
                }
                if (health_.AdmitAttempt(deployment.index, now) ==
                    routing::AttemptAdmission::kRefused) {
                    if (reserved) {
                        headroom_.Cancel(
                            deployment.index,
                            limits::CostOf(deployment.provider, walk->request.input_tokens,
                                           walk->request.max_tokens),
                            now);
                    }
                    walk->event = engine::event::NotAdmitted{};
                    continue;
                }
                Send(walk, action.target);  // its reservation is settled when it ends
                return;
            }
            case Kind::kWait: {
                const std::size_t waits_for =
                    headroom_wait ? walk->state.targets[action.target].deployment->index : 0;
                if (headroom_wait && walk->queued && walk->queued_for != waits_for) {
                    lanes_.Dequeue(walk->request.lane, walk->queued_for, *walk->ticket);
                    walk->queued = false;
                }
                if (headroom_wait && !walk->queued) {
                    if (!walk->ticket) walk->ticket = lanes_.Ticket(walk->request.lane);
                    walk->queued_for = waits_for;
                    walk->queued = lanes_.Enqueue(walk->request.lane, waits_for, *walk->ticket);
                    if (!walk->queued) {
                        walk->event = engine::event::QueueFull{};
                        continue;
                    }
                }
                loop_.After(action.wait, [this, walk] {
                    walk->event = engine::event::Waited{};
                    Step(walk);
                });
                return;
            }
            case Kind::kReplaceChain: {
                const routing::PlannedGroup stage = walk->state.stages[walk->state.stage].group;
                const std::vector<routing::PlannedGroup> semantic =
                    walk->options.fallbacks
                        ? routing::SemanticFallbacks(config_, *stage.group, action.semantic,
                                                     stage.depth + 1)
                        : std::vector<routing::PlannedGroup>{};
                const std::function<double()> draw = [this] { return Draw(); };
                std::vector<engine::Stage> stages =
                    engine::PlanStages(semantic, health_, draw, walk->residency, walk->outside);
                std::erase_if(stages, [](const engine::Stage& s) { return s.deployments.empty(); });
                walk->event = engine::event::ChainReplaced{std::move(stages)};
                continue;
            }
            case Kind::kDone:
                return;  // answered by the attempt that ended
            case Kind::kPassThrough: {
                GatewayAnswer answer;
                answer.status = walk->last_status;
                answer.head = walk->last_head;
                Finish(walk, std::move(answer));
                return;
            }
            case Kind::kGiveUp: {
                GatewayAnswer answer;
                if (config_.degradation.mode == config::DegradationConfig::Mode::kStatic) {
                    answer.degraded = true;
                    Finish(walk, std::move(answer));
                    return;
                }
                answer.status = engine::GiveUpStatus(action, walk->attempts > 0, walk->last_status,
                                                     walk->last_class);
                answer.shed = walk->attempts == 0 && action.headroom_short_for.has_value();
                if (action.retry_after) AddRetryAfter(answer.head, *action.retry_after);
                answer.head += "x-should-retry: false\r\n";
                Finish(walk, std::move(answer));
                return;
            }
        }
    }
}

void SimGateway::Send(const std::shared_ptr<Walk>& walk, std::size_t target_index) {
    const config::Deployment& deployment = *walk->state.targets[target_index].deployment;
    const bool reserved = config_.limits.self_throttle;
    const TimePoint now = clock_.Now();
    health_.AddInFlight(deployment.index, 1);
    ++walk->attempts;
    SimProvider& provider = *providers_[deployment.index];
    Reply reply =
        provider.Call(walk->request.stream, walk->request.input_tokens, walk->request.max_tokens);
    // The attempt's timeouts, as the gateway arms them: the request's deadline bounds the wait
    // for the first byte (src/server/attempt.cc).
    const milliseconds remaining =
        std::max(milliseconds(1), std::chrono::ceil<milliseconds>(walk->state.deadline - now));
    const config::Timeouts& t = walk->options.timeouts;
    const milliseconds first_byte = std::min(t.first_byte, remaining);
    const milliseconds chunk = std::min(t.chunk, t.first_token);
    bool timed_out = false;
    milliseconds duration = reply.duration;
    if (reply.stalls && !reply.cut_mid_stream) {
        timed_out = true;
        duration = first_byte;
    } else if (reply.duration > first_byte) {
        timed_out = true;
        duration = first_byte;
    } else if (reply.stalls) {
        duration = reply.duration + chunk;  // content flowed, then nothing: the chunk timeout
    }
    const bool cut_by_deadline = timed_out && remaining < t.first_byte;
    loop_.After(duration, [this, walk, target_index, reply = std::move(reply), now, duration,
                           timed_out, cut_by_deadline, reserved]() mutable {
        AttemptEnded(walk, target_index, std::move(reply), now, duration, timed_out,
                     cut_by_deadline, reserved);
    });
}

void SimGateway::AttemptEnded(const std::shared_ptr<Walk>& walk, std::size_t target_index,
                              Reply reply, TimePoint started, milliseconds duration, bool timed_out,
                              bool cut_by_deadline, bool reserved) {
    const config::Deployment& deployment = *walk->state.targets[target_index].deployment;
    const TimePoint now = clock_.Now();
    const auto wall = clock_.WallNow();
    SimProvider& provider = *providers_[deployment.index];
    provider.Ended();
    health_.AddInFlight(deployment.index, -1);
    policy::Outcome outcome;
    bool answered = false;
    if (timed_out) {
        outcome = policy::Classify({policy::Transport::kTimeout}, wall);
    } else {
        const std::vector<policy::HeaderField> fields = reply.Fields();
        const policy::RateLimitHeaders reported = policy::ParseRateLimitHeaders(fields, wall);
        health_.NoteHeadroom(deployment.index, reported);
        headroom_.Correct(deployment.index, reported, now);
        if (reply.transport != policy::Transport::kOk) {
            outcome = policy::Classify({reply.transport}, wall);
        } else if (reply.cut_mid_stream) {
            // After the commit point in interactive mode: the client has the stream, and an
            // error ends it. In background mode the gateway holds it and may try again.
            answered = !walk->options.background;
            if (!reply.stream_error.empty()) {
                policy::AttemptResult result;
                result.status = policy::StatusOfStreamError(reply.stream_error);
                result.body = reply.stream_error;
                outcome = policy::Classify(result, wall);
            } else {
                outcome = policy::Classify(
                    {reply.stalls ? policy::Transport::kTimeout : policy::Transport::kTruncated},
                    wall);
            }
        } else {
            policy::AttemptResult result;
            result.status = reply.status;
            result.body = reply.body;
            result.retry_after = reply.Header("retry-after");
            result.retry_after_ms = reply.Header("retry-after-ms");
            result.should_retry = reply.Header("x-should-retry");
            outcome = policy::Classify(result, wall);
            answered = reply.status >= 200 && reply.status < 300;
        }
    }
    if (reserved) {
        const limits::HeadroomCost cost = limits::CostOf(
            deployment.provider, walk->request.input_tokens, walk->request.max_tokens);
        headroom_.Settle(deployment.index, cost, answered, walk->request.input_tokens,
                         answered ? reply.output_tokens : -1, now);
    }
    const policy::ErrorClass error = outcome.error_class;
    if (cut_by_deadline) {
        health_.Abandon(deployment.index, now);  // a fact about the request, not the deployment
    } else {
        const std::optional<milliseconds> ttfb =
            timed_out ? std::nullopt : std::optional<milliseconds>(duration);
        health_.OnOutcome(deployment.index, now, wall, error, outcome.retry_after, ttfb);
        policy::RetryBudget& budget = health_.Budget(deployment.index);
        policy::RetryBudget* client = walk->request.client_budget;
        if (error == policy::ErrorClass::kNone) {
            budget.OnSuccess();
            if (client != nullptr) client->OnSuccess();
        } else {
            budget.OnFailure();
            if (client != nullptr) client->OnFailure();
        }
    }
    if (answered) {
        GatewayAnswer answer;
        answer.interrupted = error != policy::ErrorClass::kNone;
        answer.served_by = deployment.name;
        Finish(walk, std::move(answer));
        return;
    }
    walk->last_status = timed_out || reply.transport != policy::Transport::kOk
                            ? 0
                            : (reply.cut_mid_stream && !reply.stream_error.empty()
                                   ? policy::StatusOfStreamError(reply.stream_error)
                                   : reply.status);
    walk->last_class = error;
    walk->last_head = std::move(reply.head);
    walk->event = engine::event::Attempted{outcome, started, now};
    Step(walk);
}

void SimGateway::Finish(const std::shared_ptr<Walk>& walk, GatewayAnswer answer) {
    if (walk->queued) {
        lanes_.Dequeue(walk->request.lane, walk->queued_for, *walk->ticket);
        walk->queued = false;
    }
    answer.attempts = walk->attempts;
    walk->done(std::move(answer));
}

}  // namespace switchyard::sim
