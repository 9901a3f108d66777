#include "server/http_io.h"

#include "api/local_reply.h"
#include "core/version.h"

namespace switchyard::server {

asio::awaitable<bool> WriteResponse(RequestContext& ctx, Response& response) {
    response.version(11);
    response.keep_alive(ctx.keep_alive);
    response.set(http::field::server, "switchyard");
    response.prepare_payload();
    ctx.record.status = response.result_int();
    ctx.stream.expires_after(kDownstreamWriteTimeout);
    auto [ec, written] = co_await http::async_write(ctx.stream, response, kTuple);
    ctx.stream.expires_never();
    ctx.record.bytes_out += written;
    if (ec) {
        ctx.keep_alive = false;
        co_return false;
    }
    co_return true;
}

asio::awaitable<bool> WriteLocalError(RequestContext& ctx, const core::LocalError& error) {
    api::LocalReply reply = api::RenderOpenAiError(error);
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
