#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fault_spec.h"

// Bodies of the Batch APIs as the mock provider sends them: OpenAI's files and batches, Anthropic's
// message batches, and the lines of their result files (docs/mock.md#batch-apis). No I/O, no
// clock: times are parameters. The state of the batches lives in batch_store.
namespace switchyard::mock::batches {

using WallTime = std::chrono::system_clock::time_point;

// A batch's processing time when neither --batch-ms nor a batch_ms fault sets it.
inline constexpr std::chrono::milliseconds kDefaultBatchTime{300};
// Anthropic's limit on the requests of one message batch.
inline constexpr std::size_t kMaxMessageBatchRequests = 100'000;

enum class Api { kOpenAi, kAnthropic };

// One request of a batch.
struct Line final {
    std::string custom_id;
    std::string url;   // the path it is answered as: the batch's endpoint, or /v1/messages
    std::string body;  // its JSON body: the line's `body` (OpenAI) or `params` (Anthropic)
};

// The answer the synchronous API gives a line's request.
struct Answer final {
    int status = 200;
    std::string body;        // JSON
    std::string request_id;  // "req_...": the answer's request id
};

// What became of a line once its batch ended.
enum class Outcome {
    kAnswered,   // it has an Answer
    kCancelled,  // the batch was cancelled before the line ran
    kExpired,    // the batch ran out of time before the line ran
};

// One entry of `errors.data` of a failed OpenAI batch.
struct Error final {
    std::string code;
    std::string message;
    std::optional<std::string> param;
    std::optional<std::int64_t> line;  // 1-based, of the input file
};

// A batch's life: validating (only as the create call answers it), in progress, then one of the
// ends. Cancelling lasts from the cancel call to the next read. Anthropic's processing_status
// folds these into in_progress, canceling and ended.
enum class Status {
    kValidating,
    kInProgress,
    kCancelling,
    kCompleted,
    kFailed,  // OpenAI only: refused or invalid when created
    kExpired,
    kCancelled,
};

// OpenAI's spelling of `status`.
std::string_view StatusName(Status status);

// A stored file, without its content.
struct FileInfo final {
    std::string id;  // "file-..."
    std::string filename;
    std::string purpose;
    std::size_t bytes = 0;
    WallTime created;
};

// A batch as its objects show it: everything but its lines and its results.
struct BatchInfo final {
    Api api = Api::kOpenAi;
    std::string id;  // "batch_..." or "msgbatch_..."
    Status status = Status::kValidating;
    WallTime created;
    std::optional<WallTime> in_progress_at;
    std::optional<WallTime> finalizing_at;
    std::optional<WallTime> completed_at;
    std::optional<WallTime> failed_at;
    std::optional<WallTime> expired_at;
    std::optional<WallTime> cancelling_at;
    std::optional<WallTime> cancelled_at;
    std::size_t total = 0;  // lines
    // Once ended: lines answered with a 2xx, answered otherwise, cancelled and expired.
    std::size_t succeeded = 0;
    std::size_t errored = 0;
    std::size_t cancelled = 0;
    std::size_t expired = 0;
    // OpenAI only.
    std::string endpoint;
    std::string input_file_id;
    std::string completion_window;
    std::string metadata = "null";     // JSON
    std::optional<std::string> model;  // the first line's body.model
    std::vector<Error> errors;
    std::optional<std::string> output_file_id;
    std::optional<std::string> error_file_id;

    bool Ended() const;
    // When it ended: completed, failed, expired or cancelled.
    std::optional<WallTime> EndedAt() const;
};

// The fields of a POST /v1/batches body, or (status not 0) the status and OpenAI error body to
// answer with.
struct OpenAiBatchRequest final {
    std::string input_file_id;
    std::string endpoint;
    std::string completion_window;
    std::string metadata = "null";  // JSON: an object of strings, or null
    int status = 0;
    std::string error_body;
};

// Checks a create body: `input_file_id` and `endpoint` (/v1/chat/completions, /v1/embeddings or
// /v1/responses) strings, `completion_window` "24h", `metadata` absent, null or an object of at
// most 16 string values.
OpenAiBatchRequest ParseOpenAiBatchRequest(std::string_view body);

// The requests of an input file, one JSON object per line: {"custom_id","method":"POST","url",
// "body"}, `url` equal to the batch's endpoint, custom_ids unique. Blank lines are skipped. A
// batch whose input has `errors` fails.
struct OpenAiInput final {
    std::vector<Line> lines;
    std::vector<Error> errors;
    std::optional<std::string> model;  // the first line's body.model, when a string
};

OpenAiInput ParseOpenAiInput(std::string_view content, std::string_view endpoint);

// The requests of a POST /v1/messages/batches body, or the invalid_request_error message to
// answer with (`error` not empty): 1 to 100,000 requests, each with a custom_id matching
// ^[a-zA-Z0-9_-]{1,64}$ (unique in the batch) and a `params` object.
struct MessageBatchRequest final {
    std::vector<Line> lines;
    std::string model;  // requests[0].params.model, when a string
    std::string error;
};

MessageBatchRequest ParseMessageBatchRequest(std::string_view body);

// OpenAI's File object, list and deletion.
std::string FileObject(const FileInfo& file);
std::string FileList(const std::vector<FileInfo>& files, bool has_more);
std::string FileDeleted(std::string_view id);

// OpenAI's Batch object, and a page of them.
std::string OpenAiBatchObject(const BatchInfo& batch);
std::string OpenAiBatchList(const std::vector<BatchInfo>& batches, bool has_more);

// Anthropic's MessageBatch object; `origin` ("http://host:port") makes its absolute results_url.
std::string MessageBatchObject(const BatchInfo& batch, std::string_view origin);
std::string MessageBatchList(const std::vector<BatchInfo>& batches, bool has_more,
                             std::string_view origin);
std::string MessageBatchDeleted(std::string_view id);

// Appends one line of an OpenAI output or error file, with its newline: the answer's status code,
// request id and body under `response`; or, for a line that never ran, `"response":null` and
// the batch_cancelled or batch_expired error. `answer` is read for kAnswered only.
void AppendOpenAiResultLine(std::string& out, std::string_view line_id, std::string_view custom_id,
                            Outcome outcome, const Answer& answer);

// Appends one line of Anthropic's results, with its newline: `succeeded` with the message for a
// 2xx answer, `errored` with the error envelope for any other, `canceled` or `expired`.
void AppendMessageResultLine(std::string& out, std::string_view custom_id, Outcome outcome,
                             const Answer& answer);

// The error of an OpenAI batch that `batch_refuse` fails; `model` is the batch's (empty: none).
Error OpenAiRefusal(BatchRefusal refusal, std::string_view model);

// Anthropic's answer to a creation that `batch_refuse` refuses: the status, the error type and
// the message of its error envelope.
struct MessageBatchRefusal final {
    int status = 0;
    std::string_view type;
    std::string message;
};

MessageBatchRefusal AnthropicRefusal(BatchRefusal refusal, std::string_view model);

// `time` as RFC 3339 in UTC with microseconds, e.g. "2024-08-20T18:37:24.100435Z", as Anthropic
// writes the times of a batch.
std::string FormatRfc3339Micros(WallTime time);

}  // namespace switchyard::mock::batches
