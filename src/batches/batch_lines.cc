#include "batches/batch_lines.h"

#include <boost/json.hpp>

namespace switchyard::batches {
namespace {

namespace json = boost::json;

constexpr std::string_view kEndpoints[] = {"/v1/chat/completions", "/v1/responses",
                                           "/v1/embeddings"};

json::value ParseOr(std::string_view text) {
    boost::system::error_code ec;
    json::value v = json::parse(text, ec);
    if (ec) return json::value(std::string(text));
    return v;
}

std::int64_t IntAt(const json::object& o, std::string_view key) {
    const json::value* v = o.if_contains(key);
    return v != nullptr && v->is_int64() ? v->as_int64() : 0;
}

}  // namespace

bool BatchableEndpoint(std::string_view endpoint) {
    for (const std::string_view e : kEndpoints) {
        if (e == endpoint) return true;
    }
    return false;
}

std::optional<InputLine> ReadInputLine(Api api, std::string_view endpoint, std::string_view text,
                                       LineProblem& problem) {
    boost::system::error_code ec;
    const json::value value = json::parse(text, ec);
    if (ec || !value.is_object()) {
        problem = {"invalid_json_line", "This line is not parseable as valid JSON."};
        return std::nullopt;
    }
    const json::object& line = value.as_object();
    InputLine out;
    const json::value* id = line.if_contains("custom_id");
    if (id == nullptr || !id->is_string() || id->as_string().empty() ||
        id->as_string().size() > 512) {
        problem = {"invalid_request",
                   "Each line needs a custom_id: a string of 1 to 512 characters."};
        return std::nullopt;
    }
    out.custom_id = std::string(id->as_string());
    const json::value* body = nullptr;
    if (api == Api::kAnthropic) {
        body = line.if_contains("params");
        out.url = "/v1/messages";
    } else {
        const json::value* method = line.if_contains("method");
        if (method == nullptr || !method->is_string() || method->as_string() != "POST") {
            problem = {"invalid_request", "The line's method must be POST."};
            return std::nullopt;
        }
        const json::value* url = line.if_contains("url");
        if (url == nullptr || !url->is_string() || url->as_string() != endpoint) {
            problem = {"url_mismatch", "The line's url must be the batch's endpoint, " +
                                           std::string(endpoint) + "."};
            return std::nullopt;
        }
        out.url = std::string(endpoint);
        body = line.if_contains("body");
    }
    if (body == nullptr || !body->is_object()) {
        problem = {"invalid_request", api == Api::kAnthropic
                                          ? "The request's params must be an object."
                                          : "The line's body must be a JSON object."};
        return std::nullopt;
    }
    const json::value* model = body->as_object().if_contains("model");
    if (model == nullptr || !model->is_string() || model->as_string().empty()) {
        problem = {"missing_required_parameter", "The request names no model."};
        return std::nullopt;
    }
    const json::value* stream = body->as_object().if_contains("stream");
    if (stream != nullptr && stream->is_bool() && stream->as_bool()) {
        problem = {"invalid_request", "A batch request cannot stream: remove \"stream\": true."};
        return std::nullopt;
    }
    out.model = std::string(model->as_string());
    out.body = json::serialize(*body);
    return out;
}

std::string CustomIdOf(std::string_view text) {
    boost::system::error_code ec;
    const json::value value = json::parse(text, ec);
    if (ec || !value.is_object()) return {};
    const json::value* id = value.as_object().if_contains("custom_id");
    return id != nullptr && id->is_string() ? std::string(id->as_string()) : std::string();
}

std::string AnswerLine(Api api, std::string_view custom_id, unsigned status,
                       std::string_view request_id, std::string_view body) {
    const bool ok = status >= 200 && status < 300;
    if (api == Api::kAnthropic) {
        json::object result;
        if (ok) {
            result = {{"type", "succeeded"}, {"message", ParseOr(body)}};
        } else {
            json::value error = ParseOr(body);
            if (!error.is_object()) {
                error = {{"type", "error"},
                         {"error", {{"type", "api_error"}, {"message", std::string(body)}}}};
            }
            if (!request_id.empty() && !error.as_object().contains("request_id")) {
                error.as_object()["request_id"] = request_id;
            }
            result = {{"type", "errored"}, {"error", std::move(error)}};
        }
        return json::serialize(json::object{{"custom_id", custom_id}, {"result", result}});
    }
    return json::serialize(json::object{
        {"id", NewLineId()},
        {"custom_id", custom_id},
        {"response",
         {{"status_code", status},
          {"request_id", request_id.empty() ? json::value(nullptr) : json::value(request_id)},
          {"body", ParseOr(body)}}},
        {"error", nullptr}});
}

std::string UnrunLine(Api api, std::string_view custom_id, Unrun why) {
    const bool expired = why == Unrun::kExpired;
    if (api == Api::kAnthropic) {
        return json::serialize(json::object{
            {"custom_id", custom_id}, {"result", {{"type", expired ? "expired" : "canceled"}}}});
    }
    return json::serialize(json::object{
        {"id", NewLineId()},
        {"custom_id", custom_id},
        {"response", nullptr},
        {"error",
         {{"code", expired ? "batch_expired" : "batch_cancelled"},
          {"message", expired ? "This request could not be executed before the completion "
                                "window expired."
                              : "This request was not executed: the batch was cancelled."}}}});
}

Tokens TokensOf(std::string_view body) {
    boost::system::error_code ec;
    const json::value value = json::parse(body, ec);
    if (ec || !value.is_object()) return {};
    const json::value* usage = value.as_object().if_contains("usage");
    if (usage == nullptr || !usage->is_object()) return {};
    const json::object& u = usage->as_object();
    Tokens t;
    t.input = u.contains("input_tokens") ? IntAt(u, "input_tokens") : IntAt(u, "prompt_tokens");
    t.output =
        u.contains("output_tokens") ? IntAt(u, "output_tokens") : IntAt(u, "completion_tokens");
    return t;
}

}  // namespace switchyard::batches
