#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "fault_spec.h"
#include "openai_wire.h"
#include "rate_limits.h"

// Bodies of Anthropic's Messages API as the mock provider sends them: request parsing, messages,
// SSE events and error envelopes (docs/providers.md#anthropic-errors, docs/providers.md#streams).
// No I/O. The counterpart of openai_wire.
namespace switchyard::mock::anthropic {

// The reply text is the same as on the OpenAI side: "Mock reply from <model>." or "word1 ...".
using ReplyText = openai::ReplyText;

// The fields of a messages request the mock acts on.
struct MessagesRequest final {
    std::string model;
    bool stream = false;
    int input_tokens = 1;   // Rough estimate: characters of system + message text / 4, at least 1.
    std::string tool_name;  // Name of the first of `tools`; empty without tools.
    std::string output_schema;  // output_config.format's JSON schema, as JSON text (empty: none)
};

// Result of ParseMessagesRequest: `status` is 0 on success, otherwise the status and the
// Anthropic error body to answer with.
struct ParsedMessagesRequest final {
    MessagesRequest request;
    int status = 0;
    std::string error_body;
};

// Validates a request body: a JSON object with a string `model`, an array `messages` and an
// integer `max_tokens` >= 1. Error bodies carry `request_id`.
ParsedMessagesRequest ParseMessagesRequest(std::string_view body, std::string_view request_id);

struct Usage final {
    int input_tokens = 0;
    int output_tokens = 0;
};

// Identity shared by the body or all events of one message.
struct MessageIdentity final {
    std::string_view id;  // "msg_..."
    std::string_view model;
};

// The tool_use block the mock answers with under `tool_use=1`: input {"query":"mock"}.
struct ToolUse final {
    std::string_view id;  // "toolu_..."
    std::string_view name;
};

// The partial_json fragments of the streamed tool input, in order. The first is empty, as the
// API's first input_json_delta can be (docs/providers.md#streams).
inline constexpr std::array<std::string_view, 3> kToolInputFragments = {"", R"({"query":)",
                                                                        R"( "mock"})"};

// Output tokens reported for a tool_use answer: one per input fragment.
inline constexpr int kToolUseOutputTokens = static_cast<int>(kToolInputFragments.size());

// Appends the non-streaming `message` object with one text block, stop_reason end_turn.
void AppendMessage(std::string& out, const MessageIdentity& identity, const ReplyText& reply,
                   Usage usage);

// Appends the non-streaming `message` object with one tool_use block, stop_reason tool_use.
void AppendToolUseMessage(std::string& out, const MessageIdentity& identity, const ToolUse& tool,
                          Usage usage);

// SSE events of a streamed message, each `event: NAME\ndata: JSON\n\n`, in the order
// message_start, content_block_start, ping, content_block_delta..., content_block_stop,
// message_delta, message_stop. All blocks have index 0.
void AppendMessageStart(std::string& out, const MessageIdentity& identity, int input_tokens);
void AppendTextBlockStart(std::string& out);
void AppendToolUseBlockStart(std::string& out, const ToolUse& tool);
void AppendPing(std::string& out);  // `{"type": "ping"}`, with the blank the API sends.
void AppendTextDelta(std::string& out, const ReplyText& reply, int index);
void AppendInputJsonDelta(std::string& out, std::string_view partial_json);
void AppendBlockStop(std::string& out);
void AppendMessageDelta(std::string& out, std::string_view stop_reason, int output_tokens);
void AppendMessageStop(std::string& out);

// Appends an `event: error` with `body`, an error envelope without request_id.
void AppendErrorEvent(std::string& out, std::string_view body);

// `{"type":"error","error":{"type":...,"message":...},"request_id":...}`; with `details_code`
// the error also carries `"details":{"error_code":...}`; an empty request_id is left out (the
// form of an in-stream error event).
std::string ErrorEnvelope(std::string_view type, std::string_view message,
                          std::string_view request_id, std::string_view details_code = {});

// The `error.type` Anthropic pairs with `status` (docs/providers.md#anthropic-errors): unlisted 4xx
// are invalid_request_error, unlisted 5xx api_error.
std::string_view ErrorTypeForStatus(int status);

// False for the named errors that are OpenAI's only (quota and spend-limit codes,
// content_policy, server_overloaded): the server rejects them on the Anthropic path.
bool HasNamedError(NamedError error);

// The error body Anthropic sends with `status`, or with the named `error` when it is set (a
// fault's `status` picks the status line, its `error` the body). `model` fills not_found_error.
std::string ErrorBody(int status, std::optional<NamedError> error, std::string_view model,
                      std::string_view request_id);

// True if the answer to `spec` must not carry retry-after or retry-after-ms: the monthly spend
// limit has no retry hint, whatever else the spec asks for.
bool SuppressesRetryAfter(const FaultSpec& spec);

// The 429 of the mock's rate limiter for `reason` (requests, input_tokens, output_tokens or
// acceleration) with the per-minute `limit` that was hit: a rate_limit_error whose message has
// the API's wording, "This request would exceed your organization's rate limit of 50 requests per
// minute. For details, ...".
std::string RateLimitBody(RateLimitReason reason, std::int64_t limit, std::string_view request_id);

// The 401 for a missing or wrong API key.
std::string InvalidApiKeyBody(std::string_view request_id);

// The answer to a known path with the wrong method (405).
std::string InvalidMethodBody(std::string_view method, std::string_view path,
                              std::string_view request_id);

}  // namespace switchyard::mock::anthropic
