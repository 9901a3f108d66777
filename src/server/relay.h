#pragma once

#include <boost/json/object.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "server/attempt_race.h"
#include "server/output_check.h"
#include "server/request_context.h"
#include "server/served_answer.h"
#include "upstream/upstream_call.h"

namespace switchyard::server {

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
    // The attempt's place in a race for the client (docs/resilience.md#hedged-attempts): it must
    // claim the client before anything goes downstream (null: it runs alone).
    const RaceSeat* seat = nullptr;
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
    // The longest wait between two reads that carried content, after the first.
    std::optional<std::chrono::milliseconds> longest_gap;
    // What is wrong with a whole stream held back (background, assembled) whose text does not
    // match the schema, when that fails the attempt: nothing went downstream.
    std::string invalid_output;
    // Another attempt of its race answered the client first: nothing went downstream.
    bool lost = false;

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
