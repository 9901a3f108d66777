#pragma once

#include <boost/json/object.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "core/error.h"

namespace switchyard::api {

// OpenAI's Responses API against the canonical form (Chat Completions), for a chain that reaches
// a deployment that speaks only Chat Completions (or, through it, Anthropic Messages). Pure; the
// stateless subset crosses both ways (docs/providers.md#openai-responses). Decisions:
// - Carried: `input` (a string, or items: messages with text and image parts, function calls
//   and their outputs), `instructions`, function `tools`, `tool_choice`, `max_output_tokens`,
//   `temperature`, `top_p`, `parallel_tool_calls`, `text.format` (json_object, json_schema),
//   `reasoning.effort`, `user`, `stream`.
// - Dropped (no effect on the generated text): `store` false, `metadata`, `prompt_cache_key`,
//   `safety_identifier`, `stream_options`, `truncation` "disabled", `service_tier` auto/default,
//   `text.format` text, earlier `reasoning` items of the input, the gateway fields.
// - Refused with 400 naming the field (state or tools only the Responses API has):
//   `previous_response_id`, `conversation`, `store` true, `background`, `include`, built-in
//   tools (web search, file search, computer use, …) and a tool_choice naming one, `input_file`
//   parts, images by file id, `item_reference` items, `prompt`, `max_tool_calls`,
//   `top_logprobs`, `reasoning.summary`, and any field this file does not know.

// A Responses request as a chat completions request (the canonical form), or why it cannot be.
std::variant<boost::json::object, core::LocalError> ResponsesRequestToChat(
    const boost::json::object& request);

// A chat.completion answer as a Responses `response` object. `request` is the client's Responses
// request, whose settings the response echoes (instructions, tools, tool_choice, ...).
boost::json::object ChatAnswerToResponse(const boost::json::object& completion,
                                         const boost::json::object& request, std::int64_t created);

// chat.completion.chunk events (with a usage chunk) and `[DONE]` -> Responses stream events
// (`event: <type>` and `data` with its `type` and `sequence_number`): response.created and
// .in_progress, output items with their text and function-call-argument deltas and .done events,
// then response.completed (or .incomplete) carrying the whole response. An error chunk becomes an
// `error` event. One per stream; not thread-safe.
class ChatToResponsesStream final {
  public:
    ChatToResponsesStream(const boost::json::object& request, std::int64_t created);
    void Feed(std::string_view event_name, std::string_view data, std::string& out);
    // The sequence_number the stream's next event takes (an error event that ends it, say).
    std::int64_t NextSequence() const { return sequence_; }

  private:
    struct ToolCall {
        std::string id;  // fc_…
        std::string call_id;
        std::string name;
        std::string arguments;
        std::int64_t output_index = 0;
    };
    void Emit(std::string_view type, boost::json::object data, std::string& out);
    void Start(const boost::json::object& chunk, std::string& out);
    void OpenMessage(std::string& out);
    void CloseMessage(std::string& out);
    void Finish(std::string& out);
    boost::json::object Response(std::string_view status) const;

    boost::json::object echo_;  // the request's settings a response carries
    std::int64_t created_ = 0;
    std::int64_t sequence_ = 0;
    bool started_ = false;
    bool finished_ = false;
    std::string id_;     // resp_…
    std::string model_;  // as the upstream names it
    // The output in order: the message (text) and the function calls.
    bool message_open_ = false;
    bool message_done_ = false;
    std::int64_t message_index_ = -1;
    std::string message_id_;
    std::string text_;
    std::map<std::int64_t, ToolCall> tools_;  // chat tool_calls index -> call
    std::int64_t next_output_index_ = 0;
    std::string finish_reason_;
    boost::json::object usage_;  // Responses usage, once the usage chunk came
};

// The SSE `error` event of a Responses stream.
std::string ResponsesErrorEvent(std::string_view code, std::string_view message,
                                std::int64_t sequence_number);

// The `sequence_number` of a Responses stream event's data, read without parsing it; nullopt when
// it has none.
std::optional<std::int64_t> SequenceNumberOf(std::string_view data);

}  // namespace switchyard::api
