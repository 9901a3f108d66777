#include "server/http_io.h"

#include <fmt/format.h>

#include <array>

#include "answers/stored_answer.h"
#include "api/local_reply.h"
#include "core/version.h"
#include "core/write_now.h"

namespace switchyard::server {

void AppendHeader(std::string& lines, std::string_view name, std::string_view value) {
    lines.append(name).append(": ").append(value).append("\r\n");
}

asio::awaitable<bool> WriteResponse(RequestContext& ctx, Response& response) {
    std::string lines;
    lines.reserve(512);
    for (const auto& field : response.base()) {
        const std::string_view name = field.name_string();
        if (answers::IsFramingHeader(name)) continue;
        AppendHeader(lines, name, field.value());
    }
    const Reply reply{response.result_int(), &lines, response.body()};
    co_return co_await Respond(ctx, reply);
}

asio::awaitable<bool> Respond(RequestContext& ctx, const Reply& reply) {
    static const std::string kNoLines;
    const std::string& lines = reply.lines != nullptr ? *reply.lines : kNoLines;
    const bool stream = reply.framing == Reply::Framing::kStream;
    // The head goes with a whole answer, and with a stream's first part.
    const bool head = !stream || !ctx.stream_open;
    // The head is serialised by hand in one pass: Beast's generic serializer costs several times
    // more CPU per response, and the body goes out in the same write.
    std::array<char, 64> status_line;
    std::array<char, 96> framing;
    std::size_t status_size = 0;
    std::size_t framing_size = 0;
    if (head) {
        ctx.record.status = reply.status;
        if (!stream && ctx.capture != nullptr) ctx.capture->Whole(reply.status, lines, reply.body);
        const std::string_view reason =
            http::obsolete_reason(static_cast<http::status>(reply.status));
        status_size =
            static_cast<std::size_t>(fmt::format_to_n(status_line.data(), status_line.size(),
                                                      "HTTP/1.1 {} {}\r\n", reply.status, reason)
                                         .out -
                                     status_line.data());
        const std::string_view connection = ctx.keep_alive ? "" : "Connection: close\r\n";
        framing_size = static_cast<std::size_t>(
            (stream ? fmt::format_to_n(framing.data(), framing.size(),
                                       "Server: switchyard\r\nTransfer-Encoding: chunked\r\n{}\r\n",
                                       connection)
                    : fmt::format_to_n(framing.data(), framing.size(),
                                       "Server: switchyard\r\nContent-Length: {}\r\n{}\r\n",
                                       reply.body.size(), connection))
                .out -
            framing.data());
    }
    // A stream's part is one chunk (none when empty), the terminating chunk after the last.
    std::array<char, 20> size_line;
    std::size_t size_size = 0;
    const bool chunk = stream && !reply.body.empty();
    if (chunk) {
        size_size = static_cast<std::size_t>(
            fmt::format_to_n(size_line.data(), size_line.size(), "{:x}\r\n", reply.body.size())
                .out -
            size_line.data());
    }
    static constexpr std::string_view kChunkEnd = "\r\n";
    static constexpr std::string_view kLastChunk = "0\r\n\r\n";
    const std::array<asio::const_buffer, 7> buffers{
        asio::buffer(status_line.data(), status_size),
        asio::buffer(lines.data(), head ? lines.size() : 0),
        asio::buffer(framing.data(), framing_size),
        asio::buffer(size_line.data(), size_size),
        asio::buffer(reply.body.data(), reply.body.size()),
        asio::buffer(kChunkEnd.data(), chunk ? kChunkEnd.size() : 0),
        asio::buffer(kLastChunk.data(), stream && reply.last ? kLastChunk.size() : 0)};
    if (stream) ctx.stream_open = !reply.last;
    // A small answer fits the socket buffer and is written at once, with no deadline to arm; the
    // rest of a large one may take as long as the client keeps reading.
    auto [ec, written] = co_await core::WriteNow(ctx.stream.socket(), buffers, ArmWriteStall(ctx));
    if (!EndWrite(ctx, ec, written)) {
        ctx.stream_open = false;  // nobody left to tell
        co_return false;
    }
    co_return true;
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
    api::LocalReply reply = api::RenderError(ctx.wire, error);
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
