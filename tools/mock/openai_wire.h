#pragma once

#include <boost/json/kind.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fault_spec.h"
#include "rate_limits.h"

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

    int WordCount() const { return word_count_; }

    // Appends word `index` (0-based) preceded by a space unless it is the first.
    void AppendWord(std::string& out, int index) const;

    // Appends the whole reply as plain text.
    void AppendText(std::string& out) const;

  private:
    std::string_view model_;
    std::string_view structured_;
    bool numbered_;
    int word_count_;
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

// Builds the SSE events of one streamed completion (Chat Completions streaming: `data: {json}`
// events with no `event:` line, ended by `data: [DONE]`). With include_usage every chunk carries
// `"usage":null` and a final usage chunk with empty `choices` precedes [DONE].
class ChunkEvents final {
  public:
    ChunkEvents(const CompletionIdentity& identity, bool include_usage);

    void AppendRole(std::string& out) const;
    void AppendWord(std::string& out, const ReplyText& reply, int index) const;
    void AppendFinish(std::string& out) const;
    void AppendUsage(std::string& out, Usage usage) const;

    bool include_usage() const { return include_usage_; }

    static void AppendDone(std::string& out);

    // Appends an in-stream error event; `envelope` is a full `{"error":{...}}` body. The SDKs
    // raise APIError for any event whose parsed data has a truthy `error`.
    static void AppendError(std::string& out, std::string_view envelope);

  private:
    void AppendChoice(std::string& out, std::string_view choice) const;

    std::string prefix_;  // `{"id":...,"choices":` shared by every chunk.
    bool include_usage_;
};

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
