#pragma once

#include <string_view>

#include "api/local_reply.h"
#include "core/error.h"
#include "server/request_context.h"

namespace switchyard::server {

using Response = http::response<http::string_body>;

// Stamps connection headers, writes `response` downstream in one write and notes status and
// bytes in the request's record. False when the client is gone.
asio::awaitable<bool> WriteResponse(RequestContext& ctx, Response& response);

// Appends one header line, "name: value\r\n".
void AppendHeader(std::string& lines, std::string_view name, std::string_view value);

// The same as WriteResponse for a header given as lines (AppendHeader), without building a
// field container: `lines` gets Server, Content-Length and Connection appended and is written
// with the status line and `body` in one write.
asio::awaitable<bool> WriteAnswer(RequestContext& ctx, unsigned status, std::string& lines,
                                  std::string_view body);

// `error` in the client's wire format (OpenAI or Anthropic envelope).
api::LocalReply RenderLocalError(const RequestContext& ctx, const core::LocalError& error);

// A local reply for `error` in the client's wire format.
// Pass named objects: g++ 12 may destroy a temporary argument of a coroutine twice.
asio::awaitable<bool> WriteLocalError(RequestContext& ctx, const core::LocalError& error);

// A 200 with a body of the given content type.
asio::awaitable<bool> WriteBody(RequestContext& ctx, std::string body,
                                std::string_view content_type);

// The key a client presented: `Authorization: Bearer KEY` or `x-api-key: KEY` (empty: none).
std::string_view PresentedKey(const Request& request);

// WriteNow's progress callback for a downstream write: each part that goes asynchronously gets
// server.write_timeout on ctx.watch, so a client that takes no bytes for that long counts as gone,
// and one that reads slowly but steadily — a large stream over a slow link — is never cut.
inline auto ArmWriteStall(RequestContext& ctx) {
    return [&ctx] {
        ctx.watch.Arm(ctx.stream.socket(),
                      ctx.Context().clock.Now() + ctx.Config().server.write_timeout);
    };
}

// After a downstream write of `written` bytes that ended with `ec`: disarms the watch and counts
// the bytes. False when the write failed: the connection is not kept, and a client that stalled
// is named in ctx.error (one that left is the caller's to name).
bool EndWrite(RequestContext& ctx, const boost::system::error_code& ec, std::size_t written);

}  // namespace switchyard::server
