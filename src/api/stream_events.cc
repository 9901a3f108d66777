#include "api/stream_events.h"

#include <boost/json.hpp>

#include "core/json.h"

namespace switchyard::api {

bool IsErrorEvent(const core::SseEvent& event) {
    // Anthropic's and the Responses API's `event: error`, the Responses API's failed end, and an
    // OpenAI chunk whose JSON is an error.
    if (event.name == "error" || event.name == "response.failed") return true;
    return event.has_data && event.data.starts_with("{\"error\"");
}

bool IsEndEvent(const core::SseEvent& event) {
    return event.data == "[DONE]" || event.name == "message_stop" ||
           event.name == "response.completed" || event.name == "response.incomplete";
}

bool CarriesContent(const core::SseEvent& event) {
    if (!event.has_data) return false;
    if (event.data == "[DONE]") return true;
    if (event.name == "ping" || event.name == "message_start") return false;
    boost::system::error_code ec;
    const boost::json::value value = core::ParseJson(event.data, ec);
    if (ec || !value.is_object()) return true;
    const boost::json::object& o = value.get_object();
    if (const auto* type = o.if_contains("type"); type && type->is_string()) {
        const std::string_view t = type->get_string();
        if (t.starts_with("response.")) {
            // The Responses API: deltas and the end carry content; response.created,
            // .in_progress and the empty item and part openings do not.
            return t.ends_with(".delta") || t == "response.completed" || t == "response.incomplete";
        }
        // Anthropic: a block's first delta, the message's delta or its end carry content; the
        // message_start, a block's empty start and pings do not.
        return t == "content_block_delta" || t == "message_delta" || t == "message_stop";
    }
    const auto* choices = o.if_contains("choices");
    if (choices == nullptr || !choices->is_array() || choices->get_array().empty()) {
        return o.contains("usage");
    }
    const auto& choice = choices->get_array().front();
    if (!choice.is_object()) return true;
    if (const auto* finish = choice.get_object().if_contains("finish_reason");
        finish && !finish->is_null()) {
        return true;
    }
    const auto* delta = choice.get_object().if_contains("delta");
    if (delta == nullptr || !delta->is_object()) return false;
    const auto& d = delta->get_object();
    if (const auto* content = d.if_contains("content");
        content && content->is_string() && !content->get_string().empty()) {
        return true;
    }
    const auto* refusal = d.if_contains("refusal");
    return d.contains("tool_calls") || d.contains("function_call") ||
           (refusal != nullptr && !refusal->is_null());
}

bool IsProgress(const core::SseEvent& event, bool pings_are_progress) {
    if (pings_are_progress) return true;
    return event.has_data && event.name != "ping" && event.data != "{\"type\": \"ping\"}" &&
           event.data != "{\"type\":\"ping\"}";
}

std::string ErrorMessageOf(std::string_view json) {
    constexpr std::size_t kMaxRaw = 200;
    boost::system::error_code ec;
    const boost::json::value value = core::ParseJson(json, ec);
    if (!ec && value.is_object()) {
        const boost::json::object& o = value.get_object();
        // The Responses API: a flat error event, or a failed response carrying its error.
        if (const auto* message = o.if_contains("message");
            message && message->is_string() && !o.contains("error")) {
            return std::string(message->get_string());
        }
        if (const auto* response = o.if_contains("response"); response && response->is_object()) {
            return ErrorMessageOf(boost::json::serialize(response->get_object()));
        }
        const boost::json::value* error = o.if_contains("error");
        if (error != nullptr && error->is_object()) {
            const boost::json::value* message = error->get_object().if_contains("message");
            if (message != nullptr && message->is_string()) {
                return std::string(message->get_string());
            }
        }
        if (error != nullptr && error->is_string()) return std::string(error->get_string());
    }
    return std::string(json.substr(0, kMaxRaw));
}

}  // namespace switchyard::api
