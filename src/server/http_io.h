#pragma once

#include <string_view>

#include "api/local_reply.h"
#include "core/error.h"
#include "server/request_context.h"

namespace switchyard::server {

using Response = http::response<http::string_body>;

// What one write downstream carries (Respond).
struct Reply {
    enum class Framing { kWhole, kStream };
    unsigned status = 200;
    // Header lines (AppendHeader), without the framing headers that Respond adds (Server,
    // Content-Length or Transfer-Encoding, Connection). A stream's go with its first part only.
    const std::string* lines = nullptr;
    std::string_view body;  // the whole body; or a stream's part, one chunk (none when empty)
    Framing framing = Framing::kWhole;
    bool last = true;  // a stream's final part: the terminating chunk goes with it
};

// Every final response leaves through here, success or error, whole or streamed
// (docs/architecture.md#the-answer): one write of the status line and headers (for a stream, with
// its first part: the commit point), the body or the stream's part. Records the status and the
// bytes in the request's record, hands a whole answer to the capture of kept answers (a stream's
// parts are captured by the relay as they are read), and bounds the write by
// server.write_timeout. False when the client is gone. Pass a named Reply: g++ 12 may destroy a
// temporary argument of a coroutine twice.
asio::awaitable<bool> Respond(RequestContext& ctx, const Reply& reply);

// A Beast response through Respond: its fields become the header lines.
asio::awaitable<bool> WriteResponse(RequestContext& ctx, Response& response);

// Appends one header line, "name: value\r\n".
void AppendHeader(std::string& lines, std::string_view name, std::string_view value);

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
