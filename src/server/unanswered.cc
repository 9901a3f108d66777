#include "server/unanswered.h"

#include <random>

#include "api/local_reply.h"
#include "engine/give_up.h"
#include "limits/recent_give_ups.h"
#include "policy/retry_after.h"
#include "routing/residency.h"
#include "server/admission.h"
#include "server/http_io.h"
#include "server/served_answer.h"
#include "server/stored_answers.h"

namespace switchyard::server {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using Kind = engine::Action::Kind;

// What the engine's give-up tells the client (engine::GiveUpError) for this request.
core::LocalError GiveUpErrorOf(const RequestContext& ctx, const Walk& walk,
                               const engine::Action& give_up) {
    const AttemptEnd& last = walk.last;
    const engine::GiveUpFacts facts{walk.notes,
                                    last.status,
                                    last.failure ? &last.failure->error : nullptr,
                                    last.Outcome().error_class,
                                    ctx.Config().limits.lanes[walk.facts.lane].name,
                                    walk.facts.outside,
                                    &walk.facts.residency};
    return engine::GiveUpError(give_up, facts);
}

// When a client refused by a give-up may come back, in its headers: the earliest time some
// deployment can serve again, spread so that clients refused together do not return together
// (docs/resilience.md#headroom-and-lanes) — a shed request is promised the next free place after
// those shed before it, and spread within one spacing — and never to retry on its own
// (x-should-retry: false: the gateway already did). A shed request is counted.
void AdviseComeBack(RequestContext& ctx, const Walk& walk, const engine::Action& give_up) {
    const bool shed = walk.notes.empty() && give_up.headroom_short_for;
    if (shed) ctx.Context().metrics.CountShed(ctx.Config().limits.lanes[walk.facts.lane].name);
    if (give_up.retry_after) {
        milliseconds minimum = *give_up.retry_after;
        milliseconds spread = policy::DefaultSpread(minimum);
        if (shed && walk.spacing > milliseconds(0)) {
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
        AttemptFailure none;  // (a pass-through always follows a failed attempt)
        AttemptFailure& failure = last.failure ? *last.failure : none;
        if (failure.header) {
            co_await WriteUpstreamAnswer(ctx, *failure.header, failure.body, last.upstream);
        } else {
            // Or the gateway's own limit stopped it: the client may come back soon.
            if (failure.outcome.retry_after) AddRetryAfter(ctx, *failure.outcome.retry_after);
            co_await WriteLocalError(ctx, failure.error);
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
        std::string body = api::RenderDegradation(ctx.wire, degradation.content, created, stream,
                                                  walk->setup.request.original);
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
    const core::LocalError error = GiveUpErrorOf(ctx, *walk, action);
    AdviseComeBack(ctx, *walk, action);
    if (ctx.Context().give_ups != nullptr) {
        // A client that retries this on its own is known when it comes back (Serve).
        ctx.Context().give_ups->Note(
            limits::RecentGiveUps::Fingerprint(ClientCredential(ctx.request), ctx.path,
                                               walk->setup.client_body),
            ctx.Context().clock.Now());
    }
    Response response{static_cast<http::status>(error.status), 11};
    api::LocalReply reply = api::RenderError(ctx.wire, error);
    ctx.error = error.message;
    response.set(http::field::content_type, "application/json");
    for (const auto& [name, value] : ctx.reply_headers) response.set(name, value);
    if (!walk->notes.empty()) SetServedHeaders(ctx, response);
    response.body() = std::move(reply.body);
    co_await WriteResponse(ctx, response);
}

}  // namespace switchyard::server
