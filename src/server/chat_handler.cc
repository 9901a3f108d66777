#include "server/chat_handler.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>
#include <charconv>
#include <functional>
#include <random>

#include "api/local_reply.h"
#include "api/openai_chat.h"
#include "api/translate.h"
#include "api/usage.h"
#include "core/sse_parser.h"
#include "core/time_format.h"
#include "policy/backoff.h"
#include "policy/classify.h"
#include "policy/spend_cap.h"
#include "providers/upstream_request.h"
#include "routing/fallback_plan.h"
#include "routing/strategy.h"
#include "server/admin_handlers.h"
#include "server/http_io.h"
#include "server/relay.h"
#include "upstream/upstream_call.h"
#include "upstream/webhook.h"

namespace switchyard::server {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::size_t kMaxUpstreamBody = 64 * 1024 * 1024;
constexpr std::size_t kMaxUpstreamErrorBody = 1024 * 1024;
constexpr milliseconds kMaxDeadlineOverride{10 * 60 * 1000};

// 404 for a missing or unknown model group, listing the groups that exist.
core::LocalError UnknownModel(const config::Config& config, std::string_view model) {
    std::string names;
    for (const auto& group : config.models) {
        if (!names.empty()) names += ", ";
        names += group.name;
    }
    std::string message =
        model.empty() ? std::string("You must provide a model parameter.")
                      : "The model `" + std::string(model) + "` does not exist on this gateway.";
    return {core::ErrorKind::kModelNotFound, message + " Available models: " + names + ".",
            "model"};
}

std::optional<std::string_view> HeaderValue(const upstream::ResponseHeader& header,
                                            std::string_view name) {
    const auto it = header.find(name);
    if (it == header.end()) return std::nullopt;
    return std::string_view(it->value());
}

policy::Transport TransportOf(upstream::Failure failure) {
    switch (failure) {
        case upstream::Failure::kNone:
            return policy::Transport::kOk;
        case upstream::Failure::kConnect:
            return policy::Transport::kConnect;
        case upstream::Failure::kTls:
            return policy::Transport::kTls;
        case upstream::Failure::kReset:
            return policy::Transport::kReset;
        case upstream::Failure::kTimeout:
            return policy::Transport::kTimeout;
        case upstream::Failure::kProtocol:
            return policy::Transport::kProtocol;
    }
    return policy::Transport::kReset;
}

// How one attempt ended.
struct AttemptEnd {
    bool answered = false;  // a response went downstream: success, or a committed stream
    policy::Outcome outcome;
    unsigned status = 0;  // 0: no HTTP answer
    std::optional<upstream::ResponseHeader> header;
    std::string body;            // an upstream error body
    core::LocalError transport;  // what went wrong when there was no HTTP answer
    std::optional<milliseconds> time_to_first_byte;
};

// The request's journey through the fallback chain.
struct Journey {
    const api::ChatRequest& request;
    const std::string& client_body;
    Clock::time_point deadline;
    config::Timeouts timeouts;     // the config's, with the request's overrides
    bool background = false;       // stream mode
    bool stream_upstream = false;  // a JSON request streamed upstream and assembled
    policy::RetryBudget& client_budget;
    std::size_t lane = 0;             // index into the config's lanes
    std::int64_t input_estimate = 0;  // input tokens estimated from the body
    std::vector<core::AttemptNote> notes;
    milliseconds next_wait{0};  // waited before the next attempt, for its note
    // Set when a group was left because no deployment had headroom in time (or the lane's queue
    // was full): how long until one would have.
    std::optional<milliseconds> headroom_short_for;
};

// A place in a lane's queue, given back when the request stops waiting (on every path).
class QueueSlot final {
  public:
    QueueSlot(limits::Lanes& lanes, std::size_t lane) : lanes_(lanes), lane_(lane) {}
    QueueSlot(const QueueSlot&) = delete;
    QueueSlot& operator=(const QueueSlot&) = delete;
    ~QueueSlot() { Leave(); }

    bool Held() const { return held_; }
    bool Enter() { return held_ = held_ || lanes_.Enqueue(lane_); }
    void Leave() {
        if (held_) lanes_.Dequeue(lane_);
        held_ = false;
    }

  private:
    limits::Lanes& lanes_;
    std::size_t lane_;
    bool held_ = false;
};

// Settles a client key's admission once the request is answered, on every path: the reported
// tokens replace the estimate, and what the serving deployment charges is added to the key's
// monthly spend.
struct KeySettlement {
    RequestContext& ctx;
    std::shared_ptr<limits::ClientKeyState> key;
    limits::KeyAdmission admission;
    const config::Deployment* served_by = nullptr;

    KeySettlement(RequestContext& c) : ctx(c) {}
    KeySettlement(const KeySettlement&) = delete;
    KeySettlement& operator=(const KeySettlement&) = delete;
    ~KeySettlement() {
        if (!key) return;
        const std::int64_t in = ctx.record.input_tokens;
        const std::int64_t out = ctx.record.output_tokens;
        double cost = 0;
        if (served_by != nullptr) {
            cost = (static_cast<double>(std::max<std::int64_t>(in, 0)) * served_by->input_price +
                    static_cast<double>(std::max<std::int64_t>(out, 0)) * served_by->output_price) /
                   1e6;
        }
        const std::int64_t tokens = in >= 0 && out >= 0 ? in + out : -1;
        const core::Clock& clock = ctx.Context().clock;
        key->Settle(admission, tokens, cost, clock.Now(), clock.WallNow());
    }
};

// One attempt: build the request for `deployment`, send it, and either answer the client (success)
// or read the failure for the classifier. Updates the served-by fields of `ctx` as it goes.
asio::awaitable<void> RunAttempt(RequestContext& ctx, Journey& journey,
                                 const config::Deployment& deployment,
                                 const routing::PlannedGroup& stage, AttemptEnd& end) {
    ServerContext& context = ctx.Context();
    ctx.model_group = stage.group->name;
    ctx.deployment = deployment.name;
    ctx.model = deployment.model;
    ctx.upstream_request_id.clear();
    ctx.record.fallback_depth = stage.depth;
    ++ctx.record.attempts;

    api::RequestOverrides overrides;
    if (stage.depth > 0) {
        overrides.system_prompt = &stage.group->system_prompt;
        overrides.params = &stage.group->params;
    }
    overrides.stream_upstream = journey.stream_upstream;
    auto built = providers::BuildUpstreamRequest(deployment, journey.request, journey.client_body,
                                                 overrides);
    if (auto* error = std::get_if<core::LocalError>(&built)) {
        // The request cannot be carried over to this deployment's API: the client's to fix.
        end.transport = *error;
        end.outcome = {policy::Action::kGiveUp, policy::ErrorClass::kBadRequest};
        co_return;
    }
    const providers::UpstreamRequest& upstream_request =
        std::get<providers::UpstreamRequest>(built);
    upstream::UpstreamCall call(ctx.worker.pool, context.clock);
    // The request's deadline bounds everything before the upstream starts answering; an answer
    // that has started (a long stream) runs to the total timeout.
    const Clock::time_point now = context.clock.Now();
    const auto remaining =
        std::max(milliseconds(1), std::chrono::ceil<milliseconds>(journey.deadline - now));
    const config::Timeouts& t = journey.timeouts;
    const upstream::UpstreamCall::Timeouts timeouts{
        std::min(t.connect, remaining), std::min(t.first_byte, remaining), now + t.total};
    const bool started = co_await call.Start(deployment, upstream_request, timeouts);
    end.time_to_first_byte = std::chrono::duration_cast<milliseconds>(context.clock.Now() - now);
    if (!started) {
        end.transport = call.Error();
        end.outcome = policy::Classify({TransportOf(call.FailureKind())}, context.clock.WallNow());
        co_return;
    }
    const auto& header = call.Header();
    if (const auto id = HeaderValue(header, providers::RequestIdHeader(deployment.provider))) {
        ctx.upstream_request_id = std::string(*id);
    }
    end.status = header.result_int();
    std::vector<policy::HeaderField> rate_limit_fields;
    rate_limit_fields.reserve(12);  // both providers send at most 12
    for (const auto& field : header) {
        const std::string_view name = field.name_string();
        if ((name.size() > 12 && beast::iequals(name.substr(0, 12), "x-ratelimit-")) ||
            (name.size() > 20 && beast::iequals(name.substr(0, 20), "anthropic-ratelimit-"))) {
            rate_limit_fields.emplace_back(name, std::string_view(field.value()));
        }
    }
    if (!rate_limit_fields.empty()) {
        const policy::RateLimitHeaders reported =
            policy::ParseRateLimitHeaders(rate_limit_fields, context.clock.WallNow());
        context.health.NoteHeadroom(deployment.index, reported);
        context.headroom.Correct(deployment.index, reported, context.clock.Now());
    }
    const bool success = end.status >= 200 && end.status < 300;
    const std::string_view content_type = header[http::field::content_type];
    if (success && content_type.starts_with("text/event-stream")) {
        StreamOptions options{journey.background, t.first_token, t.chunk, t.pings_are_progress,
                              journey.stream_upstream};
        options.upstream = providers::WireOf(deployment.provider);
        options.front = journey.request.wire;
        options.include_usage = journey.request.include_usage;
        StreamResult stream;
        co_await RelayStream(ctx, call, options, stream);
        if (stream.committed) {
            end.answered = true;
            co_return;
        }
        // Failed before the commit point: nothing went downstream, so it is an ordinary failure.
        if (!stream.error_event.empty()) {
            policy::AttemptResult result;
            result.status = policy::StatusOfStreamError(stream.error_event);
            result.body = stream.error_event;
            end.outcome = policy::Classify(result, context.clock.WallNow());
            end.status = result.status;
            end.body = stream.error_event;
            end.transport = {
                core::ErrorKind::kUpstreamProtocol,
                "Upstream '" + deployment.name + "' sent an error event: " + stream.error_event};
            end.transport.status = end.status;
        } else {
            end.status = 0;
            end.transport = stream.transport;
            end.outcome = policy::Classify({TransportOf(stream.failure)}, context.clock.WallNow());
        }
        co_return;
    }
    std::string body;
    const std::size_t limit = success ? kMaxUpstreamBody : kMaxUpstreamErrorBody;
    bool read = call.TakeBuffered(body, limit);
    if (!read) read = co_await call.ReadAll(body, limit);
    if (!read) {
        end.status = 0;
        end.transport = call.Error();
        end.outcome = policy::Classify({TransportOf(call.FailureKind())}, context.clock.WallNow());
        co_return;
    }
    if (success) {
        end.answered = true;
        co_await WriteUpstreamAnswer(ctx, header, body, providers::WireOf(deployment.provider));
        co_return;
    }
    policy::AttemptResult result;
    result.status = end.status;
    result.body = body;
    result.retry_after = HeaderValue(header, "retry-after");
    result.retry_after_ms = HeaderValue(header, "retry-after-ms");
    result.should_retry = HeaderValue(header, "x-should-retry");
    end.outcome = policy::Classify(result, context.clock.WallNow());
    end.header = header;
    end.body = std::move(body);
}

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

// The index in `order` of the first deployment that is not excluded and may be tried now.
std::optional<std::size_t> FirstAvailable(const std::vector<const config::Deployment*>& order,
                                          const std::vector<bool>& excluded,
                                          const routing::DeploymentHealth& health,
                                          Clock::time_point now) {
    for (std::size_t i = 0; i < order.size(); ++i) {
        if (!excluded[i] && health.Available(order[i]->index, now)) return i;
    }
    return std::nullopt;
}

// Where a request's headroom was reserved, or how long until some deployment would have it.
struct Reservation {
    std::optional<std::size_t> index;  // into the group's order
    milliseconds wait{0};              // when nothing was reserved
};

// Reserves headroom for the request's lane on `order[preferred]` or, failing that, on the first
// other deployment that may be tried now. `cost` is set to what was reserved.
Reservation ReserveHeadroom(ServerContext& context, const Journey& journey,
                            const std::vector<const config::Deployment*>& order,
                            const std::vector<bool>& excluded, std::size_t preferred,
                            Clock::time_point now, limits::HeadroomCost& cost) {
    const limits::Lanes::Grant grant = context.lanes.Share(journey.lane, now);
    Reservation result;
    result.wait = milliseconds::max();
    const auto attempt = [&](std::size_t i) {
        const config::Deployment& d = *order[i];
        const limits::HeadroomCost c =
            limits::CostOf(d.provider, journey.input_estimate, journey.request.max_tokens);
        const milliseconds wait =
            context.headroom.TryReserve(d.index, c, grant.share, now, journey.lane, grant.ramp);
        if (wait == milliseconds(0)) {
            cost = c;
            result.index = i;
            return true;
        }
        result.wait = std::min(result.wait, wait);
        return false;
    };
    if (attempt(preferred)) return result;
    for (std::size_t i = 0; i < order.size(); ++i) {
        if (i == preferred || excluded[i] || !context.health.Available(order[i]->index, now)) {
            continue;
        }
        if (attempt(i)) return result;
    }
    return result;
}

// retry-after in whole seconds (rounded up, as clients read it) and retry-after-ms exactly.
void AddRetryAfter(RequestContext& ctx, milliseconds wait) {
    const long long ms = std::max<long long>(1, wait.count());
    ctx.reply_headers.emplace_back("retry-after", std::to_string((ms + 999) / 1000));
    ctx.reply_headers.emplace_back("retry-after-ms", std::to_string(ms));
}

asio::awaitable<void> Sleep(RequestContext& ctx, milliseconds delay) {
    asio::steady_timer timer(ctx.stream.get_executor());
    timer.expires_after(delay);
    // A cancelled wait (shutdown) just ends early; the loop re-checks the deadline.
    auto [ec] = co_await timer.async_wait(kTuple);
    (void)ec;
}

// The static degradation, rendered for an Anthropic client.
std::string StaticInAnthropic(const std::string& openai, bool stream) {
    if (!stream) return TranslateBody(openai, 200, api::Wire::kOpenAi, api::Wire::kAnthropic);
    api::OpenAiToAnthropicStream translate;
    core::SseParser sse;
    core::SseEvent event;
    std::string out;
    sse.Feed(openai);
    while (sse.Next(event)) translate.Feed(event.name, event.data, out);
    return out;
}

// The last word when every target failed: a static degradation, or an error that lists every
// attempt, with the status of the last upstream answer (502/504 when there was none).
asio::awaitable<void> Exhausted(RequestContext& ctx, Journey& journey, const AttemptEnd& last,
                                std::optional<milliseconds> rate_limited_for,
                                bool all_rate_limited) {
    const config::DegradationConfig& degradation = ctx.Config().degradation;
    if (degradation.mode == config::DegradationConfig::Mode::kStatic) {
        const long long created = std::chrono::duration_cast<std::chrono::seconds>(
                                      ctx.Context().clock.WallNow().time_since_epoch())
                                      .count();
        std::string body =
            api::RenderOpenAiStaticCompletion(degradation.content, created, journey.request.stream);
        if (ctx.wire == api::Wire::kAnthropic)
            body = StaticInAnthropic(body, journey.request.stream);
        ctx.error = "degraded: every target failed";
        ctx.deployment.clear();
        ctx.model = "switchyard-degraded";
        Response response{http::status::ok, 11};
        response.set(http::field::content_type, journey.request.stream
                                                    ? "text/event-stream; charset=utf-8"
                                                    : "application/json");
        SetServedHeaders(ctx, response);
        response.set("x-switchyard-degraded", "true");
        response.body() = std::move(body);
        co_await WriteResponse(ctx, response);
        co_return;
    }
    // The kind names the last failure when it had no HTTP answer (unreachable, timeout).
    core::LocalError error{last.status == 0 && !journey.notes.empty()
                               ? last.transport.kind
                               : core::ErrorKind::kAllAttemptsFailed};
    error.attempts = journey.notes;
    if (journey.notes.empty() && journey.headroom_short_for) {
        // Self-throttled: no deployment had headroom for this lane within the deadline, or the
        // lane's queue was full. The client may retry when headroom is back.
        error.kind = core::ErrorKind::kHeadroomExhausted;
        error.status = core::StatusOf(error.kind);
        const std::string& lane = ctx.Config().limits.lanes[journey.lane].name;
        error.message = fmt::format(
            "No deployment of the requested model has rate-limit headroom for the '{}' lane "
            "within the request's deadline (or its queue is full).",
            lane);
        AddRetryAfter(ctx, *journey.headroom_short_for);
        ctx.Context().metrics.CountShed(lane);
    } else if (journey.notes.empty()) {
        // Nothing was tried: every deployment is unavailable beyond the deadline.
        error.status = all_rate_limited ? 429 : 503;
        const long long seconds = rate_limited_for ? (rate_limited_for->count() + 999) / 1000 : 1;
        error.message = fmt::format(
            "Every deployment of the requested model is {} for at least {} s; no attempt fits "
            "the request's deadline.",
            all_rate_limited ? "rate-limited"
                             : "unavailable (cooling down, circuit open or disabled)",
            seconds);
        ctx.reply_headers.emplace_back("retry-after", std::to_string(std::max(1LL, seconds)));
    } else {
        const core::AttemptNote& final_note = journey.notes.back();
        error.status = last.status != 0                                           ? last.status
                       : last.outcome.error_class == policy::ErrorClass::kTimeout ? 504
                                                                                  : 502;
        std::string detail = last.transport.message;
        if (last.status != 0)
            detail = fmt::format("HTTP {} ({})", last.status, final_note.error_class);
        error.message = fmt::format("All {} attempt(s) failed. Last: {}: {}", journey.notes.size(),
                                    final_note.deployment, detail);
        if (last.header) {
            if (const auto ra = HeaderValue(*last.header, "retry-after")) {
                ctx.reply_headers.emplace_back("retry-after", std::string(*ra));
            }
        }
    }
    Response response{static_cast<http::status>(error.status), 11};
    api::LocalReply reply = RenderLocalError(ctx, error);
    ctx.error = error.message;
    response.set(http::field::content_type, "application/json");
    for (const auto& [name, value] : ctx.reply_headers) response.set(name, value);
    if (!journey.notes.empty()) SetServedHeaders(ctx, response);
    response.body() = std::move(reply.body);
    co_await WriteResponse(ctx, response);
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

std::string_view ClientCredential(const Request& request) {
    if (const auto it = request.find(http::field::authorization); it != request.end()) {
        return it->value();
    }
    if (const auto it = request.find("x-api-key"); it != request.end()) return it->value();
    return {};
}

int HeaderInt(const Request& request, std::string_view name) {
    const auto it = request.find(name);
    if (it == request.end()) return -1;
    const std::string_view text = it->value();
    int value = -1;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size() ? value : -1;
}

// The first requested group (model, models, fallbacks) the key may not use.
std::optional<std::string> DisallowedGroup(
    const config::ClientKey& key, const std::vector<std::string>& requested,
    const std::optional<std::vector<std::string>>& fallbacks) {
    if (key.models.empty()) return std::nullopt;
    const auto allowed = [&](const std::string& group) {
        return std::find(key.models.begin(), key.models.end(), group) != key.models.end();
    };
    for (const auto& group : requested) {
        if (!allowed(group)) return group;
    }
    if (fallbacks) {
        for (const auto& group : *fallbacks) {
            if (!allowed(group)) return group;
        }
    }
    return std::nullopt;
}

std::string_view RefusalName(limits::KeyRefusal refusal) {
    switch (refusal) {
        case limits::KeyRefusal::kRequests:
            return "requests";
        case limits::KeyRefusal::kTokens:
            return "tokens";
        case limits::KeyRefusal::kBudget:
            return "budget";
        case limits::KeyRefusal::kNone:
            break;
    }
    return "none";
}

core::LocalError KeyRefusalError(const config::ClientKey& key,
                                 const limits::KeyAdmission& admission) {
    const double seconds = static_cast<double>(admission.retry_after.count()) / 1000.0;
    switch (admission.refusal) {
        case limits::KeyRefusal::kBudget:
            return {core::ErrorKind::kBudgetExceeded,
                    fmt::format("The key '{}' has spent its monthly budget of {:.2f}; it resets at "
                                "00:00 UTC on the first of next month.",
                                key.name, key.monthly_budget)};
        case limits::KeyRefusal::kTokens:
            return {core::ErrorKind::kRateLimited,
                    fmt::format("Rate limit reached for the key '{}': {} tokens per minute. Retry "
                                "after {:.3f} s.",
                                key.name, key.tpm, seconds)};
        default:
            return {core::ErrorKind::kRateLimited,
                    fmt::format("Rate limit reached for the key '{}': {} requests per minute. "
                                "Retry after {:.3f} s.",
                                key.name, key.rpm, seconds)};
    }
}

// Both front APIs share the attempt loop below.
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

namespace {

asio::awaitable<void> Serve(RequestContext& ctx) {
    ServerContext& context = ctx.Context();
    const config::Config& config = ctx.Config();
    ctx.record.bytes_in = ctx.request.body().size();
    // Owned here for the whole request: the parsed request may keep a view of it.
    const std::string client_body = std::move(ctx.request.body());
    if (const int retry_count = HeaderInt(ctx.request, "x-stainless-retry-count");
        retry_count > 0) {
        // A client SDK retrying on top of the gateway: retries in two layers multiply load.
        ctx.record.client_retry_count = retry_count;
        context.metrics.CountClientRetry();
    }
    auto parsed = ctx.wire == api::Wire::kAnthropic ? api::ParseAnthropicMessages(client_body)
                                                    : api::ParseOpenAiChat(client_body);
    if (auto* error = std::get_if<core::LocalError>(&parsed)) {
        if (error->kind == core::ErrorKind::kModelNotFound) *error = UnknownModel(config, "");
        co_await WriteLocalError(ctx, *error);
        co_return;
    }
    const api::ChatRequest& request = std::get<api::ChatRequest>(parsed);
    ctx.record.stream = request.stream;
    if (const auto unknown = UnknownName(config, request)) {
        const core::LocalError error = UnknownModel(config, *unknown);
        co_await WriteLocalError(ctx, error);
        co_return;
    }
    const std::vector<std::string> requested =
        request.models.empty() ? std::vector<std::string>{request.model} : request.models;

    // The client key: who is asking, which groups it may use, its RPM, TPM and monthly budget.
    // Without configured keys the gateway is open; the master key is never limited.
    const std::int64_t input_estimate = api::EstimateInputTokens(client_body);
    KeySettlement settlement(ctx);
    std::size_t lane = 0;
    if (!context.keys.Empty() && !PresentsMasterKey(ctx)) {
        settlement.key = context.keys.Find(PresentedKey(ctx.request));
        if (!settlement.key) {
            const core::LocalError error{
                core::ErrorKind::kUnauthorized,
                PresentedKey(ctx.request).empty()
                    ? "Missing API key: send it as 'Authorization: Bearer KEY' or 'x-api-key: KEY'."
                    : "Incorrect API key provided."};
            co_await WriteLocalError(ctx, error);
            co_return;
        }
        const config::ClientKey& policy = settlement.key->Policy();
        ctx.key_name = policy.name;
        lane = policy.lane;
        if (const auto denied = DisallowedGroup(policy, requested, request.fallbacks)) {
            const core::LocalError error{
                core::ErrorKind::kModelNotAllowed,
                "The key '" + policy.name + "' may not use the model `" + *denied + "`.", "model"};
            co_await WriteLocalError(ctx, error);
            co_return;
        }
        settlement.admission = settlement.key->Admit(input_estimate + request.max_tokens,
                                                     context.clock.Now(), context.clock.WallNow());
        if (settlement.admission.refusal != limits::KeyRefusal::kNone) {
            const core::LocalError error = KeyRefusalError(policy, settlement.admission);
            context.metrics.CountKeyRefusal(policy.name, RefusalName(settlement.admission.refusal));
            AddRetryAfter(ctx, settlement.admission.retry_after);
            settlement.key.reset();  // a refused request counts for nothing
            co_await WriteLocalError(ctx, error);
            co_return;
        }
    } else if (const auto it = ctx.request.find("x-switchyard-lane"); it != ctx.request.end()) {
        const auto named = config.limits.FindLane(it->value());
        if (!named) {
            const core::LocalError error{core::ErrorKind::kInvalidRequest,
                                         "Unknown lane '" + std::string(it->value()) + "'.",
                                         "x-switchyard-lane"};
            co_await WriteLocalError(ctx, error);
            co_return;
        }
        lane = *named;
    }
    ctx.record.lane = config.limits.lanes[lane].name;

    const bool fallbacks_enabled = HeaderInt(ctx.request, "x-switchyard-no-fallbacks") != 1 &&
                                   (!settlement.key || settlement.key->Policy().fallbacks);
    std::vector<routing::PlannedGroup> stages =
        routing::PlanGroups(config, requested, request.fallbacks, fallbacks_enabled);

    // Per-request overrides, named after the Vercel AI SDK's timeout settings: totalMs bounds the
    // whole request (like x-switchyard-deadline-ms), stepMs one attempt, chunkMs the gap between
    // stream events.
    milliseconds deadline_budget = config.retry.deadline;
    for (const char* name : {"x-switchyard-deadline-ms", "x-switchyard-timeout-total-ms"}) {
        if (const int ms = HeaderInt(ctx.request, name); ms > 0) {
            deadline_budget = std::min(milliseconds(ms), kMaxDeadlineOverride);
        }
    }
    config::Timeouts timeouts = config.timeouts;
    if (const int ms = HeaderInt(ctx.request, "x-switchyard-timeout-step-ms"); ms > 0) {
        timeouts.total = std::min(milliseconds(ms), kMaxDeadlineOverride);
    }
    if (const int ms = HeaderInt(ctx.request, "x-switchyard-timeout-chunk-ms"); ms > 0) {
        timeouts.chunk = std::min(milliseconds(ms), kMaxDeadlineOverride);
        timeouts.first_token = std::min(timeouts.first_token, timeouts.chunk);
    }
    bool background = config.server.stream_mode == config::StreamMode::kBackground;
    if (settlement.key && settlement.key->Policy().stream_mode) {
        background = *settlement.key->Policy().stream_mode == config::StreamMode::kBackground;
    }
    if (const auto it = ctx.request.find("x-switchyard-stream-mode"); it != ctx.request.end()) {
        background = it->value() == "background";
    }
    const bool stream_upstream =
        !request.stream && (HeaderInt(ctx.request, "x-switchyard-stream-upstream") == 1 ||
                            (timeouts.stream_upstream_over_max_tokens > 0 &&
                             request.max_tokens > timeouts.stream_upstream_over_max_tokens));
    Journey journey{request,
                    client_body,
                    context.clock.Now() + deadline_budget,
                    timeouts,
                    background,
                    stream_upstream,
                    context.client_budgets.For(ClientCredential(ctx.request)),
                    lane,
                    input_estimate};
    const policy::Backoff backoff{config.retry.base, config.retry.cap};
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const std::function<double()> draw = [&] { return uniform(ctx.worker.rng); };
    routing::DeploymentHealth& health = context.health;

    QueueSlot queue(context.lanes, lane);
    AttemptEnd last;
    std::optional<milliseconds> rate_limited_for;
    bool all_rate_limited = true;  // every blocked deployment was blocked by a rate limit
    for (std::size_t stage_index = 0; stage_index < stages.size(); ++stage_index) {
        const routing::PlannedGroup stage = stages[stage_index];
        const std::vector<const config::Deployment*> order =
            routing::OrderDeployments(*stage.group, health, draw);
        std::vector<bool> excluded(order.size(), false);
        std::map<policy::ErrorClass, int> class_retries;
        int same_target_retries = 0;
        std::optional<std::size_t> target;
        bool next_stage = false;
        while (!next_stage) {
            const Clock::time_point now = context.clock.Now();
            if (ctx.record.attempts >= config.retry.max_attempts || now >= journey.deadline) break;
            if (!target) target = FirstAvailable(order, excluded, health, now);
            if (!target) {
                // Every deployment left is blocked. A rate limit lifts at a known instant: wait
                // for the soonest if that fits the deadline. Cooling, open and disabled ones fail
                // fast (that is their point): fall through to the fallbacks.
                std::optional<Clock::time_point> soonest;
                for (std::size_t i = 0; i < order.size(); ++i) {
                    if (excluded[i]) continue;
                    if (health.Snapshot(order[i]->index, now).state != "rate_limited") {
                        all_rate_limited = false;
                        continue;
                    }
                    const auto at = health.AvailableAt(order[i]->index, now);
                    if (!soonest || at < *soonest) soonest = at;
                }
                if (!soonest) break;  // nothing that is worth waiting for
                const auto wait = std::chrono::ceil<milliseconds>(*soonest - now);
                if (now + wait > journey.deadline) {
                    rate_limited_for = std::max(rate_limited_for.value_or(wait), wait);
                    break;
                }
                co_await Sleep(ctx, wait);
                journey.next_wait += wait;
                continue;
            }
            limits::HeadroomCost cost;
            if (config.limits.self_throttle) {
                // Send only where the provider's limits leave room for this lane; otherwise wait
                // in the lane's queue for the soonest headroom, or leave the group.
                const Reservation reserved =
                    ReserveHeadroom(context, journey, order, excluded, *target, now, cost);
                if (!reserved.index) {
                    const milliseconds wait = reserved.wait;
                    if (!queue.Enter() || now + wait > journey.deadline) {
                        queue.Leave();  // no longer waiting here: other lanes need not yield
                        journey.headroom_short_for =
                            std::min(journey.headroom_short_for.value_or(wait), wait);
                        break;
                    }
                    context.metrics.CountHeadroomWait(ctx.record.lane);
                    co_await Sleep(ctx, wait);
                    journey.next_wait += wait;
                    continue;
                }
                target = reserved.index;
                queue.Leave();
            }
            const config::Deployment& deployment = *order[*target];
            if (!health.Admit(deployment.index, now)) {
                // Another request took the last half-open probe slot: look elsewhere.
                if (config.limits.self_throttle)
                    context.headroom.Cancel(deployment.index, cost, now);
                excluded[*target] = true;
                target.reset();
                continue;
            }
            AttemptEnd end;
            health.AddInFlight(deployment.index, 1);
            co_await RunAttempt(ctx, journey, deployment, stage, end);
            health.AddInFlight(deployment.index, -1);
            context.headroom.Settle(deployment.index, cost, end.answered, ctx.record.input_tokens,
                                    ctx.record.output_tokens, context.clock.Now());
            if (end.answered) settlement.served_by = &deployment;
            const bool disabled = health.OnOutcome(deployment.index, context.clock.Now(),
                                                   context.clock.WallNow(), end.outcome.error_class,
                                                   end.outcome.retry_after, end.time_to_first_byte);
            if (disabled) AlertDisabled(ctx, deployment);
            policy::RetryBudget& deployment_budget = health.Budget(deployment.index);
            context.metrics.CountAttempt(ctx.worker.index, deployment.name,
                                         policy::Name(end.outcome.error_class));
            if (end.answered) {
                journey.client_budget.OnSuccess();
                deployment_budget.OnSuccess();
                if (stage.depth > 0) context.metrics.CountFallback();
                co_return;
            }
            journey.client_budget.OnFailure();
            deployment_budget.OnFailure();
            journey.notes.push_back({stage.group->name, deployment.name, end.status,
                                     std::string(policy::Name(end.outcome.error_class)),
                                     ctx.upstream_request_id, journey.next_wait.count()});
            journey.next_wait = milliseconds(0);
            const policy::Outcome& outcome = end.outcome;
            switch (outcome.action) {
                case policy::Action::kSuccess:
                case policy::Action::kGiveUp:
                    // The request itself is wrong: the client gets the provider's answer unchanged.
                    if (end.header) {
                        co_await WriteUpstreamAnswer(ctx, *end.header, end.body,
                                                     providers::WireOf(deployment.provider));
                    } else {
                        co_await WriteLocalError(ctx, end.transport);
                    }
                    co_return;
                case policy::Action::kContextFallback:
                case policy::Action::kContentFallback: {
                    std::vector<routing::PlannedGroup> semantic =
                        fallbacks_enabled
                            ? routing::SemanticFallbacks(config, *stage.group, outcome.action,
                                                         stage.depth + 1)
                            : std::vector<routing::PlannedGroup>{};
                    if (semantic.empty()) {
                        if (end.header) {
                            co_await WriteUpstreamAnswer(ctx, *end.header, end.body,
                                                         providers::WireOf(deployment.provider));
                        } else {
                            co_await WriteLocalError(ctx, end.transport);
                        }
                        co_return;
                    }
                    // Retrying the same prompt elsewhere in the chain would fail the same way.
                    stages.erase(stages.begin() + static_cast<std::ptrdiff_t>(stage_index) + 1,
                                 stages.end());
                    stages.insert(stages.end(), semantic.begin(), semantic.end());
                    next_stage = true;
                    break;
                }
                case policy::Action::kFailOver:
                    excluded[*target] = true;
                    target.reset();
                    break;
                case policy::Action::kRetry: {
                    // Move instead of waiting: another deployment that can serve now gets the
                    // request at once; this one is done for this request.
                    std::vector<bool> others = excluded;
                    others[*target] = true;
                    const Clock::time_point after = context.clock.Now();
                    if (const auto other = FirstAvailable(order, others, health, after)) {
                        excluded[*target] = true;
                        target = other;
                        break;
                    }
                    // Nothing else can serve: retry this one, within its class cap and budgets.
                    const auto cap =
                        config.retry.class_retries.find(policy::Name(outcome.error_class));
                    const int allowed = cap == config.retry.class_retries.end() ? 0 : cap->second;
                    if (++class_retries[outcome.error_class] > allowed ||
                        !journey.client_budget.CanRetry() || !deployment_budget.CanRetry()) {
                        next_stage = true;
                        break;
                    }
                    milliseconds delay =
                        backoff.Delay(same_target_retries++, draw(), outcome.retry_after);
                    if (const auto at = health.AvailableAt(deployment.index, after); at > after) {
                        delay = std::max(delay, std::chrono::ceil<milliseconds>(at - after));
                    }
                    if (after + delay > journey.deadline) {
                        next_stage = true;  // a wait that would overrun the deadline is not started
                        break;
                    }
                    co_await Sleep(ctx, delay);
                    journey.next_wait = delay;
                    break;
                }
            }
            last = std::move(end);
        }
        if (ctx.record.attempts >= config.retry.max_attempts ||
            context.clock.Now() >= journey.deadline) {
            break;
        }
    }
    co_await Exhausted(ctx, journey, last, rate_limited_for, all_rate_limited);
}

}  // namespace

}  // namespace switchyard::server
