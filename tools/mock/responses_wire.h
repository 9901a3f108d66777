#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "openai_wire.h"
#include "stream_script.h"
#include "tool_call.h"

// Bodies of OpenAI's Responses API (POST /v1/responses), stateless subset, as the mock provider
// sends them: request parsing, the `response` object and the SSE events of a streamed response.
// No I/O. Error bodies and the reply text are openai_wire's: the Responses API answers errors with
// the same HTTP bodies as chat completions.
namespace switchyard::mock::responses {

using ReplyText = openai::ReplyText;

// Request values every response object repeats, as JSON text (the API's defaults when the request
// leaves them out or sends another type).
struct Echo final {
    std::string instructions = "null";
    std::string max_output_tokens = "null";
    std::string parallel_tool_calls = "true";
    std::string temperature = "1.0";
    std::string tool_choice = R"("auto")";
    std::string tools = "[]";
    std::string top_p = "1.0";
    std::string metadata = "{}";
};

// The fields of a responses request the mock acts on.
struct ResponsesRequest final {
    std::string model;
    bool stream = false;
    // Characters of `instructions` and of every text in `input`: message content strings, the
    // `text` of input_text/output_text parts, function_call arguments, function_call_output
    // output.
    std::int64_t input_chars = 0;
    int input_tokens = 1;                // usage.input_tokens: input_chars / 4, at least 1.
    std::int64_t max_output_tokens = 0;  // When a positive integer; 0 otherwise.
    // The `function` tools and `tool_choice` ("none", "auto", "required", or
    // {"type":"function","name":...}).
    ToolChoice tools;
    Echo echo;
};

// Result of ParseResponsesRequest: `status` is 0 on success, otherwise the status and OpenAI error
// envelope to answer with.
struct ParsedResponsesRequest final {
    ResponsesRequest request;
    int status = 0;
    std::string error_body;
};

// Validates a request body: a JSON object; `model` a string; `input` a string or an array of input
// items (messages `{role, content}` with content a string or an array of parts, function_call,
// function_call_output, reasoning); `previous_response_id` absent or null (the mock stores no
// responses); `instructions` a string or null; `stream` a boolean or null.
ParsedResponsesRequest ParseResponsesRequest(std::string_view body);

// A function call output item.
struct FunctionCall final {
    std::string_view id;       // "fc_..."
    std::string_view call_id;  // "call_..."
    std::string_view name;
    std::string_view arguments;  // JSON text.
};

// One response and its single output item: a message `message_id` holding `reply`'s text, or, when
// `call` is set, that function call. Views must outlive the Response.
struct Response final {
    std::string_view id;  // "resp_..."
    std::int64_t created_at = 0;
    std::string_view model;
    const Echo* echo = nullptr;
    int input_tokens = 1;
    std::string_view message_id;  // "msg_..."
    const ReplyText* reply = nullptr;
    std::optional<FunctionCall> call;

    // The word count, or for a function call the number of its argument fragments.
    int OutputTokens() const;
};

// Appends the non-streaming answer: the response object with status "completed", its output item
// and usage.
void AppendResponse(std::string& out, const Response& response);

// The SSE events of one streamed response, each `event: TYPE\ndata: {"type":TYPE,
// "sequence_number":N,...}\n\n` with N counting from 0 across the stream, in this order:
//   opening: response.created, response.in_progress, response.output_item.added, and for a
//            message response.content_part.added;
//   deltas:  response.output_text.delta per word, or response.function_call_arguments.delta per
//            argument fragment (ArgumentFragments);
//   closing: for a message response.output_text.done, response.content_part.done; for a function
//            call response.function_call_arguments.done; then response.output_item.done and
//            response.completed.
// An event's sequence number is its position in that order; the error event takes the number of
// the delta it replaces. Refers to `response`.
class ResponseEvents final : public StreamScript {
  public:
    explicit ResponseEvents(const Response& response);

    int OpeningCount() const override;
    void AppendOpening(std::string& out, int step) const override;
    int DeltaCount() const override;
    void AppendDelta(std::string& out, int index) const override;
    int ClosingCount() const override;
    void AppendClosing(std::string& out, int step) const override;

    // An `error` event: {"type":"error","sequence_number":N,"code":...,"message":...,"param":null},
    // code and message from the named error's body (StreamErrorOf), by default server_error's.
    void AppendError(std::string& out, int deltas_sent,
                     std::optional<NamedError> error) const override;

  private:
    // `event: TYPE\ndata: {"type":TYPE,"sequence_number":N` — the caller closes the object.
    static void Begin(std::string& out, std::string_view type, int sequence_number);
    static void End(std::string& out);

    const Response& response_;
    std::vector<std::string_view> fragments_;  // Of a function call's arguments.
};

// The `code` and `message` of an in-stream error event, taken from an error body (OpenAI's
// envelope, or Anthropic's for status 529): error.code, else error.type; error.message.
struct StreamError final {
    std::string code;
    std::string message;
};
StreamError StreamErrorOf(std::string_view error_body);

// OpenAI's 400 for a request naming previous_response_id (the API's code
// previous_response_not_found, with a message that says the mock keeps no responses).
std::string PreviousResponseBody(std::string_view id);

}  // namespace switchyard::mock::responses
