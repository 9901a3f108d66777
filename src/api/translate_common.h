#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <string_view>

namespace switchyard::api {

// Internal to translate_requests_to_openai.cc, translate_requests_to_anthropic.cc,
// translate_answers.cc and translate_streams.cc: what more than one of them needs. Not part of
// the api module's interface (that is translate.h).

// OpenAI finish_reason for an Anthropic stop_reason: null for none; max_tokens and
// model_context_window_exceeded -> "length", tool_use -> "tool_calls", refusal ->
// "content_filter", anything else (end_turn, stop_sequence, pause_turn) -> "stop".
boost::json::value FinishReasonOf(std::string_view stop_reason);

// Anthropic stop_reason for an OpenAI finish_reason: length -> max_tokens, tool_calls and
// function_call -> tool_use, content_filter -> refusal, anything else -> end_turn.
std::string_view StopReasonOf(std::string_view finish_reason);

// Anthropic token counts, as a message or message_delta reports them.
struct AnthropicUsage {
    std::int64_t input = 0;
    std::int64_t output = 0;
    std::int64_t cache_read = 0;
    std::int64_t cache_creation = 0;

    // Takes each count present in an Anthropic `usage` object; absent ones stay.
    void Update(const boost::json::object& usage);
    // OpenAI `usage`: prompt_tokens counts cached and cache-written input too.
    boost::json::object OpenAi() const;
};

// {"error":{"message","type","param":null,"code"}}.
boost::json::object OpenAiErrorBody(std::string_view message, std::string_view type,
                                    boost::json::value code = nullptr);

// {"type":"error","error":{"type","message"}}.
boost::json::object AnthropicErrorBody(std::string_view type, std::string_view message);

// The OpenAI tool call for an Anthropic tool_use block (its input serialized, "{}" if none).
boost::json::object OpenAiToolCallOf(const boost::json::object& tool_use);

// Appends the Anthropic text blocks (and, with `allow_images`, image blocks) for an OpenAI
// message's `content` (null, a string or parts); empty text is skipped, as Anthropic rejects
// empty text blocks. Anything else is refused (Refusal, param "messages").
void AppendContentBlocks(const boost::json::value* content, bool allow_images,
                         boost::json::array& blocks);

}  // namespace switchyard::api
