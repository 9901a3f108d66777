#include "server/relay.h"

#include <boost/json.hpp>

#include "api/usage.h"
#include "core/sse_parser.h"
#include "server/http_io.h"

namespace switchyard::server {
namespace {

// Upstream response headers a client may act on, passed through unchanged.
constexpr std::string_view kPassThroughHeaders[] = {"retry-after", "retry-after-ms"};

void NoteUsage(RequestContext& ctx, std::string_view json) {
    if (const auto usage = api::FindOpenAiUsage(json)) {
        ctx.record.input_tokens = usage->input_tokens;
        ctx.record.output_tokens = usage->output_tokens;
    }
}

}  // namespace

void SetServedHeaders(const RequestContext& ctx, http::fields& fields) {
    fields.set("x-switchyard-model-group", ctx.model_group);
    fields.set("x-switchyard-deployment", ctx.deployment);
    fields.set("x-switchyard-model", ctx.model);
    fields.set("x-switchyard-attempts", std::to_string(ctx.record.attempts));
    fields.set("x-switchyard-fallback-depth", std::to_string(ctx.record.fallback_depth));
    if (!ctx.upstream_request_id.empty()) {
        fields.set("x-request-id", ctx.upstream_request_id);
        fields.set("x-switchyard-upstream-request-id", ctx.upstream_request_id);
    }
}

asio::awaitable<void> WriteUpstreamAnswer(RequestContext& ctx,
                                          const http::response_header<>& header,
                                          std::string& body) {
    Response response{header.result(), 11};
    const std::string_view content_type = header[http::field::content_type];
    response.set(http::field::content_type,
                 content_type.empty() ? std::string_view("application/json") : content_type);
    for (std::string_view name : kPassThroughHeaders) {
        if (const auto it = header.find(name); it != header.end()) response.set(name, it->value());
    }
    SetServedHeaders(ctx, response);
    if (header.result() == http::status::ok) NoteUsage(ctx, body);
    response.body() = std::move(body);
    co_await WriteResponse(ctx, response);
}

// Each upstream read is framed by SseParser and the events it completed go downstream as one
// chunk, so nothing is held back longer than it takes an event to arrive whole.
asio::awaitable<void> RelayStream(RequestContext& ctx, upstream::UpstreamCall& call) {
    const auto& header = call.Header();
    http::response<http::empty_body> response{header.result(), 11};
    response.set(http::field::content_type, header[http::field::content_type]);
    response.set(http::field::cache_control, "no-cache");
    response.set(http::field::server, "switchyard");
    SetServedHeaders(ctx, response);
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

}  // namespace switchyard::server
