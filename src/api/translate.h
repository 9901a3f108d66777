#pragma once

#include <boost/json/object.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>

#include "core/error.h"

namespace switchyard::api {

// Pure translation between OpenAI Chat Completions and Anthropic Messages (docs/providers.md):
// requests, responses, error bodies and SSE streams, both ways. No I/O. The definitions are split
// by concern: translate_requests_to_openai.cc and translate_requests_to_anthropic.cc (requests,
// one file per direction), translate_answers.cc (responses and error bodies) and
// translate_streams.cc; what more than one of them needs is in translate_common.h and
// json_access.h.
//
// What does not carry over is refused, never silently lost. Decisions:
// - Dropped (hints with no effect on the generated text): Anthropic `cache_control` (prompt
//   caching only changes billing and latency), `thinking` of type "disabled", `service_tier`
//   "auto" / "default"; OpenAI `stream_options` (a stream always asks for usage upstream),
//   image `detail`, `store` false, the gateway fields `models` / `fallbacks`, and neutral values
//   (`n` 1, `logprobs` false, `response_format` text, `modalities` ["text"], zero penalties,
//   empty `logit_bias`, null anything).
// - Refused with 400 naming the parameter: Anthropic `thinking`, `top_k`, `container`,
//   `mcp_servers`, server tools, document / search-result / thinking blocks, images inside a
//   tool result, file image sources; OpenAI `n` > 1, `logprobs` / `top_logprobs`,
//   `response_format` other than text, `audio` / audio modalities, `functions` /
//   `function_call`, `logit_bias`, non-zero `presence_penalty` / `frequency_penalty`, `seed`
//   (a determinism promise Anthropic cannot keep), `temperature` > 1, `store` true, `metadata`,
//   `reasoning_effort`, `prediction`, `web_search_options`, message `name`, audio and file
//   parts, strict tools; and any parameter this file does not know.
// - A tool result with is_error becomes an OpenAI tool message whose text starts with "Error: ".
// - Answers: content a translator refuses (a Refusal) is never dropped; it fails a whole answer
//   (core::LocalError{kUpstreamProtocol}) or ends a stream with the translator's error event.

// Requests. A feature that cannot be carried over yields core::LocalError{kInvalidRequest,
// message naming the feature, param}.
std::variant<boost::json::object, core::LocalError> AnthropicRequestToOpenAi(
    const boost::json::object& request);
// `default_max_tokens` fills Anthropic's required max_tokens when the OpenAI request has none.
std::variant<boost::json::object, core::LocalError> OpenAiRequestToAnthropic(
    const boost::json::object& request, std::int64_t default_max_tokens);

// Successful non-streaming responses. `created` is the chat.completion's Unix time.
boost::json::object AnthropicResponseToOpenAi(const boost::json::object& message,
                                              std::int64_t created);
// Message content Anthropic cannot express (neither a string nor text / refusal parts) yields
// core::LocalError{kUpstreamProtocol, message naming the part}: the answer must not reach the
// client as if it were whole.
std::variant<boost::json::object, core::LocalError> OpenAiResponseToAnthropic(
    const boost::json::object& completion);

// Upstream error bodies (either may be non-JSON), rendered for a client of the other API: an
// Anthropic envelope typed by status (AnthropicErrorTypeOf) with the original message, or an
// OpenAI envelope {"error":{"message","type","param":null,"code"}} with Anthropic's error.type
// and details.error_code.
std::string OpenAiErrorToAnthropic(std::string_view body, unsigned status);
std::string AnthropicErrorToOpenAi(std::string_view body, unsigned status);

// Streams: one stateful translator per stream; not thread-safe. Feed each upstream SSE event (its
// `event:` name, possibly empty, and its joined `data`); appends complete translated SSE events
// (each ending in a blank line) to `out`. Pings are dropped. Malformed events, and an event whose
// translation is refused (Refusal), become an error event (type api_error), after which the
// translator ignores its input.

// Anthropic message events -> OpenAI chat.completion.chunk events and `data: [DONE]`.
class AnthropicToOpenAiStream final {
  public:
    AnthropicToOpenAiStream(bool include_usage, std::int64_t created);
    void Feed(std::string_view event_name, std::string_view data, std::string& out);

  private:
    void Translate(std::string_view event_name, std::string_view data, std::string& out);
    void Chunk(boost::json::object delta, const char* finish_reason, std::string& out) const;
    void Error(std::string_view type, std::string_view message, std::string& out);

    bool include_usage_;
    std::int64_t created_ = 0;
    bool finished_ = false;
    std::string id_;
    std::string model_;
    std::int64_t input_tokens_ = 0;
    std::int64_t output_tokens_ = 0;
    std::int64_t cache_read_tokens_ = 0;
    std::int64_t cache_creation_tokens_ = 0;
    std::map<std::int64_t, std::int64_t> tool_index_of_block_;  // Anthropic index -> OpenAI index
};

// OpenAI chat.completion.chunk events and `[DONE]` -> Anthropic message events. message_delta is
// held until `[DONE]` so that a usage chunk after the finish chunk still reaches it.
class OpenAiToAnthropicStream final {
  public:
    void Feed(std::string_view event_name, std::string_view data, std::string& out);

  private:
    enum class Block { kNone, kText, kToolUse };
    void Translate(std::string_view data, std::string& out);
    void Start(std::string_view id, std::string_view model, std::string& out);
    void CloseBlock(std::string& out);
    void Finish(std::string& out);
    void Error(std::string_view type, std::string_view message, std::string& out);

    bool started_ = false;
    bool finished_ = false;
    Block open_ = Block::kNone;
    std::int64_t current_index_ = 0;                      // the open block's index
    std::int64_t next_index_ = 0;                         // the next Anthropic content block index
    std::map<std::int64_t, std::int64_t> block_of_tool_;  // OpenAI tool_calls index -> block
    std::string stop_reason_;                             // empty: not seen yet
    std::int64_t input_tokens_ = -1;                      // -1: no usage seen
    std::int64_t output_tokens_ = 0;
    std::int64_t cached_tokens_ = 0;
};

}  // namespace switchyard::api
