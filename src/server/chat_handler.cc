#include "server/chat_handler.h"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <functional>
#include <limits>
#include <random>
#include <variant>

#include "api/local_reply.h"
#include "api/openai_chat.h"
#include "api/responses.h"
#include "api/translate.h"
#include "api/usage.h"
#include "core/json.h"
#include "core/names.h"
#include "core/sse_parser.h"
#include "core/time_format.h"
#include "engine/decide.h"
#include "engine/request_options.h"
#include "engine/world.h"
#include "limits/lanes.h"
#include "policy/retry_after.h"
#include "policy/spend_cap.h"
#include "providers/upstream_request.h"
#include "routing/fallback_plan.h"
#include "routing/residency.h"
#include "routing/strategy.h"
#include "server/admission.h"
#include "server/attempt.h"
#include "server/client_watch.h"
#include "server/http_io.h"
#include "server/output_check.h"
#include "server/relay.h"
#include "server/stored_answers.h"
#include "server/test_faults.h"
#include "upstream/webhook.h"

namespace switchyard::server {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using Kind = engine::Action::Kind;

// 404 for a missing or unknown model group. It names no other group: the caller may have no key,
// or a key restricted to other groups (GET /v1/models lists what a key may use).
core::LocalError UnknownModel(std::string_view model) {
    std::string message = model.empty() ? std::string("You must provide a model parameter.")
                                        : "The model `" + core::Printable(model) +
                                              "` does not exist or you do not have access to it.";
    return {core::ErrorKind::kModelNotFound,
            message + " GET /v1/models lists the models your key may use.", "model"};
}

// Validates the request's group names (model, models, fallbacks); the first unknown one.
std::optional<std::string> UnknownName(const config::Config& config,
                                       const api::ChatRequest& request) {
    if (config.FindGroup(request.model) == nullptr) return request.model;
    for (const auto& name : request.models) {
        if (config.FindGroup(name) == nullptr) return name;
    }
    if (request.fallbacks) {
        for (const auto& name : *request.fallbacks) {
            if (config.FindGroup(name) == nullptr) return name;
        }
    }
    return std::nullopt;
}

// A 400 when a requested group serves the other endpoint (chat vs embeddings).
std::optional<core::LocalError> WrongMode(const config::Config& config,
                                          const api::ChatRequest& request) {
    const config::GroupMode wanted = request.endpoint == api::Endpoint::kEmbeddings
                                         ? config::GroupMode::kEmbeddings
                                         : config::GroupMode::kChat;
    std::vector<std::string> names = request.models;
    names.push_back(request.model);
    if (request.fallbacks)
        names.insert(names.end(), request.fallbacks->begin(), request.fallbacks->end());
    for (const std::string& name : names) {
        const config::ModelGroup* group = config.FindGroup(name);
        if (group == nullptr || group->mode == wanted) continue;
        return core::LocalError{
            core::ErrorKind::kInvalidRequest,
            wanted == config::GroupMode::kEmbeddings
                ? "The model `" + name + "` is a chat model group; it serves no embeddings."
                : "The model `" + name +
                      "` is an embeddings model group; use POST /v1/embeddings for it.",
            "model"};
    }
    return std::nullopt;
}

std::string_view ClientCredential(const Request& request) {
    if (const auto it = request.find(http::field::authorization); it != request.end()) {
        return it->value();
    }
    if (const auto it = request.find("x-api-key"); it != request.end()) return it->value();
    return {};
}

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
// deployment's health exactly once — with its outcome, or, if the gateway itself failed before
// one was known, as abandoned (its half-open probe slot is freed).
class AdmittedAttempt final {
  public:
    AdmittedAttempt(routing::DeploymentHealth& health, const core::Clock& clock, std::size_t index)
        : health_(health), clock_(clock), index_(index) {
        health_.AddInFlight(index_, 1);
    }
    AdmittedAttempt(const AdmittedAttempt&) = delete;
    AdmittedAttempt& operator=(const AdmittedAttempt&) = delete;
    ~AdmittedAttempt() {
        Ended();
        if (!reported_) health_.Abandon(index_, clock_.Now());
        if (shared_probe_ != nullptr) shared_probe_->ReleaseProbe(worker_, deployment_);
    }

    // It holds one of the fleet's half-open probe slots, freed when it ends.
    void HoldSharedProbe(state::RedisState* shared, unsigned worker, std::string_view deployment) {
        shared_probe_ = shared;
        worker_ = worker;
        deployment_ = deployment;
    }

    // The attempt no longer runs.
    void Ended() {
        if (running_) health_.AddInFlight(index_, -1);
        running_ = false;
    }
    // Its outcome; true when it newly disabled the deployment (a spend cap).
    bool Report(policy::ErrorClass error, std::optional<milliseconds> retry_after,
                std::optional<milliseconds> time_to_first_byte) {
        Ended();
        reported_ = true;
        return health_.OnOutcome(index_, clock_.Now(), clock_.WallNow(), error, retry_after,
                                 time_to_first_byte);
    }

  private:
    routing::DeploymentHealth& health_;
    const core::Clock& clock_;
    std::size_t index_;
    bool running_ = true;
    bool reported_ = false;
    state::RedisState* shared_probe_ = nullptr;
    unsigned worker_ = 0;
    std::string_view deployment_;
};

// Headroom reserved for an attempt: settled with the attempt's outcome, or given back whole if
// the attempt never settles it (it was not sent, or it was cut short by an exception). A
// reservation the fleet's shared buckets made is settled there too.
class HeadroomReservation final {
  public:
    HeadroomReservation(limits::Headroom& headroom, const core::Clock& clock,
                        const config::Deployment& deployment, limits::HeadroomCost cost)
        : headroom_(headroom), clock_(clock), deployment_(deployment), cost_(cost) {}
    HeadroomReservation(const HeadroomReservation&) = delete;
    HeadroomReservation& operator=(const HeadroomReservation&) = delete;
    ~HeadroomReservation() {
        if (!open_) return;
        if (shared_ != nullptr) {
            shared_->AdjustHeadroom(worker_, deployment_.name,
                                    headroom_.CancelDemands(deployment_.index, cost_));
        }
        headroom_.Cancel(deployment_.index, cost_, clock_.Now());
    }

    // The fleet's shared buckets hold it (state.backend: redis).
    void Shared(state::RedisState* shared, unsigned worker) {
        shared_ = shared;
        worker_ = worker;
    }

    void Settle(bool answered, std::int64_t input_tokens, std::int64_t output_tokens) {
        if (!open_) return;
        open_ = false;
        if (shared_ != nullptr) {
            shared_->AdjustHeadroom(worker_, deployment_.name,
                                    headroom_.SettleDemands(deployment_.index, cost_, answered,
                                                            input_tokens, output_tokens));
        }
        headroom_.Settle(deployment_.index, cost_, answered, input_tokens, output_tokens,
                         clock_.Now());
    }

  private:
    limits::Headroom& headroom_;
    const core::Clock& clock_;
    const config::Deployment& deployment_;
    limits::HeadroomCost cost_;
    state::RedisState* shared_ = nullptr;
    unsigned worker_ = 0;
    bool open_ = true;
};

// What the engine's walk carries between its steps, besides the engine's own state.
struct Walk {
    const AttemptSetup& setup;
    policy::RetryBudget& client_budget;
    std::size_t lane = 0;             // index into the config's lanes
    std::int64_t input_estimate = 0;  // input tokens estimated from the body
    bool fallbacks = true;
    KeySettlement& settlement;
    ClientWatch& client;
    std::vector<core::AttemptNote> notes;
    milliseconds waited{0};            // since the last attempt, for the next attempt's note
    AttemptEnd last;                   // the last failed attempt
    routing::Regions residency;        // where it may be served (docs/resilience.md#data-residency)
    int outside = 0;                   // deployments of its chain left out for their region
    const CacheSlot* cache = nullptr;  // where its answer is cached (docs/answers.md)
    // The deployment it last found without headroom, and how far apart that one can take
    // requests like it (0: unknown).
    std::size_t waited_for = 0;
    milliseconds spacing{0};
};

// A spend cap disabled `deployment`: an error-level line on stderr and, when configured, a POST to
// the alert webhook. Both off the request's way.
void AlertDisabled(RequestContext& ctx, const config::Deployment& deployment) {
    const auto until = policy::SpendCapResetAfter(ctx.Context().clock.WallNow());
    const std::string event = boost::json::serialize(
        boost::json::object{{"level", "error"},
                            {"event", "deployment_disabled"},
                            {"reason", "spend_cap"},
                            {"deployment", deployment.name},
                            {"model_group", ctx.model_group},
                            {"disabled_until", core::Rfc3339(until)},
                            {"upstream_request_id", ctx.upstream_request_id}});
    fmt::print(stderr, "{}\n", event);
    const std::string& webhook = ctx.Config().alerts.webhook_url;
    if (!webhook.empty()) {
        upstream::PostWebhook(ctx.stream.get_executor(), ctx.Context().tls, webhook, event);
    }
}

// Reserves `cost` on `deployment` for the walk's lane: in the fleet's shared buckets when there
// are any (`shared` is then set), else (or when Redis does not answer in time) in this replica's.
// Returns 0 when reserved, else how long until it would fit.
asio::awaitable<milliseconds> ReserveHeadroom(RequestContext& ctx, const Walk& walk,
                                              const config::Deployment& deployment,
                                              limits::HeadroomCost cost, Clock::time_point now,
                                              bool& shared) {
    shared = false;
    const limits::Lanes::Grant grant = ctx.Lanes().Share(walk.lane, now);
    limits::Headroom& headroom = ctx.Headroom();
    state::RedisState* fleet = ctx.Context().shared;
    if (fleet != nullptr) {
        std::vector<limits::BucketDemand> demands;
        const milliseconds local = headroom.Demands(deployment.index, cost, grant.share, now,
                                                    walk.lane, grant.ramp, demands);
        if (local > milliseconds(0)) co_return local;
        if (!demands.empty()) {
            const std::optional<milliseconds> wait = co_await fleet->ReserveHeadroom(
                ctx.worker.index, deployment.name, std::move(demands));
            if (wait) {
                if (*wait > milliseconds(0)) co_return *wait;
                headroom.Reserved(deployment.index, cost, now, walk.lane, grant.ramp);
                shared = true;
                co_return milliseconds(0);
            }
        }
    }
    co_return headroom.TryReserve(deployment.index, cost, grant.share, now, walk.lane, grant.ramp);
}

// The metrics' name for why the engine waits.
std::string_view WaitReason(engine::Action::WaitFor wait_for) {
    switch (wait_for) {
        case engine::Action::WaitFor::kBackoff:
            return "backoff";
        case engine::Action::WaitFor::kRateLimit:
            return "retry_after";
        case engine::Action::WaitFor::kHeadroom:
            return "headroom";
    }
    return "backoff";
}

asio::awaitable<void> Sleep(RequestContext& ctx, milliseconds delay, ClientWatch& client) {
    asio::steady_timer timer(ctx.stream.get_executor());
    const TrackedBy<asio::steady_timer> tracked(&client, timer);
    timer.expires_after(delay);
    // A cancelled wait (the client left) just ends early; the engine loop notices.
    auto [ec] = co_await timer.async_wait(kTuple);
    (void)ec;
}

// After an attempt: its outcome goes to the deployment's health, headroom and retry budget, the
// client's retry budget, the metrics and, when it failed, the attempt notes.
void RecordAttempt(RequestContext& ctx, Walk& walk, const config::Deployment& deployment,
                   const routing::PlannedGroup& stage, AdmittedAttempt& admitted,
                   HeadroomReservation* headroom, const AttemptEnd& end) {
    ServerContext& context = ctx.Context();
    routing::DeploymentHealth& health = ctx.Health();
    if (headroom != nullptr) {
        headroom->Settle(end.answered, ctx.record.input_tokens, ctx.record.output_tokens);
    }
    const policy::ErrorClass error = end.outcome.error_class;
    context.metrics.CountAttempt(ctx.worker.index, deployment.name, policy::Name(error));
    if (end.answered) {
        ctx.record.cost_usd =
            CostOfTokens(deployment, ctx.record.input_tokens, ctx.record.output_tokens);
        if (end.time_to_first_token) {
            context.metrics.ObserveTimeToFirstToken(
                ctx.worker.index, stage.group->name, deployment.name,
                std::chrono::duration<double>(*end.time_to_first_token).count());
        }
    }
    // An attempt the request itself cut short — its deadline, or a client that left — or one the
    // gateway's own limits stopped says nothing about the deployment: it is abandoned
    // (AdmittedAttempt), not reported.
    if (!end.cut_by_deadline && !walk.client.Gone() && error != policy::ErrorClass::kLocal) {
        // A stream that failed after its commit point is a failure of the deployment all the same.
        if (admitted.Report(error, end.outcome.retry_after, end.time_to_first_byte)) {
            context.metrics.CountSpendCapDisable(deployment.name);
            AlertDisabled(ctx, deployment);
        }
        policy::RetryBudget& deployment_budget = health.Budget(deployment.index);
        if (error == policy::ErrorClass::kNone) {
            walk.client_budget.OnSuccess();
            deployment_budget.OnSuccess();
        } else {
            walk.client_budget.OnFailure();
            deployment_budget.OnFailure();
        }
    }
    if (error != policy::ErrorClass::kNone) {
        // Every failed attempt, a stream that failed after its commit point too.
        context.metrics.Failures().Add({context.clock.WallNow(), stage.group->name, deployment.name,
                                        end.status, std::string(policy::Name(error)),
                                        ctx.upstream_request_id});
    }
    if (end.answered) {
        if (stage.depth > 0) context.metrics.CountFallback(stage.depth);
        return;
    }
    walk.notes.push_back({stage.group->name, deployment.name, end.status,
                          std::string(policy::Name(error)), ctx.upstream_request_id,
                          walk.waited.count()});
    walk.waited = milliseconds(0);
}

// Executes the engine's actions until the request is answered or the engine stops: returns the
// last action (kDone, kPassThrough or kGiveUp). The engine decides; this only acts.
asio::awaitable<engine::Action> RunEngine(RequestContext& ctx, Walk& walk,
                                          engine::AttemptState& state) {
    ServerContext& context = ctx.Context();
    const config::Config& config = ctx.Config();
    routing::DeploymentHealth& health = ctx.Health();
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const std::function<double()> draw = [&] { return uniform(ctx.worker.rng); };
    std::vector<engine::TargetHealth> health_now(config.deployment_count);
    QueueSlot queue(ctx.Lanes(), walk.lane);
    engine::Event event = engine::event::Start{};
    engine::Action client_gone;
    client_gone.kind = Kind::kDone;  // nobody to answer: the request ends here
    for (;;) {
        if (walk.client.Gone()) {
            ctx.error = "client went away before the answer";
            ctx.keep_alive = false;
            co_return client_gone;
        }
        const Clock::time_point now = context.clock.Now();
        engine::ReadTargetHealth(state, health, now, health_now);
        const engine::World world{health_now, walk.client_budget.CanRetry(), now, draw()};
        const engine::Action action = engine::Decide(state, std::move(event), world);
        if (action.kind != Kind::kWait || action.wait_for != engine::Action::WaitFor::kHeadroom) {
            queue.Leave();  // no longer waiting for headroom: other lanes need not yield
        }
        switch (action.kind) {
            case Kind::kSend: {
                const engine::Target& target = state.targets[action.target];
                const config::Deployment& deployment = *target.deployment;
                const routing::PlannedGroup stage = state.stages[target.stage].group;
                std::optional<HeadroomReservation> reserved;
                if (config.limits.self_throttle) {
                    // Send only where the provider's limits leave room for this lane.
                    const limits::HeadroomCost cost = limits::CostOf(
                        deployment.provider, walk.input_estimate, walk.setup.request.max_tokens);
                    bool shared = false;
                    const milliseconds wait =
                        co_await ReserveHeadroom(ctx, walk, deployment, cost, now, shared);
                    if (wait > milliseconds(0)) {
                        // Predictive shedding: the requests before it for this deployment go
                        // first, each `spacing` apart; past its deadline the engine sheds it now.
                        const double ramp = ctx.Lanes().Share(walk.lane, now).ramp;
                        walk.waited_for = deployment.index;
                        walk.spacing =
                            ctx.Headroom().Spacing(deployment.index, cost, now, walk.lane, ramp);
                        event = engine::event::NoHeadroom{limits::ExpectedWait(
                            wait, queue.Ahead(deployment.index), walk.spacing)};
                        break;
                    }
                    reserved.emplace(ctx.Headroom(), context.clock, deployment, cost);
                    if (shared) reserved->Shared(context.shared, ctx.worker.index);
                }
                const routing::AttemptAdmission admission =
                    health.AdmitAttempt(deployment.index, now);
                if (admission == routing::AttemptAdmission::kRefused) {
                    // Another request took the last half-open probe slot (the reservation goes
                    // back as `reserved` ends).
                    event = engine::event::NotAdmitted{};
                    break;
                }
                AdmittedAttempt admitted(health, context.clock, deployment.index);
                if (admission == routing::AttemptAdmission::kProbe && context.shared != nullptr) {
                    // A probe of a half-open breaker: the fleet's probe slots are shared.
                    const std::optional<bool> slot = co_await context.shared->TakeProbe(
                        ctx.worker.index, deployment.name, config.health.breaker_half_open_probes,
                        config.health.breaker_open);
                    if (slot && !*slot) {
                        event = engine::event::NotAdmitted{};  // another replica is probing
                        break;
                    }
                    if (slot) {
                        admitted.HoldSharedProbe(context.shared, ctx.worker.index, deployment.name);
                    }
                }
                if (!walk.notes.empty()) {
                    // Sent because an earlier attempt of this request failed.
                    const core::AttemptNote& failed = walk.notes.back();
                    context.metrics.CountRetry(ctx.worker.index, failed.model_group,
                                               failed.error_class);
                }
                if (ctx.trace) ctx.trace->BeginAttempt(deployment, stage, !walk.notes.empty());
                AttemptEnd end = co_await RunAttempt(ctx, walk.setup, deployment, stage);
                admitted.Ended();
                if (ctx.trace) ctx.trace->EndAttempt(end, ctx.upstream_request_id);
                // Cut short for a client that left before any answer: nothing to record.
                if (walk.client.Gone() && !end.answered) continue;
                RecordAttempt(ctx, walk, deployment, stage, admitted,
                              reserved ? &*reserved : nullptr, end);
                if (end.answered) {
                    engine::Action done;
                    done.kind = Kind::kDone;
                    co_return done;
                }
                event = engine::event::Attempted{end.outcome, now, context.clock.Now()};
                walk.last = std::move(end);
                break;
            }
            case Kind::kWait:
                if (action.wait_for == engine::Action::WaitFor::kHeadroom) {
                    if (!queue.Enter(state.targets[action.target].deployment->index)) {
                        event = engine::event::QueueFull{};
                        break;
                    }
                    context.metrics.CountHeadroomWait(ctx.record.lane);
                }
                if (ctx.trace) ctx.trace->BeginWait(WaitReason(action.wait_for), action.wait);
                co_await Sleep(ctx, action.wait, walk.client);
                if (ctx.trace) ctx.trace->EndWait();
                walk.waited += action.wait;
                // What was waited: a client that left cut the wait short.
                context.metrics.ObserveWait(
                    ctx.worker.index, WaitReason(action.wait_for),
                    std::chrono::duration<double>(context.clock.Now() - now).count());
                event = engine::event::Waited{};
                break;
            case Kind::kReplaceChain: {
                // A semantic fallback: the same prompt would fail the same way anywhere else.
                const routing::PlannedGroup stage = state.stages[state.stage].group;
                const std::vector<routing::PlannedGroup> semantic =
                    walk.fallbacks ? routing::SemanticFallbacks(config, *stage.group,
                                                                action.semantic, stage.depth + 1)
                                   : std::vector<routing::PlannedGroup>{};
                std::vector<engine::Stage> stages =
                    engine::PlanStages(semantic, health, draw, walk.residency, walk.outside);
                // A fallback with nothing in an allowed region is no fallback: with none left,
                // the provider's answer goes to the client.
                std::erase_if(stages, [](const engine::Stage& s) { return s.deployments.empty(); });
                event = engine::event::ChainReplaced{std::move(stages)};
                break;
            }
            case Kind::kDone:
            case Kind::kPassThrough:
            case Kind::kGiveUp:
                co_return action;
        }
    }
}

// The static degradation, rendered for an Anthropic client.
std::string StaticInAnthropic(const std::string& openai, bool stream, std::int64_t created) {
    if (!stream) {
        // Switchyard's own completion: plain text, which Anthropic's API always expresses.
        return std::get<std::string>(
            TranslateBody(openai, 200, api::Wire::kOpenAi, api::Wire::kAnthropic, created));
    }
    api::OpenAiToAnthropicStream translate;
    core::SseParser sse;
    core::SseEvent event;
    std::string out;
    sse.Feed(openai);
    while (sse.Next(event)) translate.Feed(event.name, event.data, out);
    return out;
}

// The static degradation, rendered for a Responses client.
std::string StaticInResponses(const std::string& openai, bool stream, std::int64_t created,
                              const boost::json::object& request) {
    if (!stream) {
        // Switchyard's own completion: always a JSON object.
        boost::system::error_code ec;
        const boost::json::value completion = core::ParseJson(openai, ec);
        return boost::json::serialize(
            api::ChatAnswerToResponse(completion.as_object(), request, created));
    }
    api::ChatToResponsesStream translate(request, created);
    core::SseParser sse;
    core::SseEvent event;
    std::string out;
    sse.Feed(openai);
    while (sse.Next(event)) translate.Feed(event.name, event.data, out);
    return out;
}

// The answer when the engine gave up: a static degradation, or an error that lists every attempt
// with the status of the last upstream answer (502/504 when there was none), told not to retry
// (x-should-retry: false: the gateway already did) and when some deployment can serve again.
core::LocalError GiveUpError(RequestContext& ctx, const Walk& walk, const engine::Action& give_up) {
    const AttemptEnd& last = walk.last;
    // The kind names the last failure when it had no HTTP answer (unreachable, timeout).
    core::LocalError error{last.status == 0 && !walk.notes.empty()
                               ? last.error.kind
                               : core::ErrorKind::kAllAttemptsFailed};
    error.attempts = walk.notes;
    if (walk.notes.empty() && give_up.headroom_short_for) {
        // Self-throttled: no deployment had headroom for this lane within the deadline, or the
        // lane's queue was full.
        error.kind = core::ErrorKind::kHeadroomExhausted;
        const std::string& lane = ctx.Config().limits.lanes[walk.lane].name;
        error.message = fmt::format(
            "No deployment of the requested model has rate-limit headroom for the '{}' lane "
            "within the request's deadline (or its queue is full).",
            lane);
        ctx.Context().metrics.CountShed(lane);
    } else if (walk.notes.empty()) {
        // Nothing was tried: every deployment is sick, or rate-limited past what this request
        // may wait.
        error.message =
            give_up.retry_after
                ? fmt::format(
                      "Every deployment of the requested model is {}; the first can serve again "
                      "in {:.3f} s.",
                      give_up.rate_limited ? "rate-limited"
                                           : "unavailable (cooling down, circuit open or disabled)",
                      static_cast<double>(give_up.retry_after->count()) / 1000.0)
                : std::string("No deployment of the requested model can serve the request now.");
    } else {
        const core::AttemptNote& final_note = walk.notes.back();
        std::string detail = last.error.message;
        if (last.status != 0)
            detail = fmt::format("HTTP {} ({})", last.status, final_note.error_class);
        error.message = fmt::format("All {} attempt(s) failed. Last: {}: {}", walk.notes.size(),
                                    final_note.deployment, detail);
    }
    if (walk.outside > 0) {
        error.message +=
            fmt::format(" {} deployment(s) outside the allowed regions ({}) were not tried.",
                        walk.outside, routing::Describe(*walk.residency));
    }
    error.status =
        engine::GiveUpStatus(give_up, !walk.notes.empty(), last.status, last.outcome.error_class);
    if (give_up.retry_after) {
        // Many clients may be refused together: never back before capacity exists, and spread
        // after it (docs/resilience.md#headroom-and-lanes). A shed request is promised the next
        // free place after those shed before it, and spread within one spacing.
        milliseconds minimum = *give_up.retry_after;
        milliseconds spread = policy::DefaultSpread(minimum);
        if (walk.notes.empty() && give_up.headroom_short_for && walk.spacing > milliseconds(0)) {
            const Clock::time_point now = ctx.Context().clock.Now();
            const Clock::time_point promised =
                ctx.Lanes().Promise(walk.lane, walk.waited_for, now + minimum, walk.spacing);
            minimum = std::chrono::ceil<milliseconds>(promised - now);
            spread = walk.spacing;
        }
        std::uniform_real_distribution<double> uniform(0.0, 1.0);
        AddRetryAfter(ctx, policy::SpreadHint(minimum, spread, uniform(ctx.worker.rng)));
    }
    ctx.reply_headers.emplace_back("x-should-retry", "false");
    return error;
}

// How a request that no attempt answered ends.
using Unanswered = std::variant<core::LocalError, engine::Action>;

// The one place that writes the answer of a request no attempt answered: a refusal before any
// attempt, the provider's answer to a client error passed through, or the engine's give-up (an
// error or the static degradation).
asio::awaitable<void> WriteUnanswered(RequestContext& ctx, Walk* walk,
                                      const Unanswered& unanswered) {
    if (auto* refusal = std::get_if<core::LocalError>(&unanswered)) {
        co_await WriteLocalError(ctx, *refusal);
        co_return;
    }
    const engine::Action& action = std::get<engine::Action>(unanswered);
    if (action.kind == Kind::kPassThrough) {
        // The request itself is wrong: the client gets the provider's answer unchanged.
        AttemptEnd& last = walk->last;
        if (last.header) {
            co_await WriteUpstreamAnswer(ctx, *last.header, last.body, last.upstream);
        } else {
            // Or the gateway's own limit stopped it: the client may come back soon.
            if (last.outcome.retry_after) AddRetryAfter(ctx, *last.outcome.retry_after);
            co_await WriteLocalError(ctx, last.error);
        }
        co_return;
    }
    // The whole chain failed: a cached answer to the same request comes before the degradation.
    if (walk->cache != nullptr) {
        const bool served = co_await ServeCached(ctx, *walk->cache, "stale");
        if (served) co_return;
    }
    const config::DegradationConfig& degradation = ctx.Config().degradation;
    const bool stream = walk->setup.request.stream;
    if (degradation.mode == config::DegradationConfig::Mode::kStatic) {
        if (ctx.capture != nullptr) ctx.capture->transient = true;  // a stand-in, not the answer
        const std::int64_t created = std::chrono::duration_cast<std::chrono::seconds>(
                                         ctx.Context().clock.WallNow().time_since_epoch())
                                         .count();
        std::string body = api::RenderOpenAiStaticCompletion(degradation.content, created, stream);
        if (ctx.wire == api::Wire::kAnthropic) body = StaticInAnthropic(body, stream, created);
        if (ctx.wire == api::Wire::kResponses) {
            body = StaticInResponses(body, stream, created, walk->setup.request.original);
        }
        ctx.error = "degraded: every target failed";
        ctx.deployment.clear();
        ctx.region = {};
        ctx.model = "switchyard-degraded";
        Response response{http::status::ok, 11};
        response.set(http::field::content_type,
                     stream ? "text/event-stream; charset=utf-8" : "application/json");
        SetServedHeaders(ctx, response);
        response.set("x-switchyard-degraded", "true");
        response.body() = std::move(body);
        co_await WriteResponse(ctx, response);
        co_return;
    }
    const core::LocalError error = GiveUpError(ctx, *walk, action);
    if (ctx.Context().give_ups != nullptr) {
        // A client that retries this on its own is known when it comes back (Serve).
        ctx.Context().give_ups->Note(
            limits::RecentGiveUps::Fingerprint(ClientCredential(ctx.request), ctx.path,
                                               walk->setup.client_body),
            ctx.Context().clock.Now());
    }
    Response response{static_cast<http::status>(error.status), 11};
    api::LocalReply reply = RenderLocalError(ctx, error);
    ctx.error = error.message;
    response.set(http::field::content_type, "application/json");
    for (const auto& [name, value] : ctx.reply_headers) response.set(name, value);
    if (!walk->notes.empty()) SetServedHeaders(ctx, response);
    response.body() = std::move(reply.body);
    co_await WriteResponse(ctx, response);
}

// Both front APIs share the engine below.
asio::awaitable<void> Serve(RequestContext& ctx);

}  // namespace

// Plain functions returning Serve's coroutine: no frame of their own on the request path.
asio::awaitable<void> ServeChat(RequestContext& ctx) {
    ctx.record.route = "chat";
    return Serve(ctx);
}

asio::awaitable<void> ServeMessages(RequestContext& ctx) {
    ctx.record.route = "messages";
    ctx.wire = api::Wire::kAnthropic;
    return Serve(ctx);
}

asio::awaitable<void> ServeResponses(RequestContext& ctx) {
    ctx.record.route = "responses";
    ctx.wire = api::Wire::kResponses;
    return Serve(ctx);
}

asio::awaitable<void> ServeEmbeddings(RequestContext& ctx) {
    ctx.record.route = "embeddings";
    ctx.endpoint = api::Endpoint::kEmbeddings;
    return Serve(ctx);
}

namespace {

asio::awaitable<void> Serve(RequestContext& ctx) {
    ServerContext& context = ctx.Context();
    const config::Config& config = ctx.Config();
    ctx.record.bytes_in = ctx.request.body().size();
    // Owned here for the whole request: the parsed request may keep a view of it.
    const std::string client_body = std::move(ctx.request.body());
    auto parsed = ctx.wire == api::Wire::kAnthropic   ? api::ParseAnthropicMessages(client_body)
                  : ctx.wire == api::Wire::kResponses ? api::ParseOpenAiResponses(client_body)
                  : ctx.endpoint == api::Endpoint::kEmbeddings
                      ? api::ParseOpenAiEmbeddings(client_body)
                      : api::ParseOpenAiChat(client_body);
    if (auto* error = std::get_if<core::LocalError>(&parsed)) {
        const Unanswered refusal =
            error->kind == core::ErrorKind::kModelNotFound ? UnknownModel("") : *error;
        co_await WriteUnanswered(ctx, nullptr, refusal);
        co_return;
    }
    const api::ChatRequest& request = std::get<api::ChatRequest>(parsed);
    ctx.record.stream = request.stream;
    if (const auto unknown = UnknownName(config, request)) {
        const Unanswered refusal = UnknownModel(*unknown);
        co_await WriteUnanswered(ctx, nullptr, refusal);
        co_return;
    }
    if (const auto other = WrongMode(config, request)) {
        const Unanswered refusal = *other;
        co_await WriteUnanswered(ctx, nullptr, refusal);
        co_return;
    }
    const std::vector<std::string> requested =
        request.models.empty() ? std::vector<std::string>{request.model} : request.models;

    // Who is asking, which groups it may use, its RPM, TPM and monthly budget.
    const std::int64_t input_estimate = api::EstimateInputTokens(client_body);
    KeySettlement settlement(ctx);
    std::size_t lane = 0;
    // Saturating: a max_tokens near 2^63 must not wrap the estimate into a negative count.
    const std::int64_t tokens =
        request.max_tokens > std::numeric_limits<std::int64_t>::max() - input_estimate
            ? std::numeric_limits<std::int64_t>::max()
            : input_estimate + request.max_tokens;
    std::optional<core::LocalError> refused =
        co_await Admit(ctx, request, requested, tokens, settlement, lane);
    if (refused) {
        const Unanswered refusal = std::move(*refused);
        co_await WriteUnanswered(ctx, nullptr, refusal);
        co_return;
    }

    ThrowIfTestFault(ctx, "before-answer");
    const engine::HeaderLookup header =
        [&ctx](std::string_view name) -> std::optional<std::string_view> {
        const auto it = ctx.request.find(name);
        if (it == ctx.request.end()) return std::nullopt;
        return std::string_view(it->value());
    };
    if (const auto [first, last] = ctx.request.equal_range("x-switchyard-residency");
        first != last && std::next(first) != last) {
        // Two constraints where one is read would let the looser win: refused.
        const Unanswered refusal = core::LocalError{
            core::ErrorKind::kInvalidRequest,
            "Send one x-switchyard-residency header (regions separated by commas); this request "
            "has several.",
            "x-switchyard-residency"};
        co_await WriteUnanswered(ctx, nullptr, refusal);
        co_return;
    }
    auto read = engine::ReadRequestOptions(config, header,
                                           settlement.key ? &settlement.key->Policy() : nullptr,
                                           request.stream, request.max_tokens);
    if (auto* invalid = std::get_if<core::LocalError>(&read)) {
        const Unanswered refusal = std::move(*invalid);
        co_await WriteUnanswered(ctx, nullptr, refusal);
        co_return;
    }
    engine::RequestOptions& options = std::get<engine::RequestOptions>(read);
    if (options.client_retry_count == 0 && context.give_ups != nullptr &&
        !context.give_ups->Empty() &&
        context.give_ups->Recent(limits::RecentGiveUps::Fingerprint(ClientCredential(ctx.request),
                                                                    ctx.path, client_body),
                                 context.clock.Now())) {
        // The same request as one just given up on, from the same client: its retry, though it
        // says nothing (the Vercel AI SDK's). Served as one, so retries above never multiply.
        options.policy.retries = false;
        ctx.record.client_repeat = true;
        context.metrics.CountClientRepeat();
    }
    if (options.client_retry_count > 0) {
        // A client SDK retrying on top of the gateway: retries in two layers multiply load.
        ctx.record.client_retry_count = options.client_retry_count;
        context.metrics.CountClientRetry();
    }
    const Clock::time_point deadline = ctx.start + options.deadline;  // from the request's arrival

    // Kept answers (docs/answers.md): an idempotency key runs its request at most once; a model
    // group's cache answers exact repeats (serve: always) or a failed chain (serve: on_error).
    auto idempotency_key = ReadIdempotencyKey(ctx.request);
    if (auto* invalid = std::get_if<core::LocalError>(&idempotency_key)) {
        const Unanswered refusal = std::move(*invalid);
        co_await WriteUnanswered(ctx, nullptr, refusal);
        co_return;
    }
    const std::string* key = std::get_if<std::string>(&idempotency_key);
    const config::ModelGroup* first_group = config.FindGroup(requested.front());
    // Whose answers these are: only worked out (a SHA-256 of the credential) when something is
    // kept — not on the path of every request.
    const std::string scope =
        key != nullptr || (first_group != nullptr && first_group->cache)
            ? ClientScope(ctx, settlement.key ? &settlement.key->Policy() : nullptr)
            : std::string();
    // A kept answer was served within the regions its request allowed: only a request with the
    // same constraint may get it, whoever asks.
    const std::string regions =
        options.residency ? routing::Describe(*options.residency) : std::string();
    std::unique_ptr<IdempotencyClaim> claim;
    if (key != nullptr) {
        claim = co_await ClaimIdempotencyKey(ctx, *key, scope, regions, client_body, deadline);
        if (claim == nullptr) co_return;  // answered from the key
        ctx.detached = true;  // its retry will want the answer even if this client leaves
    }
    AnswerKeeping keeping(ctx);
    keeping.Start(std::move(claim), first_group != nullptr ? CacheSlotOf(ctx, *first_group, scope,
                                                                         regions, client_body)
                                                           : std::nullopt);
    if (const CacheSlot* cache = keeping.Cache();
        cache != nullptr && cache->config->serve == config::CacheConfig::Serve::kAlways) {
        const bool hit = co_await ServeCached(ctx, *cache, "hit");
        if (hit) co_return;
    }

    // Structured output is checked whichever deployment answers (docs/answers.md).
    const std::optional<OutputCheck> check = OutputCheckOf(ctx, request, client_body, first_group);

    const ClientWatchScope client(ClientWatch::Start(ctx));
    // A long Responses request is not assembled from a stream: its answer has its own shape.
    const bool stream_upstream = options.stream_upstream && request.wire != api::Wire::kResponses;
    const AttemptSetup setup{request,
                             client_body,
                             deadline,
                             options.timeouts,
                             options.background,
                             stream_upstream,
                             &*client,
                             check ? &*check : nullptr};
    Walk walk{setup,
              context.client_budgets.For(ClientCredential(ctx.request)),
              lane,
              input_estimate,
              options.fallbacks,
              settlement,
              *client};
    walk.cache = keeping.Cache();
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const std::function<double()> draw = [&] { return uniform(ctx.worker.rng); };
    // Data residency: the header's and the key's regions, and each requested group's, hold for
    // the whole chain.
    walk.residency = options.residency;
    for (const std::string& name : requested) {
        if (const config::ModelGroup* group = config.FindGroup(name)) {
            walk.residency = routing::Narrow(walk.residency, group->residency);
        }
    }
    const std::vector<engine::Stage> chain = engine::PlanStages(
        routing::PlanGroups(config, requested, request.fallbacks, options.fallbacks), ctx.Health(),
        draw, walk.residency, walk.outside);
    if (walk.residency && std::all_of(chain.begin(), chain.end(), [](const engine::Stage& s) {
            return s.deployments.empty();
        })) {
        const Unanswered refusal = core::LocalError{
            core::ErrorKind::kResidencyNotSatisfied,
            fmt::format("No deployment of '{}' or its fallbacks may serve this request: it must "
                        "be served in {} (x-switchyard-residency, the client key's or the model "
                        "group's residency), and all {} deployment(s) of its chain are elsewhere.",
                        core::Printable(request.model), routing::Describe(*walk.residency),
                        walk.outside),
            ctx.request.find("x-switchyard-residency") != ctx.request.end()
                ? std::string("x-switchyard-residency")
                : std::string()};
        co_await WriteUnanswered(ctx, nullptr, refusal);
        co_return;
    }
    engine::AttemptState state(options.policy, chain, deadline);
    context.metrics.CountEngineRequest();
    ctx.trace = RequestTrace::Start(ctx, request.model);
    const engine::Action end = co_await RunEngine(ctx, walk, state);
    if (end.kind == Kind::kDone) co_return;
    const Unanswered unanswered = end;
    co_await WriteUnanswered(ctx, &walk, unanswered);
}

}  // namespace

}  // namespace switchyard::server
