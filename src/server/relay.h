#pragma once

#include <boost/json/object.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <variant>

#include "server/output_check.h"
#include "server/request_context.h"
#include "upstream/upstream_call.h"

namespace switchyard::server {

// Sets the headers that say who served: model group, deployment, model, attempt count, fallback
// depth and the provider's request id.
void SetServedHeaders(const RequestContext& ctx, http::fields& fields);

// A whole response body of API `from` in API `to`: success bodies and error envelopes. `created`
// is the Unix time a translated chat.completion carries. An error envelope always translates; a
// success body the client's API cannot express is a kUpstreamProtocol error, never a silent loss.
// `request` is the client's request, which a Responses answer echoes (null: an empty one).
std::variant<std::string, core::LocalError> TranslateBody(
    std::string_view body, unsigned status, api::Wire from, api::Wire to, std::int64_t created,
    const boost::json::object* request = nullptr);

// The Unix time translated answers carry as `created`.
std::int64_t UnixNow(const RequestContext& ctx);

// Writes an upstream answer that was read whole (JSON success, or an error passed through):
// its status, content type and body — translated to the client's API when `upstream` differs
// from it (a success body is translated by the caller first, where a refusal can still fail the
// attempt) — retry-after passed through, the served headers added.
asio::awaitable<void> WriteUpstreamAnswer(RequestContext& ctx,
                                          const upstream::ResponseHeader& header, std::string& body,
                                          api::Wire upstream);

// How a stream is relayed.
struct StreamOptions {
    bool background = false;                // hold the whole stream; retry on any failure
    std::chrono::milliseconds first_token;  // headers -> first content event
    std::chrono::milliseconds chunk;        // between events once content flows
    bool pings_are_progress = false;
    // Answer with one chat.completion assembled from the stream (the client did not ask for a
    // stream; it was streamed upstream because it may run long). Implies background.
    bool assemble = false;
    api::Wire upstream = api::Wire::kOpenAi;       // what the deployment speaks
    api::Wire front = api::Wire::kOpenAi;          // what the client speaks
    bool include_usage = false;                    // the client asked for OpenAI's usage chunk
    const boost::json::object* request = nullptr;  // the client's request (Responses echoes it)
    // The JSON schema the answer must match: checked when the stream ends (null: none).
    const OutputCheck* check = nullptr;
};

// How a relayed stream ended. A failure before the commit point fails the attempt (nothing went
// downstream); one after it was reported to the client as an error event, and still counts as a
// failure of the deployment.
struct StreamResult {
    bool committed = false;  // bytes went downstream: the request is answered, whatever follows
    policy::Transport transport = policy::Transport::kOk;  // a reset, a stall, a malformed body
    core::LocalError error;                                // its description
    std::string error_event;                               // the data of an upstream error event
    std::optional<std::chrono::steady_clock::time_point> first_content;  // its first content event
    // What is wrong with a whole stream held back (background, assembled) whose text does not
    // match the schema, when that fails the attempt: nothing went downstream.
    std::string invalid_output;

    bool Failed() const { return transport != policy::Transport::kOk || !error_event.empty(); }
};

// Relays an upstream SSE stream by the rules of api::StreamRelay (the commit point, translation,
// failures on either side of it; docs/providers.md#streams), with the reads bounded by the
// first-token and between-chunks timeouts (docs/resilience.md#timeouts). A failure after the
// commit point ends the stream with an error event and a clean chunked terminator — never a
// silent truncation.
asio::awaitable<StreamResult> RelayStream(RequestContext& ctx, upstream::UpstreamCall& call,
                                          StreamOptions options);

}  // namespace switchyard::server
