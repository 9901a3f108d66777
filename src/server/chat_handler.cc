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
#include "engine/executor.h"
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

// What the engine's walk carries between its steps, besides the engine's own state.
struct Walk {
    const AttemptSetup& setup;
    engine::RequestFacts facts;
    KeySettlement& settlement;
    ClientWatch& client;
    std::vector<core::AttemptNote> notes;
    milliseconds waited{0};            // since the last attempt, for the next attempt's note
    AttemptEnd last;                   // the last failed attempt
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

// The engine's executor acting over sockets: attempts are upstream calls, waits are timers cut
// short by a client that leaves, the fleet's shared state is Redis, and what happens is counted
// in the metrics, the trace and the attempt notes.
class GatewayPorts final : public engine::Ports {
  public:
    GatewayPorts(RequestContext& ctx, Walk& walk) : ctx_(ctx), walk_(walk) {}

    double Uniform() override { return uniform_(ctx_.worker.rng); }
    bool ClientGone() const override { return walk_.client.Gone(); }

    asio::awaitable<engine::AttemptReport> Attempt(const engine::Target& target,
                                                   const routing::PlannedGroup& stage) override {
        const config::Deployment& deployment = *target.deployment;
        if (!walk_.notes.empty()) {
            // Sent because an earlier attempt of this request failed.
            const core::AttemptNote& failed = walk_.notes.back();
            ctx_.Context().metrics.CountRetry(ctx_.worker.index, failed.model_group,
                                              failed.error_class);
        }
        if (ctx_.trace) ctx_.trace->BeginAttempt(deployment, stage, !walk_.notes.empty());
        end_ = co_await RunAttempt(ctx_, walk_.setup, deployment, stage);
        if (ctx_.trace) ctx_.trace->EndAttempt(end_, ctx_.upstream_request_id);
        engine::AttemptReport report;
        report.outcome = end_.outcome;
        report.answered = end_.answered;
        report.cut_by_deadline = end_.cut_by_deadline;
        report.time_to_first_byte = end_.time_to_first_byte;
        report.input_tokens = ctx_.record.input_tokens;
        report.output_tokens = ctx_.record.output_tokens;
        co_return report;
    }

    asio::awaitable<void> Sleep(milliseconds wait, engine::Action::WaitFor wait_for) override {
        const core::Clock& clock = ctx_.Context().clock;
        const Clock::time_point started = clock.Now();
        if (ctx_.trace) ctx_.trace->BeginWait(WaitReason(wait_for), wait);
        asio::steady_timer timer(ctx_.stream.get_executor());
        {
            const TrackedBy<asio::steady_timer> tracked(&walk_.client, timer);
            timer.expires_after(wait);
            // A cancelled wait (the client left) just ends early; the executor notices.
            auto [ec] = co_await timer.async_wait(kTuple);
            (void)ec;
        }
        if (ctx_.trace) ctx_.trace->EndWait();
        walk_.waited += wait;
        // What was waited: a client that left cut the wait short.
        ctx_.Context().metrics.ObserveWait(
            ctx_.worker.index, WaitReason(wait_for),
            std::chrono::duration<double>(clock.Now() - started).count());
    }

    bool SharesState() const override { return ctx_.Context().shared != nullptr; }
    asio::awaitable<std::optional<milliseconds>> ReserveShared(
        const config::Deployment& deployment, std::vector<limits::BucketDemand> demands) override {
        co_return co_await ctx_.Context().shared->ReserveHeadroom(
            ctx_.worker.index, deployment.name, std::move(demands));
    }
    void AdjustShared(const config::Deployment& deployment,
                      std::vector<limits::BucketDemand> demands) override {
        ctx_.Context().shared->AdjustHeadroom(ctx_.worker.index, deployment.name,
                                              std::move(demands));
    }
    asio::awaitable<std::optional<bool>> TakeSharedProbe(
        const config::Deployment& deployment) override {
        const config::Config& config = ctx_.Config();
        co_return co_await ctx_.Context().shared->TakeProbe(ctx_.worker.index, deployment.name,
                                                            config.health.breaker_half_open_probes,
                                                            config.health.breaker_open);
    }
    void ReleaseSharedProbe(const config::Deployment& deployment) override {
        ctx_.Context().shared->ReleaseProbe(ctx_.worker.index, deployment.name);
    }

    void NoHeadroom(const config::Deployment& deployment, milliseconds spacing) override {
        walk_.waited_for = deployment.index;
        walk_.spacing = spacing;
    }
    void Queued(const engine::Action&) override {
        ctx_.Context().metrics.CountHeadroomWait(ctx_.record.lane);
    }

    // After an attempt: the metrics, the alert of a newly disabled deployment and, when it
    // failed, the attempt notes and the failure the client may be told of.
    void Recorded(const config::Deployment& deployment, const routing::PlannedGroup& stage,
                  const engine::AttemptReport& report, bool, bool disabled) override {
        ServerContext& context = ctx_.Context();
        const policy::ErrorClass error = report.outcome.error_class;
        context.metrics.CountAttempt(ctx_.worker.index, deployment.name, policy::Name(error));
        if (report.answered) {
            ctx_.record.cost_usd =
                CostOfTokens(deployment, ctx_.record.input_tokens, ctx_.record.output_tokens);
            if (end_.time_to_first_token) {
                context.metrics.ObserveTimeToFirstToken(
                    ctx_.worker.index, stage.group->name, deployment.name,
                    std::chrono::duration<double>(*end_.time_to_first_token).count());
            }
        }
        if (disabled) {
            context.metrics.CountSpendCapDisable(deployment.name);
            AlertDisabled(ctx_, deployment);
        }
        if (error != policy::ErrorClass::kNone) {
            // Every failed attempt, a stream that failed after its commit point too.
            context.metrics.Failures().Add(
                {context.clock.WallNow(), stage.group->name, deployment.name, end_.status,
                 std::string(policy::Name(error)), ctx_.upstream_request_id});
        }
        if (report.answered) {
            if (stage.depth > 0) context.metrics.CountFallback(stage.depth);
            return;
        }
        walk_.notes.push_back({stage.group->name, deployment.name, end_.status,
                               std::string(policy::Name(error)), ctx_.upstream_request_id,
                               walk_.waited.count()});
        walk_.waited = milliseconds(0);
        walk_.last = std::move(end_);
    }

  private:
    RequestContext& ctx_;
    Walk& walk_;
    std::uniform_real_distribution<double> uniform_{0.0, 1.0};
    AttemptEnd end_;  // the last attempt's, until it is recorded
};

// Executes the engine's actions until the request is answered or the engine stops: returns the
// last action (kDone, kPassThrough or kGiveUp).
asio::awaitable<engine::Action> RunEngine(RequestContext& ctx, Walk& walk,
                                          engine::AttemptState& state) {
    GatewayPorts ports(ctx, walk);
    const engine::Surroundings around{ctx.Config(), ctx.Health(), ctx.Headroom(), ctx.Lanes(),
                                      ctx.Context().clock};
    const engine::Executed executed = co_await engine::Execute(state, around, walk.facts, ports);
    if (executed.client_gone) {
        ctx.error = "client went away before the answer";
        ctx.keep_alive = false;
    }
    co_return executed.last;
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
        const std::string& lane = ctx.Config().limits.lanes[walk.facts.lane].name;
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
    if (walk.facts.outside > 0) {
        error.message +=
            fmt::format(" {} deployment(s) outside the allowed regions ({}) were not tried.",
                        walk.facts.outside, routing::Describe(*walk.facts.residency));
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
                ctx.Lanes().Promise(walk.facts.lane, walk.waited_for, now + minimum, walk.spacing);
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
    engine::RequestFacts facts;
    facts.lane = lane;
    facts.input_estimate = input_estimate;
    facts.max_tokens = request.max_tokens;
    facts.fallbacks = options.fallbacks;
    facts.client_budget = &context.client_budgets.For(ClientCredential(ctx.request));
    Walk walk{setup, std::move(facts), settlement, *client};
    walk.cache = keeping.Cache();
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const std::function<double()> draw = [&] { return uniform(ctx.worker.rng); };
    // Data residency: the header's and the key's regions, and each requested group's, hold for
    // the whole chain.
    walk.facts.residency = options.residency;
    for (const std::string& name : requested) {
        if (const config::ModelGroup* group = config.FindGroup(name)) {
            walk.facts.residency = routing::Narrow(walk.facts.residency, group->residency);
        }
    }
    const std::vector<engine::Stage> chain = engine::PlanStages(
        routing::PlanGroups(config, requested, request.fallbacks, options.fallbacks), ctx.Health(),
        draw, walk.facts.residency, walk.facts.outside);
    if (walk.facts.residency && std::all_of(chain.begin(), chain.end(), [](const engine::Stage& s) {
            return s.deployments.empty();
        })) {
        const Unanswered refusal = core::LocalError{
            core::ErrorKind::kResidencyNotSatisfied,
            fmt::format("No deployment of '{}' or its fallbacks may serve this request: it must "
                        "be served in {} (x-switchyard-residency, the client key's or the model "
                        "group's residency), and all {} deployment(s) of its chain are elsewhere.",
                        core::Printable(request.model), routing::Describe(*walk.facts.residency),
                        walk.facts.outside),
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
