#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/openai_chat.h"
#include "core/error.h"

namespace switchyard::api {

// Every answer Switchyard makes itself, rendered in the client's API: errors whole
// (RenderError), the event that ends a broken stream (StreamErrorEvent) and the static
// degradation (RenderDegradation).

// A response the gateway makes itself: status plus a body in the client's wire format.
struct LocalReply {
    unsigned status = 500;
    std::string body;  // application/json
};

// The attempts an error body lists (both APIs' envelopes carry the same array).
boost::json::array AttemptsJson(const std::vector<core::AttemptNote>& attempts);

// OpenAI's error envelope: {"error":{"message","type","param","code"}}
// (docs/providers.md#openai-errors).
LocalReply RenderOpenAiError(const core::LocalError& error);

// A controlled degradation: a chat completion with a fixed assistant message, as JSON or, for
// `stream`, as an SSE stream (one content chunk, a finish chunk, [DONE]).
std::string RenderOpenAiStaticCompletion(std::string_view content, long long created_unix,
                                         bool stream);

// `error` in the envelope of the client's API `front`: Anthropic's for an Anthropic client,
// OpenAI's for the Chat Completions and Responses APIs.
LocalReply RenderError(Wire front, const core::LocalError& error);

// The event that ends a stream broken after its commit point, in the client's API `front`:
// Switchyard's `stream_interrupted` error with `message` saying what failed (a Responses stream's
// event takes `sequence` as its sequence_number: the stream's next).
std::string StreamErrorEvent(Wire front, std::string_view message, std::int64_t sequence);

// The static degradation in the client's API `front`: a completion with the fixed `content`,
// whole or (for `stream`) as a stream; a Responses client's echoes its `request`.
std::string RenderDegradation(Wire front, std::string_view content, std::int64_t created,
                              bool stream, const boost::json::object& request);

}  // namespace switchyard::api
