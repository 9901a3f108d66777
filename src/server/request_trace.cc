#include "server/request_trace.h"

#include <algorithm>
#include <random>

#include "observe/trace_exporter.h"
#include "policy/outcome.h"
#include "server/attempt.h"
#include "server/request_context.h"

namespace switchyard::server {
namespace {

using observe::Span;

template <std::size_t N>
std::array<std::uint8_t, N> RandomId(std::mt19937_64& rng) {
    std::array<std::uint8_t, N> id{};
    do {
        for (std::size_t i = 0; i < N; i += 8) {
            const std::uint64_t bits = rng();
            for (std::size_t j = 0; j < 8 && i + j < N; ++j) {
                id[i + j] = static_cast<std::uint8_t>(bits >> (8 * j));
            }
        }
    } while (observe::IsZero(id));
    return id;
}

std::optional<observe::TraceParent> ClientTraceParent(const RequestContext& ctx) {
    const auto it = ctx.request.find("traceparent");
    if (it == ctx.request.end()) return std::nullopt;
    return observe::ParseTraceParent(it->value());
}

std::string_view System(config::Provider provider) {
    return provider == config::Provider::kAnthropic ? "anthropic" : "openai";
}

// The GenAI operation a route performs.
std::string_view Operation(const RequestContext& ctx) {
    return ctx.endpoint == api::Endpoint::kEmbeddings ? "embeddings" : "chat";
}

}  // namespace

std::unique_ptr<RequestTrace> RequestTrace::Start(RequestContext& ctx,
                                                  std::string_view requested_model) {
    if (ctx.Context().traces == nullptr) return nullptr;
    const std::optional<observe::TraceParent> parent = ClientTraceParent(ctx);
    if (parent) {
        // The client decided: a sampled parent is recorded, an unsampled one is not.
        if (!parent->sampled) return nullptr;
        return std::unique_ptr<RequestTrace>(
            new RequestTrace(ctx, parent->trace_id, parent->span_id, requested_model));
    }
    const double ratio = ctx.Config().telemetry.sample_ratio;
    if (ratio <= 0) return nullptr;
    if (ratio < 1 && std::uniform_real_distribution<double>(0, 1)(ctx.worker.rng) >= ratio) {
        return nullptr;
    }
    return std::unique_ptr<RequestTrace>(
        new RequestTrace(ctx, RandomId<16>(ctx.worker.rng), observe::SpanId{}, requested_model));
}

RequestTrace::RequestTrace(RequestContext& ctx, const observe::TraceId& trace_id,
                           const observe::SpanId& parent, std::string_view requested_model)
    : ctx_(ctx) {
    request_.trace_id = trace_id;
    request_.span_id = RandomId<8>(ctx.worker.rng);
    request_.parent_id = parent;
    request_.kind = Span::Kind::kServer;
    request_.name = std::string(Operation(ctx)) + " " + std::string(requested_model);
    // The request began when its first byte arrived, before this trace did.
    const auto age = ctx.Context().clock.Now() - ctx.start;
    request_.start_unix_ns = NowNs() - std::chrono::nanoseconds(age).count();
    request_.Set("gen_ai.operation.name", std::string(Operation(ctx)));
    request_.Set("gen_ai.request.model", std::string(requested_model));
}

std::int64_t RequestTrace::NowNs() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               ctx_.Context().clock.WallNow().time_since_epoch())
        .count();
}

Span& RequestTrace::Open(std::string name, Span::Kind kind) {
    Span& span = children_.emplace_back();
    span.trace_id = request_.trace_id;
    span.span_id = RandomId<8>(ctx_.worker.rng);
    span.parent_id = request_.span_id;
    span.name = std::move(name);
    span.kind = kind;
    span.start_unix_ns = NowNs();
    return span;
}

std::size_t RequestTrace::BeginAttempt(const config::Deployment& deployment,
                                       const routing::PlannedGroup& stage, bool retry, bool hedge) {
    Span& span = Open(std::string(Operation(ctx_)) + " " + deployment.model, Span::Kind::kClient);
    attempts_.push_back(children_.size() - 1);
    span.Set("gen_ai.operation.name", std::string(Operation(ctx_)));
    span.Set("gen_ai.system", std::string(System(deployment.provider)));
    span.Set("gen_ai.request.model", deployment.model);
    span.Set("server.address", deployment.base_url.host);
    span.Set("server.port", static_cast<std::int64_t>(deployment.base_url.port));
    span.Set("switchyard.model_group", stage.group->name);
    span.Set("switchyard.deployment", deployment.name);
    span.Set("switchyard.fallback_depth", static_cast<std::int64_t>(stage.depth));
    span.Set("switchyard.retry", retry);
    if (hedge) span.Set("switchyard.hedge", true);
    return attempts_.back();
}

std::string RequestTrace::UpstreamTraceParent() const {
    observe::TraceParent parent{request_.trace_id, request_.span_id, true};
    if (!attempts_.empty()) parent.span_id = children_[attempts_.back()].span_id;
    return observe::FormatTraceParent(parent);
}

void RequestTrace::EndAttempt(std::size_t index, const AttemptEnd& end,
                              std::string_view upstream_request_id) {
    const auto open = std::find(attempts_.begin(), attempts_.end(), index);
    if (open == attempts_.end()) return;
    attempts_.erase(open);
    Span& span = children_[index];
    span.end_unix_ns = NowNs();
    if (end.status != 0)
        span.Set("http.response.status_code", static_cast<std::int64_t>(end.status));
    span.SetIfAny("switchyard.upstream_request_id", upstream_request_id);
    const policy::Outcome outcome = end.Outcome();
    const std::string_view error_class = policy::Name(outcome.error_class);
    span.Set("switchyard.error_class", std::string(error_class));
    span.Set("switchyard.answered", end.answered);
    if (outcome.retry_after) {
        span.Set("switchyard.retry_after_ms",
                 static_cast<std::int64_t>(outcome.retry_after->count()));
    }
    if (end.time_to_first_token) {
        // A stream that carried content: committed once bytes went downstream (in background
        // mode or when assembled, only at its end).
        span.Set("switchyard.commit_point_reached", end.answered);
        span.Set("switchyard.time_to_first_token_ms",
                 std::chrono::duration<double, std::milli>(*end.time_to_first_token).count());
    }
    if (end.lost) span.Set("switchyard.lost_race", true);
    if (end.answered) answered_model_ = ctx_.model;
    if (outcome.error_class != policy::ErrorClass::kNone) {
        span.error = true;
        const std::string_view message = end.failure ? end.failure->error.message : "";
        span.status_message = message.empty() ? std::string(error_class) : std::string(message);
        span.Set("error.type", std::string(error_class));
    }
}

void RequestTrace::BeginWait(std::string_view reason, std::chrono::milliseconds planned) {
    Span& span = Open("switchyard.wait", Span::Kind::kInternal);
    wait_ = children_.size() - 1;
    span.Set("switchyard.wait.reason", std::string(reason));
    span.Set("switchyard.wait_ms", static_cast<std::int64_t>(planned.count()));
}

void RequestTrace::EndWait() {
    if (!wait_) return;
    children_[*wait_].end_unix_ns = NowNs();
    wait_.reset();
}

void RequestTrace::Finish(RequestContext& ctx) {
    const std::int64_t now = NowNs();
    // Spans cut short by an exception or a client that left end with the request.
    for (const std::size_t open : attempts_) {
        children_[open].end_unix_ns = now;
        children_[open].error = true;
        children_[open].status_message = "the request ended during the attempt";
    }
    if (wait_) children_[*wait_].end_unix_ns = now;
    const observe::RequestRecord& r = ctx.record;
    Span& span = request_;
    span.end_unix_ns = now;
    span.Set("http.request.method", std::string(r.method));
    span.Set("url.path", std::string(r.path));
    span.Set("http.response.status_code", static_cast<std::int64_t>(r.status));
    span.SetIfAny("switchyard.model_group", r.model_group);
    span.SetIfAny("switchyard.deployment", r.deployment);
    span.SetIfAny("gen_ai.response.model", answered_model_);
    span.SetIfAny("switchyard.key", r.key);
    span.SetIfAny("switchyard.lane", r.lane);
    span.SetIfAny("switchyard.upstream_request_id", r.upstream_request_id);
    span.Set("switchyard.attempts", static_cast<std::int64_t>(r.attempts));
    span.Set("switchyard.fallback_depth", static_cast<std::int64_t>(r.fallback_depth));
    span.Set("switchyard.stream", r.stream);
    if (r.client_retry_count > 0) {
        span.Set("switchyard.client_retry_count", static_cast<std::int64_t>(r.client_retry_count));
    }
    if (r.input_tokens >= 0) span.Set("gen_ai.usage.input_tokens", r.input_tokens);
    if (r.output_tokens >= 0) span.Set("gen_ai.usage.output_tokens", r.output_tokens);
    if (r.cost_usd > 0) span.Set("switchyard.cost_usd", r.cost_usd);
    // A client error (4xx) is the client's; a 5xx, or an error after a 200 (a stream cut short,
    // the static degradation), is the gateway's to report.
    if (r.status >= 500 || r.status == 0 || (r.status < 400 && !r.error.empty())) {
        span.error = true;
        span.status_message = std::string(r.error);
        span.Set("error.type",
                 r.status >= 500 ? std::to_string(r.status) : std::string("incomplete"));
    }
    std::vector<Span> spans;
    spans.reserve(children_.size() + 1);
    spans.push_back(std::move(request_));
    for (Span& child : children_) spans.push_back(std::move(child));
    children_.clear();
    ctx.Context().traces->Submit(std::move(spans));
}

std::string UpstreamTraceParent(const RequestContext& ctx) {
    if (ctx.trace) return ctx.trace->UpstreamTraceParent();
    // Not recorded: the client's own header goes on as it came, when it is valid.
    if (ClientTraceParent(ctx)) return std::string(ctx.request.find("traceparent")->value());
    return {};
}

}  // namespace switchyard::server
