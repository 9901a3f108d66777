#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace switchyard::batches {

// The API a batch was created through: OpenAI's files and batches, or Anthropic's message
// batches (docs/batches.md).
enum class Api { kOpenAi, kAnthropic };

// A file kept for the Batch APIs: an upload (purpose `batch`), a batch's output or error file
// (`batch_output`), or the lines of an Anthropic message batch (`message_batch`, never listed).
struct BatchFile {
    std::string id;     // file-...
    std::string owner;  // the SHA-256 of the client key that made it ("": the master key or none)
    std::string purpose;
    std::string filename;
    std::int64_t bytes = 0;
    std::int64_t created_s = 0;  // Unix seconds
};

// Where a batch stands. OpenAI's statuses; Anthropic's processing_status is read from them.
enum class Status {
    kValidating,
    kFailed,
    kInProgress,
    kFinalizing,
    kCompleted,
    kExpired,
    kCancelling,
    kCancelled
};
std::string_view StatusName(Status status);
std::optional<Status> ParseStatus(std::string_view name);
// Nothing more happens to a batch in this status.
bool Ended(Status status);

// How many lines ended how (a line ends once).
struct LineCounts {
    std::int64_t succeeded = 0;
    std::int64_t failed = 0;
    std::int64_t canceled = 0;
    std::int64_t expired = 0;
    std::int64_t Done() const { return succeeded + failed + canceled + expired; }
};

// One batch job, as kept in the durable store.
struct BatchJob {
    std::string id;  // batch_... or msgbatch_...
    std::string owner;
    Api api = Api::kOpenAi;
    std::string endpoint;  // every line's URL: /v1/chat/completions, /v1/messages, ...
    std::string input_file_id;
    std::string completion_window = "24h";
    std::int64_t window_s = 24 * 3600;
    Status status = Status::kValidating;
    std::int64_t total = 0;  // lines; known once validated
    LineCounts counts;
    // Usage of the lines that succeeded, summed.
    std::int64_t input_tokens = 0;
    std::int64_t output_tokens = 0;
    std::string model;  // the first line's
    std::string output_file_id;
    std::string error_file_id;
    boost::json::value metadata;  // null or an object of strings
    boost::json::array errors;    // validation errors: {code, message, param, line}
    // Unix seconds; 0: not yet.
    std::int64_t created_s = 0, in_progress_s = 0, finalizing_s = 0, completed_s = 0, failed_s = 0,
                 expired_s = 0, cancelling_s = 0, cancelled_s = 0;
    // Every line before this one has ended (a restart reads on from here): its number (from 0)
    // and its byte offset in the input file.
    std::int64_t cursor_line = 0;
    std::int64_t cursor_offset = 0;
    // Where it runs (docs/batches.md#two-ways-to-run-a-job): "" until decided, "gateway", or
    // "provider" on `deployment`'s batch API as `provider_batch_id`. `note` says why a job meant
    // for the provider runs on the gateway (the provider refused it).
    std::string mode;
    std::string deployment;
    std::string provider_batch_id;
    std::string note;
    bool cancel_sent = false;  // the provider was asked to cancel

    std::int64_t ExpiresAt() const { return created_s + window_s; }
};

// The job as the store keeps it, and back (nullopt: not a job this build reads).
boost::json::object JobRecord(const BatchJob& job);
std::optional<BatchJob> JobFromRecord(const boost::json::value& record);

// OpenAI's Batch object and File object.
boost::json::object OpenAiBatchObject(const BatchJob& job);
boost::json::object OpenAiFileObject(const BatchFile& file);
// Anthropic's MessageBatch object; `origin` ("http://host:port") makes its absolute results_url.
boost::json::object AnthropicBatchObject(const BatchJob& job, std::string_view origin);

// "24h", "90m", "30s": a completion window in seconds (nullopt: not one, or over 24 hours).
// OpenAI accepts "24h" alone; shorter windows are Switchyard's, for jobs that must end sooner.
std::optional<std::int64_t> ParseWindow(std::string_view text);

// Identifiers: file-, batch_, msgbatch_, batch_req_ and a random part.
std::string NewFileId();
std::string NewBatchId(Api api);
std::string NewLineId();

// A custom_id as both APIs accept it: 1 to 64 of [A-Za-z0-9_-].
bool ValidCustomId(std::string_view id);

}  // namespace switchyard::batches
