#include "server/http_io.h"

#include <fmt/format.h>

#include <array>

#include "api/anthropic_wire.h"
#include "api/local_reply.h"
#include "core/version.h"
#include "core/write_now.h"

namespace switchyard::server {

api::LocalReply RenderLocalError(const RequestContext& ctx, const core::LocalError& error) {
    return ctx.wire == api::Wire::kAnthropic ? api::RenderAnthropicError(error)
                                             : api::RenderOpenAiError(error);
}

void AppendHeader(std::string& lines, std::string_view name, std::string_view value) {
    lines.append(name).append(": ").append(value).append("\r\n");
}

asio::awaitable<bool> WriteResponse(RequestContext& ctx, Response& response) {
    std::string lines;
    lines.reserve(512);
    for (const auto& field : response.base()) {
        const std::string_view name = field.name_string();
        if (beast::iequals(name, "content-length") || beast::iequals(name, "connection") ||
            beast::iequals(name, "transfer-encoding")) {
            continue;
        }
        AppendHeader(lines, name, field.value());
    }
    co_return co_await WriteAnswer(ctx, response.result_int(), lines, response.body());
}

asio::awaitable<bool> WriteAnswer(RequestContext& ctx, unsigned status, std::string& lines,
                                  std::string_view body) {
    ctx.record.status = status;
    if (ctx.capture != nullptr) ctx.capture->Whole(status, lines, body);
    // The header is serialised by hand in one pass: Beast's generic serializer costs several
    // times more CPU per response, and the body goes out in the same write.
    std::array<char, 64> status_line;
    const std::string_view reason = http::obsolete_reason(static_cast<http::status>(status));
    const auto line_end = fmt::format_to_n(status_line.data(), status_line.size(),
                                           "HTTP/1.1 {} {}\r\n", status, reason);
    lines.append("Server: switchyard\r\nContent-Length: ")
        .append(std::to_string(body.size()))
        .append(ctx.keep_alive ? "\r\n\r\n" : "\r\nConnection: close\r\n\r\n");
    const std::array<asio::const_buffer, 3> buffers{
        asio::buffer(status_line.data(),
                     static_cast<std::size_t>(line_end.out - status_line.data())),
        asio::buffer(lines), asio::buffer(body)};
    // A small answer fits the socket buffer and is written at once, with no deadline to arm; the
    // rest of a large one may take as long as the client keeps reading.
    auto [ec, written] = co_await core::WriteNow(ctx.stream.socket(), buffers, ArmWriteStall(ctx));
    co_return EndWrite(ctx, ec, written);
}

bool EndWrite(RequestContext& ctx, const boost::system::error_code& ec, std::size_t written) {
    const bool stalled = ctx.watch.Fired();
    ctx.watch.Reset();  // the next upstream read may take longer than a write may
    ctx.record.bytes_out += written;
    if (!ec) return true;
    ctx.keep_alive = false;
    if (stalled) {
        ctx.error = "the client read nothing for " +
                    std::to_string(ctx.Config().server.write_timeout.count()) +
                    " ms: the answer was cut";
    }
    return false;
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
    for (const auto& [name, value] : ctx.reply_headers) response.set(name, value);
    response.body() = std::move(body);
    co_return co_await WriteResponse(ctx, response);
}

}  // namespace switchyard::server
