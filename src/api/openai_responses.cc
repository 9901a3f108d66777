#include <boost/json.hpp>

#include "api/openai_chat.h"
#include "api/responses.h"

namespace switchyard::api {

std::variant<ChatRequest, core::LocalError> ParseOpenAiResponses(std::string_view body) {
    auto read = ParseRequestObject(body);
    if (auto* error = std::get_if<core::LocalError>(&read)) return *error;
    boost::json::object original = std::move(std::get<boost::json::value>(read).get_object());
    const boost::json::value* input = original.if_contains("input");
    if (input == nullptr || !(input->is_string() || input->is_array())) {
        return core::LocalError{core::ErrorKind::kInvalidRequest,
                                input == nullptr
                                    ? "Missing required parameter: 'input'."
                                    : "'input' must be a string or an array of input items.",
                                "input"};
    }
    // The gateway fields and the routing facts, read as for chat completions.
    auto routed = ChatRequestFromCanonical(boost::json::value(original));
    if (auto* error = std::get_if<core::LocalError>(&routed)) return *error;
    ChatRequest request = std::move(std::get<ChatRequest>(routed));
    request.wire = Wire::kResponses;
    request.body = nullptr;
    request.max_tokens = 0;
    if (const boost::json::value* max = original.if_contains("max_output_tokens");
        max != nullptr && max->is_int64() && max->get_int64() > 0) {
        request.max_tokens = max->get_int64();
    }
    request.include_usage = request.stream;
    original.erase("models");
    original.erase("fallbacks");
    auto chat = ResponsesRequestToChat(original);
    if (auto* object = std::get_if<boost::json::object>(&chat)) {
        request.body = std::move(*object);
    } else {
        request.cannot_cross = std::move(std::get<core::LocalError>(chat));
    }
    request.original = std::move(original);
    return request;
}

}  // namespace switchyard::api
