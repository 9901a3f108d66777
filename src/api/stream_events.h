#pragma once

#include <string>
#include <string_view>

#include "core/sse_parser.h"

namespace switchyard::api {

// What an upstream SSE event means to the relay, for either provider's stream
// (docs/providers.md#streams). Pure predicates over one framed event.

// An upstream error event: Anthropic's `event: error`, or an OpenAI chunk whose JSON has "error".
bool IsErrorEvent(const core::SseEvent& event);

// Whether the event carries what the client came for: text, a tool call, a refusal, a finish
// reason, usage, or the end of the stream. Everything before the first such event (the role chunk,
// message_start, an empty content_block_start, pings) may be held back: that first one is the
// commit point. An event that is not JSON counts as content: it is not the relay's to judge.
bool CarriesContent(const core::SseEvent& event);

// The event that ends a complete stream: OpenAI's `data: [DONE]`, Anthropic's `message_stop`.
bool IsEndEvent(const core::SseEvent& event);

// Whether the event shows the upstream is still producing (it restarts the between-chunks timer).
// Pings and comments do only when `pings_are_progress`.
bool IsProgress(const core::SseEvent& event, bool pings_are_progress);

// The human-readable message of an error event or error body of either provider (error.message),
// or the text itself, shortened, when it has none.
std::string ErrorMessageOf(std::string_view json);

}  // namespace switchyard::api
