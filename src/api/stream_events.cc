#include "api/stream_events.h"

#include <boost/json.hpp>

#include "api/chunk_facts.h"
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
    const ChunkFacts facts = ReadChunkFacts(event.data);
    if (!facts.valid || !facts.object) return true;
    if (facts.type_is_string) {
        if (facts.TypeStartsWith("response.")) {
            // The Responses API: deltas and the end carry content; response.created,
            // .in_progress and the empty item and part openings do not.
            return facts.TypeEndsWith(".delta") || facts.TypeIs("response.completed") ||
                   facts.TypeIs("response.incomplete");
        }
        // Anthropic: a block's first delta, the message's delta or its end carry content; the
        // message_start, a block's empty start and pings do not.
        return facts.TypeIs("content_block_delta") || facts.TypeIs("message_delta") ||
               facts.TypeIs("message_stop");
    }
    if (!facts.choices_is_array || facts.choices == 0) return facts.has_usage;
    if (!facts.first_choice_object) return true;
    if (facts.finish_reason) return true;
    if (!facts.delta_object) return false;
    return facts.content || facts.tool_calls || facts.function_call || facts.refusal;
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
