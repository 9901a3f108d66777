#include "server/relay.h"

#include <boost/json.hpp>
#include <optional>

#include "api/stream_events.h"
#include "api/stream_relay.h"
#include "api/whole_answer.h"
#include "server/http_io.h"
#include "server/test_faults.h"

namespace switchyard::server {
namespace {

// The header lines of a stream's response, at its commit point: SSE when translated (else the
// upstream's content type), no caching, who served. The status goes in the request's record and
// the head to the capture of kept answers.
std::string OpenStream(RequestContext& ctx, const upstream::ResponseHeader& header,
                       bool translating) {
    std::string lines;
    lines.reserve(512);
    const std::string_view upstream_type = header[http::field::content_type];
    AppendHeader(
        lines, "Content-Type",
        translating ? std::string_view("text/event-stream; charset=utf-8") : upstream_type);
    AppendHeader(lines, "Cache-Control", "no-cache");
    AppendServedHeaders(ctx, lines);
    ctx.record.status = header.result_int();
    if (ctx.capture != nullptr) ctx.capture->StreamHead(header.result_int(), lines);
    return lines;
}

// How a stream that ended failed, in `result`; nothing when it ended well.
void NoteEnding(upstream::UpstreamCall& call, const api::StreamRelay& relay, StreamResult& result) {
    result.error_event = relay.ErrorEvent();
    if (call.Failed()) {
        result.transport = call.Transport();
        result.error = call.Error();
        return;
    }
    switch (relay.EndingOf()) {
        case api::StreamRelay::Ending::kOversized:
            result.transport = policy::Transport::kProtocol;
            result.error = {core::ErrorKind::kUpstreamProtocol,
                            "The upstream sent a stream event larger than " +
                                std::to_string(api::StreamRelay::kMaxEventBytes >> 20) + " MiB."};
            return;
        case api::StreamRelay::Ending::kTruncated:
            // A clean end without [DONE] / message_stop is no complete answer either.
            result.transport = policy::Transport::kTruncated;
            result.error = {core::ErrorKind::kUpstreamProtocol,
                            "The upstream stream ended before its end event."};
            return;
        case api::StreamRelay::Ending::kErrorEvent:
        case api::StreamRelay::Ending::kComplete:
            return;
    }
}

// Assemble mode's answer: the held stream as one JSON answer in the client's API. False when the
// client's API cannot carry it (nothing went downstream: a failed attempt).
asio::awaitable<bool> WriteAssembled(RequestContext& ctx, const api::StreamRelay& relay,
                                     api::Wire front, StreamResult& result) {
    Response json{http::status::ok, 11};
    json.set(http::field::content_type, "application/json");
    SetServedHeaders(ctx, json);
    auto answer =
        api::TranslateWholeAnswer(relay.Assembled(), 200, api::Wire::kOpenAi, front, UnixNow(ctx));
    if (auto* error = std::get_if<core::LocalError>(&answer)) {
        result.transport = policy::Transport::kProtocol;
        result.error = std::move(*error);
        co_return false;
    }
    json.body() = std::move(std::get<std::string>(answer));
    co_await WriteResponse(ctx, json);
    co_return true;
}

}  // namespace

asio::awaitable<StreamResult> RelayStream(RequestContext& ctx, upstream::UpstreamCall& call,
                                          StreamOptions options) {
    const core::Clock& clock = ctx.Context().clock;
    StreamResult result;
    api::StreamRelay relay({options.upstream, options.front, options.background, options.assemble,
                            options.include_usage, options.pings_are_progress,
                            options.check != nullptr, options.request, UnixNow(ctx)});
    relay.on_usage = [&ctx](std::string_view json) { NoteUsage(ctx, json); };
    const unsigned status = call.Header().result_int();
    std::string lines;         // the response head's lines, from the commit point
    bool client_lost = false;  // a detached request's client left: nothing more is written
    char buffer[16 * 1024];
    std::optional<std::chrono::steady_clock::time_point> last_progress;
    call.SetReadDeadline(clock.Now() + options.first_token);
    const auto beaten = [&] {  // it may not answer: another attempt of its race claimed the client
        result.lost = options.seat != nullptr && !options.seat->Claim(ctx);
        return result.lost;
    };
    while (!call.Done()) {
        const std::size_t n = co_await call.ReadSome(buffer, sizeof buffer);
        if (call.Failed()) break;
        if (options.seat != nullptr && !result.committed && options.seat->Lost()) {
            result.lost = true;
            co_return result;
        }
        if (n == 0) continue;
        const api::StreamRelay::Read read = relay.Feed({buffer, n});
        ctx.next_sequence = relay.NextSequence();
        if (read.content_began) result.first_content = clock.Now();
        if (read.commits) {
            if (beaten()) co_return result;
            result.committed = true;  // an early return below (the client left) is answered too
            lines = OpenStream(ctx, call.Header(), relay.Translating());
        }
        if (read.stop) break;
        if (read.progress) {
            const auto now = clock.Now();
            if (last_progress) {
                const auto gap = std::chrono::ceil<std::chrono::milliseconds>(now - *last_progress);
                result.longest_gap = std::max(result.longest_gap.value_or(gap), gap);
            }
            last_progress = now;
            call.SetReadDeadline(now + options.chunk);
        }
        // The upstream has ended: this read's events go out with the terminating chunk, below.
        if (relay.Out().empty() || call.Done()) continue;
        if (ctx.capture != nullptr) ctx.capture->StreamBytes(relay.Out());
        if (client_lost) {
            relay.Out().clear();  // a detached request relays on for its stored answer only
            continue;
        }
        const Reply part{status, &lines, relay.Out(), Reply::Framing::kStream, false};
        const bool sent = co_await Respond(ctx, part);
        relay.Out().clear();
        if (!sent) {
            if (ctx.error.empty()) ctx.error = "client went away during the stream";
            if (!ctx.detached) co_return result;
            client_lost = true;
        }
        ThrowIfTestFault(ctx, "mid-stream");
    }
    result.committed = relay.Committed();
    NoteEnding(call, relay, result);
    if (options.check != nullptr && !result.Failed()) {
        // A whole answer: checked against the schema. One held back that fails may fail the
        // attempt; one already streamed can only be counted.
        std::optional<std::string> problem =
            co_await CheckOutput(ctx, *options.check, relay.Text(), ctx.deployment);
        if (problem && options.check->fall_back && !result.committed) {
            result.invalid_output = std::move(*problem);
            co_return result;
        }
    }
    if (!result.committed) {
        // Before the commit point (or anywhere when held whole) a failure fails the attempt.
        if (result.Failed() || beaten()) co_return result;
        relay.CommitWhole();
        result.committed = true;
        if (options.assemble) {
            result.committed = co_await WriteAssembled(ctx, relay, options.front, result);
            co_return result;
        }
        // A whole stream (background mode, or one without content): delivered below, in one
        // write with its head.
        lines = OpenStream(ctx, call.Header(), relay.Translating());
    }
    std::string failure;
    if (result.Failed()) {
        failure = result.error_event.empty() ? result.error.message
                                             : "The upstream failed during the stream: " +
                                                   api::ErrorMessageOf(result.error_event);
        ctx.error = failure;
    }
    std::string out = relay.Tail(result.Failed() ? &failure : nullptr,
                                 result.transport == policy::Transport::kTruncated);
    if (ctx.capture != nullptr) {
        ctx.capture->StreamBytes(out);
        ctx.capture->StreamEnd();
        // A stream broken after its commit point is no answer to keep.
        if (result.Failed()) ctx.capture->transient = true;
    }
    if (client_lost) co_return result;
    // The rest, the error event if any and the terminating chunk (and the head of a stream
    // delivered whole): one write.
    const Reply end{status, &lines, out, Reply::Framing::kStream, true};
    co_await Respond(ctx, end);
    co_return result;
}

}  // namespace switchyard::server
