#include "server/unanswered.h"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <random>

#include "api/local_reply.h"
#include "api/responses.h"
#include "api/translate.h"
#include "core/json.h"
#include "core/sse_parser.h"
#include "engine/world.h"
#include "limits/recent_give_ups.h"
#include "policy/retry_after.h"
#include "routing/residency.h"
#include "server/admission.h"
#include "server/http_io.h"
#include "server/relay.h"
#include "server/stored_answers.h"

namespace switchyard::server {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using Kind = engine::Action::Kind;

// Switchyard's own OpenAI stream, whole, through a stream translator.
template <typename Translator>
std::string TranslateStream(Translator& translate, const std::string& openai) {
    core::SseParser sse;
    core::SseEvent event;
    std::string out;
    sse.Feed(openai);
    while (sse.Next(event)) translate.Feed(event.name, event.data, out);
    return out;
}

// The static degradation, rendered for an Anthropic client.
std::string StaticInAnthropic(const std::string& openai, bool stream, std::int64_t created) {
    if (!stream) {
        // Switchyard's own completion: plain text, which Anthropic's API always expresses.
        return std::get<std::string>(
            TranslateBody(openai, 200, api::Wire::kOpenAi, api::Wire::kAnthropic, created));
    }
    api::OpenAiToAnthropicStream translate;
    return TranslateStream(translate, openai);
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
    return TranslateStream(translate, openai);
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

}  // namespace

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

}  // namespace switchyard::server
