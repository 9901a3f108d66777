#include "server/http_io.h"

#include "api/anthropic_wire.h"
#include "api/local_reply.h"
#include "core/version.h"

namespace switchyard::server {

api::LocalReply RenderLocalError(const RequestContext& ctx, const core::LocalError& error) {
    return ctx.wire == api::Wire::kAnthropic ? api::RenderAnthropicError(error)
                                             : api::RenderOpenAiError(error);
}

asio::awaitable<bool> WriteResponse(RequestContext& ctx, Response& response) {
    response.version(11);
    response.keep_alive(ctx.keep_alive);
    response.set(http::field::server, "switchyard");
    response.prepare_payload();
    ctx.record.status = response.result_int();
    // A small answer fits the socket buffer and is written at once; arming a timer for it would
    // cost a timer syscall per request. Large ones get the write timeout.
    const bool large = response.body().size() > kUntimedWriteBytes;
    if (large)
        ctx.watch.Arm(ctx.stream.socket(), ctx.Context().clock.Now() + kDownstreamWriteTimeout);
    auto [ec, written] = co_await http::async_write(ctx.stream, response, kTuple);
    ctx.watch.Disarm();
    ctx.record.bytes_out += written;
    if (ec) {
        ctx.keep_alive = false;
        co_return false;
    }
    co_return true;
}

asio::awaitable<bool> WriteLocalError(RequestContext& ctx, const core::LocalError& error) {
    api::LocalReply reply = RenderLocalError(ctx, error);
    ctx.error = error.message;
    Response response{static_cast<http::status>(reply.status), 11};
    response.set(http::field::content_type, "application/json");
    for (const auto& [name, value] : ctx.reply_headers) response.set(name, value);
    response.body() = std::move(reply.body);
    if (error.kind == core::ErrorKind::kPayloadTooLarge) ctx.keep_alive = false;
    co_return co_await WriteResponse(ctx, response);
}

asio::awaitable<bool> WriteBody(RequestContext& ctx, std::string body,
                                std::string_view content_type) {
    Response response{http::status::ok, 11};
    response.set(http::field::content_type, content_type);
    response.body() = std::move(body);
    co_return co_await WriteResponse(ctx, response);
}

}  // namespace switchyard::server
