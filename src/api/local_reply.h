#pragma once

#include <boost/json/array.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace switchyard::api {

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

}  // namespace switchyard::api
