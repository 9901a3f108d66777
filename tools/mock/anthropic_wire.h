#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fault_spec.h"
#include "openai_wire.h"
#include "rate_limits.h"
#include "stream_script.h"
#include "tool_call.h"

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
    int input_tokens = 1;  // Rough estimate: characters of system + message text / 4, at least 1.
    // `tools` and `tool_choice` ({"type":"auto"|"any"|"none"} or {"type":"tool","name":...}).
    ToolChoice tools;
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

// A tool_use block: its id and the call (name, and the input as JSON text).
struct ToolUse final {
    std::string_view id;  // "toolu_..."
    const ToolCall& call;
};

// The partial_json fragments of a streamed tool input, in order: first an empty one, as the API's
// first input_json_delta can be (docs/providers.md#streams), then ArgumentFragments. Views into
// `input`.
std::vector<std::string_view> ToolInputFragments(std::string_view input);

// Output tokens reported for a tool_use answer: one per input fragment.
int ToolUseOutputTokens(const ToolCall& call);

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

// A streamed message as a StreamScript: message_start, content_block_start (text or tool_use) and
// ping; one content_block_delta per word or input fragment; content_block_stop, message_delta and
// message_stop. The default in-stream error is the overload error. Refers to what it is given.
class MessageStream final : public StreamScript {
  public:
    MessageStream(const MessageIdentity& identity, int input_tokens, const ReplyText& reply);
    MessageStream(const MessageIdentity& identity, int input_tokens, const ToolUse& tool);

    int OpeningCount() const override { return 3; }
    void AppendOpening(std::string& out, int step) const override;
    int DeltaCount() const override;
    void AppendDelta(std::string& out, int index) const override;
    int ClosingCount() const override { return 3; }
    void AppendClosing(std::string& out, int step) const override;
    void AppendError(std::string& out, int deltas_sent,
                     std::optional<NamedError> error) const override;

  private:
    MessageIdentity identity_;
    int input_tokens_;
    const ReplyText* reply_ = nullptr;
    std::optional<ToolUse> tool_;
    std::vector<std::string_view> fragments_;
};

// The body of `body=wrong_shape` on /v1/messages: a legacy Text Completions object, JSON but no
// message.
inline constexpr std::string_view kWrongShapeBody = R"({"type":"completion","completion":"hi"})";

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
