#include "server/attempt.h"

#include <algorithm>
#include <array>
#include <span>
#include <vector>

#include "api/answer_shape.h"
#include "api/structured_output.h"
#include "api/whole_answer.h"
#include "core/json.h"
#include "policy/classify.h"
#include "policy/rate_limit_headers.h"
#include "providers/upstream_request.h"
#include "server/relay.h"
#include "server/request_trace.h"

namespace switchyard::server {
namespace {

using std::chrono::milliseconds;

constexpr std::size_t kMaxUpstreamBody = 64 * 1024 * 1024;
constexpr std::size_t kMaxUpstreamErrorBody = 1024 * 1024;

std::optional<std::string_view> HeaderValue(const upstream::ResponseHeader& header,
                                            std::string_view name) {
    const auto it = header.find(name);
    if (it == header.end()) return std::nullopt;
    return std::string_view(it->value());
}

// The provider's rate-limit headers on an answer: what /status shows and what corrects the
// deployment's headroom.
void NoteRateLimitHeaders(RequestContext& ctx, const config::Deployment& deployment,
                          const upstream::ResponseHeader& header) {
    std::array<policy::HeaderField, 24> fields;  // both providers send at most 12
    std::size_t count = 0;
    for (const auto& field : header) {
        const std::string_view name = field.name_string();
        if (((name.size() > 12 && beast::iequals(name.substr(0, 12), "x-ratelimit-")) ||
             (name.size() > 20 && beast::iequals(name.substr(0, 20), "anthropic-ratelimit-"))) &&
            count < fields.size()) {
            fields[count++] = {name, std::string_view(field.value())};
        }
    }
    if (count == 0) return;
    const core::Clock& clock = ctx.Context().clock;
    const policy::RateLimitHeaders reported =
        policy::ParseRateLimitHeaders(std::span(fields.data(), count), clock.WallNow());
    ctx.Health().NoteHeadroom(deployment.index, reported);
    ctx.Headroom().Correct(deployment.index, reported, clock.Now());
    if (state::RedisState* shared = ctx.Context().shared) {
        shared->CorrectHeadroom(ctx.worker.index, deployment.name,
                                ctx.Headroom().CorrectionDemands(deployment.index, reported),
                                clock.Now());
    }
}

// An error event inside a 200 stream, judged like the answer it stands for.
policy::Outcome ClassifyErrorEvent(std::string_view data,
                                   std::chrono::system_clock::time_point now) {
    policy::AttemptResult result;
    result.status = policy::StatusOfStreamError(data);
    result.body = data;
    return policy::Classify(result, now);
}

// An answer that does not match the requested schema, as a failed attempt: another deployment
// may answer it right (never this one again for this request).
void InvalidOutput(AttemptEnd& end, const config::Deployment& deployment, std::string problem) {
    end.answered = false;
    end.Fail({core::ErrorKind::kInvalidOutput,
              "The answer of '" + deployment.name +
                  "' does not match the requested JSON schema: " + std::move(problem)},
             {policy::Action::kFailOver, policy::ErrorClass::kInvalidOutput});
}

// Another attempt of the race answered the client first: this one ends with nothing sent (the
// executor abandons it).
void LostTheRace(AttemptEnd& end) {
    end.Fail({core::ErrorKind::kInternal, "Another attempt answered first."},
             {policy::Action::kFailOver, policy::ErrorClass::kLocal});
}

// An attempt answered with a stream: relayed by api::StreamRelay's rules, and how it ended in
// `end` (`started`: the attempt's start).
asio::awaitable<void> EndStreamed(RequestContext& ctx, const AttemptSetup& setup,
                                  const config::Deployment& deployment,
                                  upstream::UpstreamCall& call, api::Wire upstream,
                                  std::chrono::steady_clock::time_point started,
                                  const engine::AttemptLimits& limits, const RaceSeat& seat,
                                  AttemptEnd& end) {
    const core::Clock& clock = ctx.Context().clock;
    // The first content is due by the end of the attempt's share of the deadline.
    const milliseconds budget_left =
        std::max(milliseconds(1),
                 std::chrono::ceil<milliseconds>(started + limits.first_content - clock.Now()));
    const milliseconds first_token = std::min(limits.first_token, budget_left);
    StreamOptions options{setup.background, first_token, limits.chunk,
                          setup.timeouts.pings_are_progress, setup.stream_upstream};
    options.upstream = upstream;
    options.request = &setup.request.original;
    options.front = setup.request.wire;
    options.include_usage = setup.request.include_usage;
    options.check = setup.check;
    options.seat = &seat;
    StreamResult stream = co_await RelayStream(ctx, call, options);
    if (stream.lost) {
        LostTheRace(end);
        co_return;
    }
    if (!stream.invalid_output.empty()) {
        InvalidOutput(end, deployment, std::move(stream.invalid_output));
        co_return;
    }
    end.answered = stream.committed;
    end.streamed = true;
    end.longest_gap = stream.longest_gap;
    if (stream.first_content) end.time_to_first_token = *stream.first_content - started;
    if (!stream.Failed()) co_return;
    // Cut before its first content by the request's own deadline, not by the first-token limit.
    end.cut_by_deadline = !stream.first_content && limits.deadline_bound &&
                          budget_left < limits.first_token &&
                          stream.transport == policy::Transport::kTimeout;
    // Failed — before the commit point an ordinary failed attempt, after it a failure of the
    // deployment all the same (the client got an error event).
    if (!stream.error_event.empty()) {
        const unsigned status = policy::StatusOfStreamError(stream.error_event);
        core::LocalError error{
            core::ErrorKind::kUpstreamProtocol,
            "Upstream '" + deployment.name + "' sent an error event: " + stream.error_event};
        error.status = status;
        end.Fail(std::move(error), ClassifyErrorEvent(stream.error_event, clock.WallNow()), status);
    } else {
        end.Fail(stream.error, policy::Classify({stream.transport}, clock.WallNow()));
    }
}

// An attempt answered with a whole success `body` in the deployment's API `wire`: checked to be
// an answer, translated to the client's API, checked against the schema and written — or failed
// in `end`, with nothing sent.
asio::awaitable<void> EndWhole(RequestContext& ctx, const AttemptSetup& setup,
                               const config::Deployment& deployment,
                               const upstream::ResponseHeader& header, std::string& body,
                               api::Wire wire, const RaceSeat& seat, AttemptEnd& end) {
    const core::Clock& clock = ctx.Context().clock;
    const api::AnswerShape shape = api::ShapeOfAnswer(body, wire, setup.request.endpoint);
    if (shape != api::AnswerShape::kAnswer) {
        // The client must not get it as an answer, nor a cache keep it. Cut short may be
        // retried; an error or another shape says the deployment is broken: fail over.
        end.Fail(
            {core::ErrorKind::kUpstreamProtocol, "Upstream '" + deployment.name + "' answered " +
                                                     std::to_string(end.status) + " with " +
                                                     std::string(api::Describe(shape)) + "."},
            policy::Classify({shape == api::AnswerShape::kNotJson ? policy::Transport::kTruncated
                                                                  : policy::Transport::kProtocol},
                             clock.WallNow()));
        co_return;
    }
    if (wire != setup.request.wire) {
        // Translated before anything is committed: a refusal fails this attempt over.
        auto translated = api::TranslateWholeAnswer(body, end.status, wire, setup.request.wire,
                                                    UnixNow(ctx), &setup.request.original);
        if (auto* error = std::get_if<core::LocalError>(&translated)) {
            end.Fail(std::move(*error),
                     policy::Classify({policy::Transport::kProtocol}, clock.WallNow()));
            co_return;
        }
        body = std::move(std::get<std::string>(translated));
        wire = setup.request.wire;
    }
    if (setup.check != nullptr) {
        std::optional<std::string> problem = co_await CheckOutput(
            ctx, *setup.check, api::AnswerText(body, setup.request.wire), deployment.name);
        if (problem && setup.check->fall_back) {
            InvalidOutput(end, deployment, std::move(*problem));
            co_return;
        }
    }
    if (!seat.Claim(ctx)) {
        LostTheRace(end);
        co_return;
    }
    end.answered = true;
    co_await WriteUpstreamAnswer(ctx, header, body, wire);
}

// Sends `upstream_request` on `call` and reads how the attempt ends into `end`: relayed or written
// to the client when it succeeds (and, racing, claims the client first), else the failure read for
// the classifier.
asio::awaitable<void> SendAndRead(RequestContext& ctx, const AttemptSetup& setup,
                                  const config::Deployment& deployment,
                                  const providers::UpstreamRequest& upstream_request,
                                  const engine::AttemptLimits& limits, upstream::UpstreamCall& call,
                                  const RaceSeat& seat, AttemptEnd& end) {
    ServerContext& context = ctx.Context();
    // The attempt's limits bound everything before the upstream starts answering; an answer
    // that has started (a long stream) runs to the total timeout.
    const auto now = context.clock.Now();
    const upstream::UpstreamCall::Timeouts timeouts{limits.connect, limits.first_byte,
                                                    now + setup.timeouts.total};
    const bool started = co_await call.Start(deployment, upstream_request, timeouts);
    end.time_to_first_byte = std::chrono::duration_cast<milliseconds>(context.clock.Now() - now);
    if (!started) {
        end.Fail(call.Error(), policy::Classify({call.Transport()}, context.clock.WallNow()));
        // The request's deadline set the first-byte limit (it is the whole first-content budget).
        end.cut_by_deadline = call.Transport() == policy::Transport::kTimeout &&
                              limits.deadline_bound && limits.first_byte == limits.first_content;
        co_return;
    }
    const auto& header = call.Header();
    if (const auto id = HeaderValue(header, providers::RequestIdHeader(deployment.provider))) {
        ctx.upstream_request_id = std::string(*id);
    }
    end.status = header.result_int();
    NoteRateLimitHeaders(ctx, deployment, header);
    const bool success = end.status >= 200 && end.status < 300;
    const std::string_view content_type = header[http::field::content_type];
    if (success && content_type.starts_with("text/event-stream")) {
        co_await EndStreamed(ctx, setup, deployment, call, upstream_request.wire, now, limits, seat,
                             end);
        co_return;
    }
    std::string body;
    const std::size_t limit = success ? kMaxUpstreamBody : kMaxUpstreamErrorBody;
    bool read = call.TakeBuffered(body, limit);
    if (!read) read = co_await call.ReadAll(body, limit);
    if (!read) {
        end.Fail(call.Error(), policy::Classify({call.Transport()}, context.clock.WallNow()));
        co_return;
    }
    if (success) {
        co_await EndWhole(ctx, setup, deployment, header, body, upstream_request.wire, seat, end);
        co_return;
    }
    policy::AttemptResult result;
    result.status = end.status;
    result.body = body;
    result.retry_after = HeaderValue(header, "retry-after");
    result.retry_after_ms = HeaderValue(header, "retry-after-ms");
    result.should_retry = HeaderValue(header, "x-should-retry");
    end.Fail({}, policy::Classify(result, context.clock.WallNow()), end.status);
    end.failure->header = header;
    end.failure->body = std::move(body);
    co_return;
}

}  // namespace

asio::awaitable<AttemptEnd> RunAttempt(RequestContext& ctx, const AttemptSetup& setup,
                                       const config::Deployment& deployment,
                                       routing::PlannedGroup stage,
                                       const engine::AttemptLimits& limits, AttemptRace* race) {
    ServerContext& context = ctx.Context();
    AttemptEnd end;
    end.upstream = providers::WireOf(deployment.provider);  // until the request says more
    ctx.model_group = stage.group->name;
    ctx.deployment = deployment.name;
    ctx.region = deployment.region;
    ctx.model = deployment.model;
    ctx.upstream_request_id.clear();
    ctx.record.fallback_depth = stage.depth;
    if (setup.check != nullptr) ctx.validation = {};  // this attempt's answer is checked anew
    ++ctx.record.attempts;

    api::RequestOverrides overrides;
    if (stage.depth > 0) {
        // A fallback entry brings its prompt (chat only: embeddings have none) and params.
        if (setup.request.endpoint == api::Endpoint::kChat) {
            overrides.system_prompt = &stage.group->system_prompt;
        }
        overrides.params = &stage.group->params;
    }
    overrides.stream_upstream = setup.stream_upstream;
    auto built =
        providers::BuildUpstreamRequest(deployment, setup.request, setup.client_body, overrides);
    if (auto* error = std::get_if<core::LocalError>(&built)) {
        // The request cannot be carried over to this deployment's API: the client's to fix.
        end.Fail(*error, {policy::Action::kGiveUp, policy::ErrorClass::kBadRequest});
        co_return end;
    }
    providers::UpstreamRequest& upstream_request = std::get<providers::UpstreamRequest>(built);
    // The trace continues upstream (docs/observability.md#traces).
    const std::string traceparent = UpstreamTraceParent(ctx);
    if (!traceparent.empty()) upstream_request.headers.emplace_back("traceparent", traceparent);
    end.upstream = upstream_request.wire;
    upstream::UpstreamCall call(ctx.worker.pool, context.clock);
    const TrackedBy<upstream::UpstreamCall> tracked(setup.client, call);
    const RaceSeat seat(race, call, deployment, stage);
    if (seat.Lost()) {
        end.lost = true;  // another attempt of its race answered already: nothing is sent
        --ctx.record.attempts;
        LostTheRace(end);
        co_return end;
    }
    co_await SendAndRead(ctx, setup, deployment, upstream_request, limits, call, seat, end);
    end.lost = !end.answered && seat.Lost();
    co_return end;
}

}  // namespace switchyard::server
