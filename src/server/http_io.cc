#include "server/http_io.h"

#include <array>

#include "api/anthropic_wire.h"
#include "api/local_reply.h"
#include "core/version.h"

namespace switchyard::server {

api::LocalReply RenderLocalError(const RequestContext& ctx, const core::LocalError& error) {
    return ctx.wire == api::Wire::kAnthropic ? api::RenderAnthropicError(error)
                                             : api::RenderOpenAiError(error);
}

asio::awaitable<bool> WriteResponse(RequestContext& ctx, Response& response) {
    ctx.record.status = response.result_int();
    // The header is serialised here in one pass: Beast's generic serializer costs several times
    // more CPU per response than this, and the body goes out in the same write.
    std::string head;
    head.reserve(512);
    head.append("HTTP/1.1 ").append(std::to_string(response.result_int())).push_back(' ');
    head.append(response.reason().empty()
                    ? std::string_view(http::obsolete_reason(response.result()))
                    : std::string_view(response.reason()));
    head.append("\r\n");
    for (const auto& field : response.base()) {
        const std::string_view name = field.name_string();
        if (beast::iequals(name, "content-length") || beast::iequals(name, "connection") ||
            beast::iequals(name, "transfer-encoding")) {
            continue;
        }
        head.append(name).append(": ").append(std::string_view(field.value())).append("\r\n");
    }
    head.append("Server: switchyard\r\nContent-Length: ")
        .append(std::to_string(response.body().size()))
        .append(ctx.keep_alive ? "\r\n\r\n" : "\r\nConnection: close\r\n\r\n");
    const std::array<asio::const_buffer, 2> buffers{asio::buffer(head),
                                                    asio::buffer(response.body())};
    // A small answer fits the socket buffer and is written at once; arming a timer for it would
    // cost a timer syscall per request. Large ones get the write timeout.
    const bool large = response.body().size() > kUntimedWriteBytes;
    if (large)
        ctx.watch.Arm(ctx.stream.socket(), ctx.Context().clock.Now() + kDownstreamWriteTimeout);
    auto [ec, written] = co_await asio::async_write(ctx.stream, buffers, kTuple);
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

std::string_view PresentedKey(const Request& request) {
    if (const auto it = request.find(http::field::authorization); it != request.end()) {
        std::string_view value = it->value();
        if (value.size() > 7 && beast::iequals(value.substr(0, 7), "bearer "))
            value.remove_prefix(7);
        return value;
    }
    if (const auto it = request.find("x-api-key"); it != request.end()) return it->value();
    return {};
}

asio::awaitable<bool> WriteBody(RequestContext& ctx, std::string body,
                                std::string_view content_type) {
    Response response{http::status::ok, 11};
    response.set(http::field::content_type, content_type);
    response.body() = std::move(body);
    co_return co_await WriteResponse(ctx, response);
}

}  // namespace switchyard::server
