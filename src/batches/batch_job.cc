#include "batches/batch_job.h"

#include <array>
#include <boost/json.hpp>
#include <charconv>
#include <chrono>

#include "core/sha256.h"
#include "core/time_format.h"

namespace switchyard::batches {
namespace {

namespace json = boost::json;

constexpr std::array<std::pair<Status, std::string_view>, 8> kStatusNames = {{
    {Status::kValidating, "validating"},
    {Status::kFailed, "failed"},
    {Status::kInProgress, "in_progress"},
    {Status::kFinalizing, "finalizing"},
    {Status::kCompleted, "completed"},
    {Status::kExpired, "expired"},
    {Status::kCancelling, "cancelling"},
    {Status::kCancelled, "cancelled"},
}};

json::value Seconds(std::int64_t s) { return s == 0 ? json::value(nullptr) : json::value(s); }

json::value Instant(std::int64_t s) {
    if (s == 0) return nullptr;
    return json::value(
        core::Rfc3339(std::chrono::system_clock::time_point(std::chrono::seconds(s))));
}

json::value IdOrNull(const std::string& id) {
    return id.empty() ? json::value(nullptr) : json::value(id);
}

std::int64_t Int(const json::object& o, std::string_view key) {
    const json::value* v = o.if_contains(key);
    return v != nullptr && v->is_int64() ? v->as_int64() : 0;
}

std::string Text(const json::object& o, std::string_view key) {
    const json::value* v = o.if_contains(key);
    return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

// Base62 from the system's random source.
std::string RandomBase62(std::size_t length) {
    static constexpr std::string_view kAlphabet =
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    const std::string hex = core::RandomHex(length * 2);
    std::string out;
    out.reserve(length);
    for (std::size_t i = 0; i < length; ++i) {
        unsigned value = 0;
        std::from_chars(hex.data() + 2 * i, hex.data() + 2 * i + 2, value, 16);
        out.push_back(kAlphabet[value % kAlphabet.size()]);
    }
    return out;
}

}  // namespace

std::string_view StatusName(Status status) {
    for (const auto& [s, name] : kStatusNames) {
        if (s == status) return name;
    }
    return "failed";
}

std::optional<Status> ParseStatus(std::string_view name) {
    for (const auto& [s, n] : kStatusNames) {
        if (n == name) return s;
    }
    return std::nullopt;
}

bool Ended(Status status) {
    return status == Status::kFailed || status == Status::kCompleted ||
           status == Status::kExpired || status == Status::kCancelled;
}

json::object JobRecord(const BatchJob& job) {
    return {
        {"id", job.id},
        {"owner", job.owner},
        {"api", job.api == Api::kAnthropic ? "anthropic" : "openai"},
        {"endpoint", job.endpoint},
        {"input_file_id", job.input_file_id},
        {"completion_window", job.completion_window},
        {"window_s", job.window_s},
        {"status", StatusName(job.status)},
        {"total", job.total},
        {"succeeded", job.counts.succeeded},
        {"failed", job.counts.failed},
        {"canceled", job.counts.canceled},
        {"expired", job.counts.expired},
        {"input_tokens", job.input_tokens},
        {"output_tokens", job.output_tokens},
        {"model", job.model},
        {"output_file_id", job.output_file_id},
        {"error_file_id", job.error_file_id},
        {"metadata", job.metadata},
        {"errors", job.errors},
        {"created_s", job.created_s},
        {"in_progress_s", job.in_progress_s},
        {"finalizing_s", job.finalizing_s},
        {"completed_s", job.completed_s},
        {"failed_s", job.failed_s},
        {"expired_s", job.expired_s},
        {"cancelling_s", job.cancelling_s},
        {"cancelled_s", job.cancelled_s},
        {"cursor_line", job.cursor_line},
        {"cursor_offset", job.cursor_offset},
        {"mode", job.mode},
        {"deployment", job.deployment},
        {"provider_batch_id", job.provider_batch_id},
        {"note", job.note},
        {"cancel_sent", job.cancel_sent},
    };
}

std::optional<BatchJob> JobFromRecord(const json::value& record) {
    if (!record.is_object()) return std::nullopt;
    const json::object& o = record.as_object();
    BatchJob job;
    job.id = Text(o, "id");
    job.owner = Text(o, "owner");
    job.api = Text(o, "api") == "anthropic" ? Api::kAnthropic : Api::kOpenAi;
    job.endpoint = Text(o, "endpoint");
    job.input_file_id = Text(o, "input_file_id");
    job.completion_window = Text(o, "completion_window");
    job.window_s = Int(o, "window_s");
    const std::optional<Status> status = ParseStatus(Text(o, "status"));
    if (job.id.empty() || !status) return std::nullopt;
    job.status = *status;
    job.total = Int(o, "total");
    job.counts = {Int(o, "succeeded"), Int(o, "failed"), Int(o, "canceled"), Int(o, "expired")};
    job.input_tokens = Int(o, "input_tokens");
    job.output_tokens = Int(o, "output_tokens");
    job.model = Text(o, "model");
    job.output_file_id = Text(o, "output_file_id");
    job.error_file_id = Text(o, "error_file_id");
    if (const json::value* m = o.if_contains("metadata")) job.metadata = *m;
    if (const json::value* e = o.if_contains("errors"); e != nullptr && e->is_array()) {
        job.errors = e->as_array();
    }
    job.created_s = Int(o, "created_s");
    job.in_progress_s = Int(o, "in_progress_s");
    job.finalizing_s = Int(o, "finalizing_s");
    job.completed_s = Int(o, "completed_s");
    job.failed_s = Int(o, "failed_s");
    job.expired_s = Int(o, "expired_s");
    job.cancelling_s = Int(o, "cancelling_s");
    job.cancelled_s = Int(o, "cancelled_s");
    job.cursor_line = Int(o, "cursor_line");
    job.cursor_offset = Int(o, "cursor_offset");
    job.mode = Text(o, "mode");
    job.deployment = Text(o, "deployment");
    job.provider_batch_id = Text(o, "provider_batch_id");
    job.note = Text(o, "note");
    const json::value* sent = o.if_contains("cancel_sent");
    job.cancel_sent = sent != nullptr && sent->is_bool() && sent->as_bool();
    return job;
}

json::object OpenAiBatchObject(const BatchJob& job) {
    json::object batch{
        {"id", job.id},
        {"object", "batch"},
        {"endpoint", job.endpoint},
        {"model", job.model.empty() ? json::value(nullptr) : json::value(job.model)},
        {"errors", job.errors.empty()
                       ? json::value(nullptr)
                       : json::value(json::object{{"object", "list"}, {"data", job.errors}})},
        {"input_file_id", job.input_file_id},
        {"completion_window", job.completion_window},
        {"status", StatusName(job.status)},
        {"output_file_id", IdOrNull(job.output_file_id)},
        {"error_file_id", IdOrNull(job.error_file_id)},
        {"created_at", job.created_s},
        {"in_progress_at", Seconds(job.in_progress_s)},
        {"expires_at", job.ExpiresAt()},
        {"finalizing_at", Seconds(job.finalizing_s)},
        {"completed_at", Seconds(job.completed_s)},
        {"failed_at", Seconds(job.failed_s)},
        {"expired_at", Seconds(job.expired_s)},
        {"cancelling_at", Seconds(job.cancelling_s)},
        {"cancelled_at", Seconds(job.cancelled_s)},
        {"request_counts",
         {{"total", job.total},
          {"completed", job.counts.succeeded},
          {"failed", job.counts.failed + job.counts.canceled + job.counts.expired}}},
        {"usage",
         {{"input_tokens", job.input_tokens},
          {"input_tokens_details", {{"cached_tokens", 0}}},
          {"output_tokens", job.output_tokens},
          {"output_tokens_details", {{"reasoning_tokens", 0}}},
          {"total_tokens", job.input_tokens + job.output_tokens}}},
        {"metadata", job.metadata},
    };
    return batch;
}

json::object OpenAiFileObject(const BatchFile& file) {
    return {
        {"id", file.id},
        {"object", "file"},
        {"bytes", file.bytes},
        {"created_at", file.created_s},
        {"expires_at", nullptr},
        {"filename", file.filename},
        {"purpose", file.purpose},
        {"status", "processed"},
        {"status_details", nullptr},
    };
}

json::object AnthropicBatchObject(const BatchJob& job, std::string_view origin) {
    const bool ended = Ended(job.status);
    std::string_view processing = "in_progress";
    if (ended) {
        processing = "ended";
    } else if (job.status == Status::kCancelling) {
        processing = "canceling";
    }
    // Every line counts as processing until the whole batch has ended.
    json::object counts{{"processing", ended ? 0 : job.total},
                        {"succeeded", ended ? job.counts.succeeded : 0},
                        {"errored", ended ? job.counts.failed : 0},
                        {"canceled", ended ? job.counts.canceled : 0},
                        {"expired", ended ? job.counts.expired : 0}};
    const std::int64_t ended_s =
        std::max({job.completed_s, job.failed_s, job.expired_s, job.cancelled_s});
    return {
        {"id", job.id},
        {"type", "message_batch"},
        {"processing_status", processing},
        {"request_counts", std::move(counts)},
        {"ended_at", ended ? Instant(ended_s) : json::value(nullptr)},
        {"created_at", Instant(job.created_s)},
        {"expires_at", Instant(job.ExpiresAt())},
        {"archived_at", nullptr},
        {"cancel_initiated_at", Instant(job.cancelling_s)},
        {"results_url",
         ended ? json::value(std::string(origin) + "/v1/messages/batches/" + job.id + "/results")
               : json::value(nullptr)},
    };
}

std::optional<std::int64_t> ParseWindow(std::string_view text) {
    if (text.size() < 2) return std::nullopt;
    std::int64_t n = 0;
    const char* end = text.data() + text.size() - 1;
    const auto [ptr, ec] = std::from_chars(text.data(), end, n);
    if (ec != std::errc() || ptr != end || n <= 0) return std::nullopt;
    std::int64_t unit = 0;
    switch (text.back()) {
        case 's':
            unit = 1;
            break;
        case 'm':
            unit = 60;
            break;
        case 'h':
            unit = 3600;
            break;
        default:
            return std::nullopt;
    }
    if (n > 24 * 3600 / unit) return std::nullopt;
    return n * unit;
}

std::string NewFileId() { return "file-" + RandomBase62(24); }

std::string NewBatchId(Api api) {
    return api == Api::kAnthropic ? "msgbatch_" + RandomBase62(24) : "batch_" + core::RandomHex(16);
}

std::string NewLineId() { return "batch_req_" + core::RandomHex(16); }

bool ValidCustomId(std::string_view id) {
    if (id.empty() || id.size() > 64) return false;
    for (const char c : id) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '_' || c == '-';
        if (!ok) return false;
    }
    return true;
}

}  // namespace switchyard::batches
