#include "batch_wire.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <ctime>
#include <unordered_set>

#include "json_text.h"
#include "openai_wire.h"

namespace switchyard::mock::batches {
namespace json = boost::json;
namespace {

constexpr std::string_view kMessagesPath = "/v1/messages";
constexpr std::chrono::hours kExpiry{24};  // the completion window of both APIs
constexpr std::size_t kMaxMetadataKeys = 16;
constexpr std::size_t kMaxInputErrors = 100;  // errors reported of one input file

json::string_view JsonView(std::string_view text) { return {text.data(), text.size()}; }

std::string_view View(const json::string& text) { return {text.data(), text.size()}; }

json::value Optional(const std::optional<std::string>& text) {
    if (!text) return nullptr;
    return json::string(JsonView(*text));
}

std::int64_t UnixSeconds(WallTime time) {
    return std::chrono::duration_cast<std::chrono::seconds>(time.time_since_epoch()).count();
}

json::value UnixSeconds(const std::optional<WallTime>& time) {
    if (!time) return nullptr;
    return UnixSeconds(*time);
}

json::value Rfc3339(const std::optional<WallTime>& time) {
    if (!time) return nullptr;
    return json::string(FormatRfc3339Micros(*time));
}

// A JSON text that the server itself made, as a value to embed. Text that is no JSON (which the
// mock never makes) becomes a string rather than breaking the line it is embedded in.
void AppendRawJson(std::string& out, std::string_view text) {
    if (text.find_first_of("\r\n") == std::string_view::npos && !text.empty()) {
        out += text;
        return;
    }
    boost::system::error_code ec;
    const json::value value = json::parse(JsonView(text), ec);
    if (ec) {
        AppendJsonString(out, text);
        return;
    }
    out += json::serialize(value);
}

OpenAiBatchRequest InvalidBatchRequest(std::string body) {
    OpenAiBatchRequest result;
    result.status = 400;
    result.error_body = std::move(body);
    return result;
}

// Reads the required string field `name` of `object` into `out`; an error body or "".
std::string RequiredString(const json::object& object, std::string_view name, std::string& out) {
    const auto it = object.find(JsonView(name));
    if (it == object.end() || it->value().is_null()) return openai::MissingParameterBody(name);
    const auto* text = it->value().if_string();
    if (text == nullptr) return openai::InvalidTypeBody(name, "a string", it->value().kind());
    out.assign(View(*text));
    return {};
}

Error LineError(std::string code, std::string message, std::optional<std::string> param,
                std::int64_t line) {
    return Error{std::move(code), std::move(message), std::move(param), line};
}

// The error of one input line, or nullopt when it is a valid request. Fills `out` when valid.
std::optional<Error> ReadInputLine(std::string_view text, std::int64_t number,
                                   std::string_view endpoint, Line& out) {
    boost::system::error_code ec;
    const json::value root = json::parse(JsonView(text), ec, {}, DeepJsonDocuments());
    const auto* object = root.if_object();
    if (ec || object == nullptr) {
        return LineError("invalid_json_line", "This line is not parseable as valid JSON.",
                         std::nullopt, number);
    }
    const auto missing = [number](std::string_view name) {
        return LineError("missing_required_parameter",
                         fmt::format("Missing required parameter: '{}'.", name), std::string(name),
                         number);
    };
    const auto wrong_type = [number](std::string_view name, std::string_view expected,
                                     const json::value& got) {
        return LineError("invalid_type",
                         fmt::format("Invalid type for '{}': expected {}, but got {} instead.",
                                     name, expected, JsonKindName(got.kind())),
                         std::string(name), number);
    };
    const json::string* strings[3] = {};
    const std::string_view names[3] = {"custom_id", "method", "url"};
    for (int i = 0; i < 3; ++i) {
        const auto it = object->find(JsonView(names[i]));
        if (it == object->end()) return missing(names[i]);
        strings[i] = it->value().if_string();
        if (strings[i] == nullptr) return wrong_type(names[i], "a string", it->value());
    }
    if (View(*strings[1]) != "POST") {
        return LineError(
            "invalid_value",
            fmt::format("Invalid value: '{}'. Supported values are: 'POST'.", View(*strings[1])),
            "method", number);
    }
    if (View(*strings[2]) != endpoint) {
        return LineError("invalid_url",
                         fmt::format("The URL provided for this request ({}) does not match the "
                                     "batch endpoint ({}).",
                                     View(*strings[2]), endpoint),
                         "url", number);
    }
    const auto body = object->find("body");
    if (body == object->end()) return missing("body");
    if (!body->value().is_object()) return wrong_type("body", "an object", body->value());
    out.custom_id.assign(View(*strings[0]));
    out.url.assign(endpoint);
    out.body = json::serialize(body->value());
    return std::nullopt;
}

bool ValidCustomId(std::string_view id) {
    if (id.empty() || id.size() > 64) return false;
    return std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-';
    });
}

// A JSON list of the objects `object` makes of `items`, with OpenAI's cursor fields.
template <class T, class Object>
std::string OpenAiList(const std::vector<T>& items, bool has_more, Object object) {
    std::string out = R"({"object":"list","data":[)";
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out.push_back(',');
        out += object(items[i]);
    }
    out += R"(],"first_id":)";
    out += items.empty() ? "null" : json::serialize(json::string(JsonView(items.front().id)));
    out += R"(,"last_id":)";
    out += items.empty() ? "null" : json::serialize(json::string(JsonView(items.back().id)));
    out += has_more ? R"(,"has_more":true})" : R"(,"has_more":false})";
    return out;
}

}  // namespace

std::string_view StatusName(Status status) {
    switch (status) {
        case Status::kValidating:
            return "validating";
        case Status::kInProgress:
            return "in_progress";
        case Status::kCancelling:
            return "cancelling";
        case Status::kCompleted:
            return "completed";
        case Status::kFailed:
            return "failed";
        case Status::kExpired:
            return "expired";
        case Status::kCancelled:
            return "cancelled";
    }
    return "in_progress";
}

bool BatchInfo::Ended() const {
    return status == Status::kCompleted || status == Status::kFailed ||
           status == Status::kExpired || status == Status::kCancelled;
}

std::optional<WallTime> BatchInfo::EndedAt() const {
    switch (status) {
        case Status::kCompleted:
            return completed_at;
        case Status::kFailed:
            return failed_at;
        case Status::kExpired:
            return expired_at;
        case Status::kCancelled:
            return cancelled_at;
        default:
            return std::nullopt;
    }
}

OpenAiBatchRequest ParseOpenAiBatchRequest(std::string_view body) {
    boost::system::error_code ec;
    const json::value root = json::parse(JsonView(body), ec, {}, DeepJsonDocuments());
    if (ec) return InvalidBatchRequest(openai::UnparsableJsonBody());
    const auto* object = root.if_object();
    if (object == nullptr) return InvalidBatchRequest(openai::NotAnObjectBody(root.kind()));
    OpenAiBatchRequest result;
    for (const auto& [name, field] :
         {std::pair<std::string_view, std::string*>{"input_file_id", &result.input_file_id},
          {"endpoint", &result.endpoint},
          {"completion_window", &result.completion_window}}) {
        if (std::string error = RequiredString(*object, name, *field); !error.empty()) {
            return InvalidBatchRequest(std::move(error));
        }
    }
    if (result.endpoint != "/v1/chat/completions" && result.endpoint != "/v1/embeddings" &&
        result.endpoint != "/v1/responses") {
        return InvalidBatchRequest(openai::InvalidValueBody(
            "endpoint", result.endpoint,
            "'/v1/chat/completions', '/v1/embeddings' and '/v1/responses'"));
    }
    if (result.completion_window != "24h") {
        return InvalidBatchRequest(
            openai::InvalidValueBody("completion_window", result.completion_window, "'24h'"));
    }
    if (const auto metadata = object->find("metadata");
        metadata != object->end() && !metadata->value().is_null()) {
        const auto* fields = metadata->value().if_object();
        if (fields == nullptr) {
            return InvalidBatchRequest(
                openai::InvalidTypeBody("metadata", "an object", metadata->value().kind()));
        }
        if (fields->size() > kMaxMetadataKeys) {
            return InvalidBatchRequest(openai::ErrorEnvelope(
                fmt::format("Invalid 'metadata': too many properties. Expected an object with at "
                            "most {} properties, but got an object with {} properties instead.",
                            kMaxMetadataKeys, fields->size()),
                "invalid_request_error", "metadata", "object_above_max_properties"));
        }
        for (const auto& field : *fields) {
            if (!field.value().is_string()) {
                const std::string param = fmt::format("metadata.{}", std::string_view(field.key()));
                return InvalidBatchRequest(
                    openai::InvalidTypeBody(param, "a string", field.value().kind()));
            }
        }
        result.metadata = json::serialize(*fields);
    }
    return result;
}

OpenAiInput ParseOpenAiInput(std::string_view content, std::string_view endpoint) {
    OpenAiInput input;
    std::unordered_set<std::string> custom_ids;
    std::int64_t number = 0;
    while (!content.empty()) {
        const auto newline = content.find('\n');
        std::string_view text = content.substr(0, newline);
        content =
            newline == std::string_view::npos ? std::string_view{} : content.substr(newline + 1);
        ++number;
        if (text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
        Line line;
        std::optional<Error> error = ReadInputLine(text, number, endpoint, line);
        if (!error && !custom_ids.insert(line.custom_id).second) {
            error = LineError("duplicate_custom_id",
                              "The custom_id for this request is a duplicate of another request. "
                              "The custom_id parameter must be unique for each request in a batch.",
                              "custom_id", number);
        }
        if (error) {
            if (input.errors.size() < kMaxInputErrors) input.errors.push_back(std::move(*error));
            continue;
        }
        if (input.lines.empty()) {
            boost::system::error_code ec;
            const json::value body = json::parse(JsonView(line.body), ec);
            if (const auto* model =
                    body.is_object() ? body.get_object().if_contains("model") : nullptr;
                model != nullptr && model->is_string()) {
                input.model.emplace(View(model->get_string()));
            }
        }
        input.lines.push_back(std::move(line));
    }
    if (input.lines.empty() && input.errors.empty()) {
        input.errors.push_back(Error{"empty_file",
                                     "The batch input file is empty. Please ensure that the "
                                     "batch contains at least one request.",
                                     std::nullopt, std::nullopt});
    }
    return input;
}

MessageBatchRequest ParseMessageBatchRequest(std::string_view body) {
    MessageBatchRequest result;
    const auto invalid = [&result](std::string message) {
        result.lines.clear();
        result.model.clear();
        result.error = std::move(message);
        return result;
    };
    boost::system::error_code ec;
    const json::value root = json::parse(JsonView(body), ec, {}, DeepJsonDocuments());
    if (ec) return invalid("The request body is not valid JSON.");
    const auto* object = root.if_object();
    if (object == nullptr) return invalid("Input should be a valid dictionary");
    const auto requests_it = object->find("requests");
    if (requests_it == object->end()) return invalid("requests: Field required");
    const auto* requests = requests_it->value().if_array();
    if (requests == nullptr) return invalid("requests: Input should be a valid list");
    if (requests->empty()) {
        return invalid("requests: List should have at least 1 item after validation, not 0");
    }
    if (requests->size() > kMaxMessageBatchRequests) {
        return invalid(
            fmt::format("requests: List should have at most {} items after validation, not {}",
                        kMaxMessageBatchRequests, requests->size()));
    }
    std::unordered_set<std::string> custom_ids;
    result.lines.reserve(requests->size());
    for (std::size_t i = 0; i < requests->size(); ++i) {
        const auto* request = (*requests)[i].if_object();
        if (request == nullptr) {
            return invalid(fmt::format("requests.{}: Input should be a valid dictionary", i));
        }
        const auto custom_id = request->find("custom_id");
        if (custom_id == request->end()) {
            return invalid(fmt::format("requests.{}.custom_id: Field required", i));
        }
        const auto* id = custom_id->value().if_string();
        if (id == nullptr) {
            return invalid(fmt::format("requests.{}.custom_id: Input should be a valid string", i));
        }
        if (!ValidCustomId(View(*id))) {
            return invalid(fmt::format(
                "requests.{}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'", i));
        }
        if (!custom_ids.emplace(View(*id)).second) {
            return invalid(fmt::format(
                "requests.{}.custom_id: Duplicate custom_id '{}': every request in a batch needs "
                "its own custom_id.",
                i, View(*id)));
        }
        const auto params = request->find("params");
        if (params == request->end()) {
            return invalid(fmt::format("requests.{}.params: Field required", i));
        }
        const auto* fields = params->value().if_object();
        if (fields == nullptr) {
            return invalid(
                fmt::format("requests.{}.params: Input should be a valid dictionary", i));
        }
        if (i == 0) {
            if (const auto* model = fields->if_contains("model"); model && model->is_string()) {
                result.model.assign(View(model->get_string()));
            }
        }
        result.lines.push_back(
            Line{std::string(View(*id)), std::string(kMessagesPath), json::serialize(*fields)});
    }
    return result;
}

std::string FileObject(const FileInfo& file) {
    json::object object;
    object["id"] = JsonView(file.id);
    object["object"] = "file";
    object["bytes"] = file.bytes;
    object["created_at"] = UnixSeconds(file.created);
    object["filename"] = JsonView(file.filename);
    object["purpose"] = JsonView(file.purpose);
    object["status"] = "processed";
    object["status_details"] = nullptr;
    object["expires_at"] = nullptr;
    return json::serialize(object);
}

std::string FileList(const std::vector<FileInfo>& files, bool has_more) {
    return OpenAiList(files, has_more, FileObject);
}

std::string FileDeleted(std::string_view id) {
    json::object object;
    object["id"] = JsonView(id);
    object["object"] = "file";
    object["deleted"] = true;
    return json::serialize(object);
}

std::string OpenAiBatchObject(const BatchInfo& batch) {
    json::object object;
    object["id"] = JsonView(batch.id);
    object["object"] = "batch";
    object["endpoint"] = JsonView(batch.endpoint);
    if (batch.errors.empty()) {
        object["errors"] = nullptr;
    } else {
        json::array data;
        for (const Error& error : batch.errors) {
            json::object entry;
            entry["code"] = JsonView(error.code);
            entry["message"] = JsonView(error.message);
            entry["param"] = Optional(error.param);
            entry["line"] = error.line ? json::value(*error.line) : json::value(nullptr);
            data.push_back(std::move(entry));
        }
        object["errors"] = json::object{{"object", "list"}, {"data", std::move(data)}};
    }
    object["input_file_id"] = JsonView(batch.input_file_id);
    object["completion_window"] = JsonView(batch.completion_window);
    object["status"] = JsonView(StatusName(batch.status));
    object["output_file_id"] = Optional(batch.output_file_id);
    object["error_file_id"] = Optional(batch.error_file_id);
    object["created_at"] = UnixSeconds(batch.created);
    object["in_progress_at"] = UnixSeconds(batch.in_progress_at);
    object["expires_at"] = UnixSeconds(batch.created + kExpiry);
    object["finalizing_at"] = UnixSeconds(batch.finalizing_at);
    object["completed_at"] = UnixSeconds(batch.completed_at);
    object["failed_at"] = UnixSeconds(batch.failed_at);
    object["expired_at"] = UnixSeconds(batch.expired_at);
    object["cancelling_at"] = UnixSeconds(batch.cancelling_at);
    object["cancelled_at"] = UnixSeconds(batch.cancelled_at);
    // Counted once the batch is in progress; a batch that failed when created ran nothing.
    const bool counted = batch.status != Status::kValidating && batch.status != Status::kFailed;
    const bool ended = batch.Ended();
    object["request_counts"] = json::object{
        {"total", counted ? batch.total : 0},
        {"completed", ended ? batch.succeeded : 0},
        {"failed", ended ? batch.errored + batch.cancelled + batch.expired : 0},
    };
    boost::system::error_code ec;
    object["metadata"] = json::parse(JsonView(batch.metadata), ec);
    object["model"] = Optional(batch.model);
    return json::serialize(object);
}

std::string OpenAiBatchList(const std::vector<BatchInfo>& batches, bool has_more) {
    return OpenAiList(batches, has_more, OpenAiBatchObject);
}

std::string MessageBatchObject(const BatchInfo& batch, std::string_view origin) {
    const bool ended = batch.Ended();
    json::object object;
    object["id"] = JsonView(batch.id);
    object["type"] = "message_batch";
    object["processing_status"] = ended                                 ? "ended"
                                  : batch.status == Status::kCancelling ? "canceling"
                                                                        : "in_progress";
    object["request_counts"] = json::object{
        {"processing", ended ? 0 : batch.total},
        {"succeeded", batch.succeeded},
        {"errored", batch.errored},
        {"canceled", batch.cancelled},
        {"expired", batch.expired},
    };
    object["ended_at"] = Rfc3339(batch.EndedAt());
    object["created_at"] = Rfc3339(batch.created);
    object["expires_at"] = Rfc3339(batch.created + kExpiry);
    object["archived_at"] = nullptr;
    object["cancel_initiated_at"] = Rfc3339(batch.cancelling_at);
    if (ended) {
        object["results_url"] =
            json::string(fmt::format("{}/v1/messages/batches/{}/results", origin, batch.id));
    } else {
        object["results_url"] = nullptr;
    }
    return json::serialize(object);
}

std::string MessageBatchList(const std::vector<BatchInfo>& batches, bool has_more,
                             std::string_view origin) {
    std::string out = R"({"data":[)";
    for (std::size_t i = 0; i < batches.size(); ++i) {
        if (i > 0) out.push_back(',');
        out += MessageBatchObject(batches[i], origin);
    }
    out += has_more ? R"(],"has_more":true,"first_id":)" : R"(],"has_more":false,"first_id":)";
    out += batches.empty() ? "null" : json::serialize(json::string(JsonView(batches.front().id)));
    out += R"(,"last_id":)";
    out += batches.empty() ? "null" : json::serialize(json::string(JsonView(batches.back().id)));
    out += "}";
    return out;
}

std::string MessageBatchDeleted(std::string_view id) {
    json::object object;
    object["id"] = JsonView(id);
    object["type"] = "message_batch_deleted";
    return json::serialize(object);
}

void AppendOpenAiResultLine(std::string& out, std::string_view line_id, std::string_view custom_id,
                            Outcome outcome, const Answer& answer) {
    out += R"({"id":)";
    AppendJsonString(out, line_id);
    out += R"(,"custom_id":)";
    AppendJsonString(out, custom_id);
    switch (outcome) {
        case Outcome::kAnswered:
            fmt::format_to(std::back_inserter(out), R"(,"response":{{"status_code":{},)",
                           answer.status);
            out += R"("request_id":)";
            AppendJsonString(out, answer.request_id);
            out += R"(,"body":)";
            AppendRawJson(out, answer.body);
            out += R"(},"error":null})";
            break;
        case Outcome::kCancelled:
            out += R"(,"response":null,"error":{"code":"batch_cancelled","message":)"
                   R"("This request was not executed because the batch was cancelled."}})";
            break;
        case Outcome::kExpired:
            out += R"(,"response":null,"error":{"code":"batch_expired","message":)"
                   R"("This request could not be executed before the completion window )"
                   R"(expired."}})";
            break;
    }
    out.push_back('\n');
}

void AppendMessageResultLine(std::string& out, std::string_view custom_id, Outcome outcome,
                             const Answer& answer) {
    out += R"({"custom_id":)";
    AppendJsonString(out, custom_id);
    switch (outcome) {
        case Outcome::kAnswered:
            if (answer.status >= 200 && answer.status < 300) {
                out += R"(,"result":{"type":"succeeded","message":)";
            } else {
                out += R"(,"result":{"type":"errored","error":)";
            }
            AppendRawJson(out, answer.body);
            out += "}}";
            break;
        case Outcome::kCancelled:
            out += R"(,"result":{"type":"canceled"}})";
            break;
        case Outcome::kExpired:
            out += R"(,"result":{"type":"expired"}})";
            break;
    }
    out.push_back('\n');
}

Error OpenAiRefusal(BatchRefusal refusal, std::string_view model) {
    switch (refusal) {
        case BatchRefusal::kQueueLimit:
            return Error{"token_limit_exceeded",
                         fmt::format("Enqueued token limit reached for {} in organization "
                                     "org-mock. Limit: 2,000,000 enqueued tokens. Please try "
                                     "again once some in_progress batches have been completed.",
                                     model),
                         std::nullopt, std::nullopt};
        case BatchRefusal::kModel:
            return Error{"model_not_found",
                         fmt::format("The model `{}` does not exist or is not available for the "
                                     "Batch API.",
                                     model),
                         std::nullopt, std::nullopt};
    }
    return {};
}

MessageBatchRefusal AnthropicRefusal(BatchRefusal refusal, std::string_view model) {
    switch (refusal) {
        case BatchRefusal::kQueueLimit:
            return {429, "rate_limit_error",
                    "Number of batch requests in the queue exceeds your rate limit. Please try "
                    "again later."};
        case BatchRefusal::kModel:
            return {
                400, "invalid_request_error",
                fmt::format("The model `{}` is not available for the Message Batches API.", model)};
    }
    return {};
}

std::string FormatRfc3339Micros(WallTime time) {
    const auto micros =
        std::chrono::duration_cast<std::chrono::microseconds>(time.time_since_epoch()).count();
    std::int64_t seconds = micros / 1'000'000;
    std::int64_t fraction = micros % 1'000'000;
    if (fraction < 0) {
        fraction += 1'000'000;
        --seconds;
    }
    const auto whole = static_cast<std::time_t>(seconds);
    std::tm utc{};
    gmtime_r(&whole, &utc);
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", utc.tm_year + 1900,
                       utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, fraction);
}

}  // namespace switchyard::mock::batches
