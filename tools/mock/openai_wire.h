#pragma once

#include <boost/json/kind.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fault_spec.h"
#include "rate_limits.h"
#include "stream_script.h"
#include "tool_call.h"

// Bodies of the OpenAI Chat Completions API as the mock provider sends them: request parsing,
// completions, SSE chunks and error envelopes. No I/O. Another provider's wire module provides
// the same set of functions in its own namespace.
namespace switchyard::mock::openai {

// The fields of a chat completions request the mock acts on.
struct ChatRequest final {
    std::string model;
    bool stream = false;
    bool include_usage = false;  // stream_options.include_usage
    int prompt_tokens = 1;       // Rough estimate: characters of message content / 4, at least 1.
    std::int64_t content_chars = 0;  // Characters of all message contents (as prompt_tokens).
    // max_completion_tokens, else max_tokens, when a positive integer; 0 otherwise.
    std::int64_t max_tokens = 0;
    std::string output_schema;  // response_format's JSON schema, as JSON text (empty: none)
    // The `function` tools and `tool_choice` ("none", "auto", "required", or
    // {"type":"function","function":{"name":...}}).
    ToolChoice tools;
};

// Result of ParseChatRequest: `status` is 0 on success, otherwise the status and OpenAI error
// envelope to answer with.
struct ParsedChatRequest final {
    ChatRequest request;
    int status = 0;
    std::string error_body;
};

// Validates a request body: a JSON object with a string `model` and an array `messages`.
ParsedChatRequest ParseChatRequest(std::string_view body);

struct Usage final {
    int prompt_tokens = 0;
    int completion_tokens = 0;
};

// The deterministic reply: "Mock reply from <model>." by default, or "word1 ... wordN" when a
// fault spec sets `chunks=N`. Each word is one streamed content chunk. Refers to `model`.
class ReplyText final {
  public:
    // `structured`: a JSON document that is the whole reply, in one chunk (structured output).
    ReplyText(std::string_view model, std::optional<int> chunks, std::string_view structured = {});

    // A reply that is exactly `text`, in one chunk. Refers to `text`.
    static ReplyText Verbatim(std::string_view text);

    int WordCount() const { return word_count_; }

    // Appends `count` fill characters to the first word (event_bytes): `x`, or blanks when the
    // reply is a JSON document, which they leave valid. A reply without words stays empty.
    void Pad(std::size_t count) { pad_ = count; }

    // Appends word `index` (0-based) preceded by a space unless it is the first.
    void AppendWord(std::string& out, int index) const;

    // Appends the whole reply as plain text.
    void AppendText(std::string& out) const;

    // As AppendWord and AppendText, as one quoted JSON string; the padding is written once,
    // straight into `out`, however large it is.
    void AppendWordJson(std::string& out, int index) const;
    void AppendTextJson(std::string& out) const;

  private:
    struct VerbatimTag {};
    ReplyText(VerbatimTag, std::string_view whole);
    void AppendBareWord(std::string& out, int index) const;  // Without the padding.
    char Fill() const { return json_ ? ' ' : 'x'; }

    std::string_view model_;
    std::string_view whole_;  // The whole reply in one chunk, if set.
    bool json_ = false;       // whole_ is a JSON document.
    bool numbered_ = false;
    int word_count_ = 0;
    std::size_t pad_ = 0;
};

// Identity shared by the body or all chunks of one completion.
struct CompletionIdentity final {
    std::string_view id;  // "chatcmpl-..."
    std::int64_t created = 0;
    std::string_view model;
};

// Appends the non-streaming `chat.completion` object.
void AppendCompletion(std::string& out, const CompletionIdentity& identity, const ReplyText& reply,
                      Usage usage);

// Appends the non-streaming `chat.completion` object whose message calls `call` with id `call_id`
// ("call_..."): content null, one entry in `tool_calls`, finish_reason "tool_calls".
void AppendToolCallCompletion(std::string& out, const CompletionIdentity& identity,
                              std::string_view call_id, const ToolCall& call, Usage usage);

// The completion tokens of a tool call answer: one per streamed argument fragment.
int ToolCallTokens(const ToolCall& call);

// Builds the SSE events of one streamed completion (Chat Completions streaming: `data: {json}`
// events with no `event:` line, ended by `data: [DONE]`). With include_usage every chunk carries
// `"usage":null` and a final usage chunk with empty `choices` precedes [DONE].
class ChunkEvents final {
  public:
    ChunkEvents(const CompletionIdentity& identity, bool include_usage);

    void AppendRole(std::string& out) const;
    void AppendWord(std::string& out, const ReplyText& reply, int index) const;
    void AppendFinish(std::string& out, std::string_view finish_reason = "stop") const;

    // A tool call: the role chunk with `"content":null`, the chunk that opens call 0 with its id,
    // type and name (`"arguments":""`), and one chunk per argument fragment; the finish reason is
    // "tool_calls".
    void AppendToolRole(std::string& out) const;
    void AppendToolCallStart(std::string& out, std::string_view call_id,
                             std::string_view name) const;
    void AppendArgumentsDelta(std::string& out, std::string_view fragment) const;
    void AppendUsage(std::string& out, Usage usage) const;

    bool include_usage() const { return include_usage_; }

    static void AppendDone(std::string& out);

    // Appends an in-stream error event; `envelope` is a full `{"error":{...}}` body. The SDKs
    // raise APIError for any event whose parsed data has a truthy `error`.
    static void AppendError(std::string& out, std::string_view envelope);

  private:
    void AppendChoice(std::string& out, std::string_view choice) const;
    void EndChoice(std::string& out) const;  // The usage field, if any, and the event's end.

    std::string prefix_;  // `{"id":...,"choices":` shared by every chunk.
    bool include_usage_;
};

// A streamed completion as a StreamScript. Text: the role chunk, one chunk per word, then finish,
// usage (with include_usage) and [DONE]. A tool call: the role chunk and the chunk that opens the
// call, one chunk per argument fragment, then the same closing chunks. The default in-stream error
// is server_error's body. Refers to the reply or call it is given.
class ChatStream final : public StreamScript {
  public:
    ChatStream(const CompletionIdentity& identity, bool include_usage, int prompt_tokens,
               const ReplyText& reply);
    ChatStream(const CompletionIdentity& identity, bool include_usage, int prompt_tokens,
               std::string_view call_id, const ToolCall& call);

    int OpeningCount() const override { return call_ != nullptr ? 2 : 1; }
    void AppendOpening(std::string& out, int step) const override;
    int DeltaCount() const override;
    void AppendDelta(std::string& out, int index) const override;
    int ClosingCount() const override { return events_.include_usage() ? 3 : 2; }
    void AppendClosing(std::string& out, int step) const override;
    void AppendError(std::string& out, int deltas_sent,
                     std::optional<NamedError> error) const override;

  private:
    ChunkEvents events_;
    std::string_view model_;
    int prompt_tokens_;
    const ReplyText* reply_ = nullptr;
    std::string_view call_id_;
    const ToolCall* call_ = nullptr;
    std::vector<std::string_view> fragments_;
};

// The body of `body=wrong_shape` on OpenAI's paths: JSON, but no answer of theirs.
inline constexpr std::string_view kWrongShapeBody = R"({"object":"list","data":[]})";

// False for the named errors that are Anthropic's only (enforced_spend_limit, prompt_too_long,
// billing): the server rejects them on the OpenAI path. `overloaded` is Anthropic's 529 body, as
// with status=529.
bool HasNamedError(NamedError error);

// The error body OpenAI sends with `status`, or with the named `error` when it is set (a fault's
// `status` picks the status line, its `error` the body). `model` fills model_not_found.
std::string ErrorBody(int status, std::optional<NamedError> error, std::string_view model);

// `{"error":{"message":...,"type":...,"param":...,"code":...}}`; empty param/code become null.
std::string ErrorEnvelope(std::string_view message, std::string_view type,
                          std::string_view param = {}, std::string_view code = {});

// The 429 of the mock's rate limiter for `reason` (requests, tokens or acceleration), with the
// per-minute `limit` that was hit: `{"error":{"message":"Rate limit reached for requests. Limit 60
// per min.","type":"requests","code":"rate_limit_exceeded"}}` (docs/providers.md#openai-errors, no
// `param`).
std::string RateLimitBody(RateLimitReason reason, std::int64_t limit);

// 400 bodies (type invalid_request_error) shared by OpenAI's endpoints: chat completions,
// embeddings and responses.

// The body is not JSON: "We could not parse the JSON body of your request. (HINT: ...)".
std::string UnparsableJsonBody();

// "Invalid body: expected a JSON object, but got an array."
std::string NotAnObjectBody(boost::json::kind got);

// "Missing required parameter: 'input'.", with param and code missing_required_parameter.
std::string MissingParameterBody(std::string_view param);

// "Invalid type for 'model': expected a string, but got an integer instead.", with param and code
// invalid_type.
std::string InvalidTypeBody(std::string_view param, std::string_view expected,
                            boost::json::kind got);

// "Invalid value: 'int8'. Supported values are: <supported>.", with param and code invalid_value;
// `supported` is written as given, e.g. "'float' and 'base64'".
std::string InvalidValueBody(std::string_view param, std::string_view value,
                             std::string_view supported);

// The 401 OpenAI sends for a missing or wrong API key.
std::string InvalidApiKeyBody();

// OpenAI's answer to an unknown path (404) or a known path with the wrong method (405).
std::string InvalidUrlBody(std::string_view method, std::string_view path);
std::string InvalidMethodBody(std::string_view method, std::string_view path);

}  // namespace switchyard::mock::openai
