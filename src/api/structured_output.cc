#include "api/structured_output.h"

#include <boost/json.hpp>

#include "api/json_access.h"
#include "core/json.h"

namespace switchyard::api {
namespace {

namespace json = boost::json;

// `format` (`{type: json_schema, ...}`) and where its schema is.
std::optional<json::value> SchemaOfFormat(const json::object* format, std::string_view nested) {
    if (format == nullptr || StringAt(*format, "type") != "json_schema") return std::nullopt;
    const json::object* holder = nested.empty() ? format : FindObject(*format, nested);
    if (holder == nullptr) return std::nullopt;
    const json::value* schema = Find(*holder, "schema");
    if (schema == nullptr) return std::nullopt;
    return *schema;
}

std::optional<json::value> ParsedObject(std::string_view text) {
    boost::system::error_code ec;
    json::value value = core::ParseJson(text, ec);
    if (ec || !value.is_object()) return std::nullopt;
    return value;
}

}  // namespace

std::optional<json::value> RequestedSchema(const json::object& request, Wire wire) {
    switch (wire) {
        case Wire::kOpenAi:
            return SchemaOfFormat(FindObject(request, "response_format"), "json_schema");
        case Wire::kAnthropic: {
            const json::object* config = FindObject(request, "output_config");
            return SchemaOfFormat(config ? FindObject(*config, "format") : nullptr, "");
        }
        case Wire::kResponses: {
            const json::object* text = FindObject(request, "text");
            return SchemaOfFormat(text ? FindObject(*text, "format") : nullptr, "");
        }
    }
    return std::nullopt;
}

std::optional<std::string> AnswerText(std::string_view body, Wire wire) {
    const std::optional<json::value> parsed = ParsedObject(body);
    if (!parsed) return std::nullopt;
    const json::object& answer = parsed->get_object();
    std::string text;
    switch (wire) {
        case Wire::kOpenAi: {
            const json::array* choices = FindArray(answer, "choices");
            if (choices == nullptr || choices->empty() || !choices->front().is_object()) {
                return std::nullopt;
            }
            const json::object* message = FindObject(choices->front().get_object(), "message");
            if (message == nullptr || Find(*message, "refusal") != nullptr) return std::nullopt;
            if (const json::array* calls = FindArray(*message, "tool_calls");
                calls != nullptr && !calls->empty()) {
                return std::nullopt;
            }
            const json::value* content = Find(*message, "content");
            if (content == nullptr || !content->is_string()) return std::nullopt;
            return std::string(content->get_string());
        }
        case Wire::kAnthropic: {
            const json::array* content = FindArray(answer, "content");
            if (content == nullptr) return std::nullopt;
            for (const json::value& block : *content) {
                if (!block.is_object()) continue;
                const std::string_view type = StringAt(block.get_object(), "type");
                if (type == "tool_use") return std::nullopt;
                if (type == "text") text += StringAt(block.get_object(), "text");
            }
            break;
        }
        case Wire::kResponses: {
            const json::array* output = FindArray(answer, "output");
            if (output == nullptr) return std::nullopt;
            for (const json::value& item : *output) {
                if (!item.is_object()) continue;
                const std::string_view type = StringAt(item.get_object(), "type");
                if (type == "function_call") return std::nullopt;
                if (type != "message") continue;
                const json::array* parts = FindArray(item.get_object(), "content");
                if (parts == nullptr) continue;
                for (const json::value& part : *parts) {
                    if (!part.is_object()) continue;
                    const std::string_view part_type = StringAt(part.get_object(), "type");
                    if (part_type == "refusal") return std::nullopt;
                    if (part_type == "output_text") text += StringAt(part.get_object(), "text");
                }
            }
            break;
        }
    }
    if (text.empty()) return std::nullopt;
    return text;
}

void StreamText::Feed(std::string_view name, std::string_view data) {
    if (other_ || data == "[DONE]") return;
    const std::optional<json::value> parsed = ParsedObject(data);
    if (!parsed) return;
    const json::object& event = parsed->get_object();
    switch (wire_) {
        case Wire::kOpenAi: {
            const json::array* choices = FindArray(event, "choices");
            if (choices == nullptr || choices->empty() || !choices->front().is_object()) return;
            const json::object* delta = FindObject(choices->front().get_object(), "delta");
            if (delta == nullptr) return;
            if (Find(*delta, "refusal") != nullptr || Find(*delta, "tool_calls") != nullptr) {
                other_ = true;
                return;
            }
            text_ += StringAt(*delta, "content");
            return;
        }
        case Wire::kAnthropic: {
            const std::string_view type = name.empty() ? StringAt(event, "type") : name;
            if (type == "content_block_start") {
                const json::object* block = FindObject(event, "content_block");
                if (block != nullptr && StringAt(*block, "type") == "tool_use") other_ = true;
            } else if (type == "content_block_delta") {
                const json::object* delta = FindObject(event, "delta");
                if (delta != nullptr && StringAt(*delta, "type") == "text_delta") {
                    text_ += StringAt(*delta, "text");
                }
            }
            return;
        }
        case Wire::kResponses: {
            const std::string_view type = name.empty() ? StringAt(event, "type") : name;
            if (type == "response.output_text.delta") {
                text_ += StringAt(event, "delta");
            } else if (type == "response.refusal.delta" ||
                       type == "response.function_call_arguments.delta") {
                other_ = true;
            }
            return;
        }
    }
}

std::optional<std::string> StreamText::Text() const {
    if (other_ || text_.empty()) return std::nullopt;
    return text_;
}

}  // namespace switchyard::api
