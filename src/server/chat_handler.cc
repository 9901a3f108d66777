#include "server/chat_handler.h"

#include <boost/json.hpp>
#include <random>

#include "api/openai_chat.h"
#include "api/usage.h"
#include "core/sse_parser.h"
#include "providers/openai_upstream.h"
#include "routing/weighted_pick.h"
#include "server/http_io.h"
#include "upstream/upstream_call.h"

namespace switchyard::server {
namespace {

constexpr std::size_t kMaxUpstreamBody = 64 * 1024 * 1024;

// Upstream response headers a client may act on, passed through unchanged.
constexpr std::string_view kPassThroughHeaders[] = {"retry-after", "retry-after-ms"};

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

// Headers that say who served: the model group, the deployment, the upstream's request id.
template <class Fields>
void SetServedHeaders(RequestContext& ctx, const config::Deployment& deployment, Fields& fields) {
    fields.set("x-switchyard-model-group", ctx.model_group);
    fields.set("x-switchyard-deployment", deployment.name);
    fields.set("x-switchyard-model", deployment.model);
    fields.set("x-switchyard-attempts", "1");
    if (!ctx.upstream_request_id.empty()) {
        fields.set("x-request-id", ctx.upstream_request_id);
        fields.set("x-switchyard-upstream-request-id", ctx.upstream_request_id);
    }
}

void NoteUsage(RequestContext& ctx, std::string_view json) {
    if (const auto usage = api::FindOpenAiUsage(json)) {
        ctx.record.input_tokens = usage->input_tokens;
        ctx.record.output_tokens = usage->output_tokens;
    }
}

asio::awaitable<void> RelayWhole(RequestContext& ctx, upstream::UpstreamCall& call,
                                 const config::Deployment& deployment) {
    std::string body;
    const bool ok = co_await call.ReadAll(body, kMaxUpstreamBody);
    if (!ok) {
        co_await WriteLocalError(ctx, call.Error());
        co_return;
    }
    const auto& header = call.Header();
    Response response{header.result(), 11};
    const std::string_view content_type = header[http::field::content_type];
    response.set(http::field::content_type,
                 content_type.empty() ? std::string_view("application/json") : content_type);
    for (std::string_view name : kPassThroughHeaders) {
        if (const auto it = header.find(name); it != header.end()) {
            response.set(name, it->value());
        }
    }
    SetServedHeaders(ctx, deployment, response);
    if (header.result() == http::status::ok) NoteUsage(ctx, body);
    response.body() = std::move(body);
    co_await WriteResponse(ctx, response);
}

// Forwards an SSE stream one complete event at a time: each upstream read is framed, and the
// events it completed go downstream in one chunk, so nothing is held back longer than it takes
// an event to arrive whole. A failure after the first byte went downstream (the commit point)
// ends the stream with an error event in OpenAI's format instead of a silent truncation.
asio::awaitable<void> RelayStream(RequestContext& ctx, upstream::UpstreamCall& call,
                                  const config::Deployment& deployment) {
    const auto& header = call.Header();
    http::response<http::empty_body> response{header.result(), 11};
    response.set(http::field::content_type, header[http::field::content_type]);
    response.set(http::field::cache_control, "no-cache");
    response.set(http::field::server, "switchyard");
    SetServedHeaders(ctx, deployment, response);
    response.keep_alive(ctx.keep_alive);
    response.chunked(true);
    ctx.record.status = response.result_int();

    http::response_serializer<http::empty_body> serializer{response};
    ctx.stream.expires_after(kDownstreamWriteTimeout);
    auto [header_ec, header_bytes] =
        co_await http::async_write_header(ctx.stream, serializer, kTuple);
    ctx.record.bytes_out += header_bytes;
    if (header_ec) {
        ctx.keep_alive = false;
        co_return;
    }

    core::SseParser sse;
    core::SseEvent event;
    std::string out;
    char buffer[16 * 1024];
    bool done_seen = false;
    while (!call.Done()) {
        const std::size_t n = co_await call.ReadSome(buffer, sizeof buffer);
        if (call.Failed()) break;
        if (n == 0) continue;
        sse.Feed({buffer, n});
        out.clear();
        while (sse.Next(event)) {
            out.append(event.raw);
            if (event.data == "[DONE]") done_seen = true;
            if (event.data.find("\"usage\":{") != std::string::npos) NoteUsage(ctx, event.data);
        }
        if (out.empty()) continue;
        ctx.stream.expires_after(kDownstreamWriteTimeout);
        auto [ec, written] =
            co_await asio::async_write(ctx.stream, http::make_chunk(asio::buffer(out)), kTuple);
        ctx.record.bytes_out += written;
        if (ec) {
            ctx.keep_alive = false;
            ctx.error = "client went away during the stream";
            co_return;
        }
    }
    out.clear();
    if (call.Failed()) {
        ctx.error = call.Error().message;
        out.append(sse.Pending());
        if (!out.empty()) out.append("\n\n");
        boost::json::object error{{"message", call.Error().message},
                                  {"type", "upstream_error"},
                                  {"param", nullptr},
                                  {"code", "stream_interrupted"}};
        out += "data: " + boost::json::serialize(boost::json::object{{"error", std::move(error)}}) +
               "\n\n";
    } else {
        out.append(sse.Pending());  // an unterminated last event is still the provider's bytes
        if (!done_seen) ctx.error = "upstream stream ended without [DONE]";
    }
    ctx.stream.expires_after(kDownstreamWriteTimeout);
    if (!out.empty()) {
        auto [ec, written] =
            co_await asio::async_write(ctx.stream, http::make_chunk(asio::buffer(out)), kTuple);
        ctx.record.bytes_out += written;
        if (ec) {
            ctx.keep_alive = false;
            co_return;
        }
    }
    auto [last_ec, last_written] =
        co_await asio::async_write(ctx.stream, http::make_chunk_last(), kTuple);
    ctx.record.bytes_out += last_written;
    ctx.stream.expires_never();
    if (last_ec) ctx.keep_alive = false;
}

}  // namespace

asio::awaitable<void> ServeChat(RequestContext& ctx) {
    ctx.record.route = "chat";
    ctx.record.bytes_in = ctx.request.body().size();
    auto parsed = api::ParseOpenAiChat(ctx.request.body());
    if (auto* error = std::get_if<core::LocalError>(&parsed)) {
        if (error->kind == core::ErrorKind::kModelNotFound) *error = UnknownModel(ctx.Config(), "");
        co_await WriteLocalError(ctx, *error);
        co_return;
    }
    api::ChatRequest& request = std::get<api::ChatRequest>(parsed);
    ctx.record.stream = request.stream;
    const config::ModelGroup* group = ctx.Config().FindGroup(request.model);
    if (group == nullptr) {
        const core::LocalError error = UnknownModel(ctx.Config(), request.model);
        co_await WriteLocalError(ctx, error);
        co_return;
    }
    ctx.model_group = group->name;

    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const config::Deployment& deployment = routing::PickWeighted(*group, uniform(ctx.worker.rng));
    ctx.deployment = deployment.name;

    const config::Timeouts& t = ctx.Config().timeouts;
    upstream::UpstreamCall call(ctx.worker.pool, ctx.Context().clock);
    const upstream::UpstreamCall::Timeouts timeouts{t.connect, t.first_byte,
                                                    ctx.Context().clock.Now() + t.total};
    providers::UpstreamRequest upstream_request =
        providers::BuildOpenAiChat(deployment, request, std::move(ctx.request.body()));
    const bool started = co_await call.Start(deployment, std::move(upstream_request), timeouts);
    if (!started) {
        co_await WriteLocalError(ctx, call.Error());
        co_return;
    }
    const auto& header = call.Header();
    if (const auto it = header.find(providers::RequestIdHeader(deployment.provider));
        it != header.end()) {
        ctx.upstream_request_id = std::string(it->value());
    }
    const std::string_view content_type = header[http::field::content_type];
    if (content_type.starts_with("text/event-stream")) {
        co_await RelayStream(ctx, call, deployment);
    } else {
        co_await RelayWhole(ctx, call, deployment);
    }
}

}  // namespace switchyard::server
