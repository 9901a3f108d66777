#include <boost/json.hpp>

#include "api/openai_chat.h"

namespace switchyard::api {
namespace {

using core::ErrorKind;

bool IsToken(const boost::json::value& v) {
    return (v.is_int64() && v.get_int64() >= 0) || v.is_uint64();
}

// The shapes OpenAI accepts for `input`.
bool ValidInput(const boost::json::value& input) {
    if (input.is_string()) return true;
    if (!input.is_array() || input.get_array().empty()) return false;
    const boost::json::array& items = input.get_array();
    const boost::json::value& first = items.front();
    if (first.is_string()) {
        for (const auto& item : items) {
            if (!item.is_string()) return false;
        }
        return true;
    }
    if (IsToken(first)) {
        for (const auto& item : items) {
            if (!IsToken(item)) return false;
        }
        return true;
    }
    for (const auto& item : items) {
        if (!item.is_array() || item.get_array().empty()) return false;
        for (const auto& token : item.get_array()) {
            if (!IsToken(token)) return false;
        }
    }
    return true;
}

}  // namespace

std::variant<ChatRequest, core::LocalError> ParseOpenAiEmbeddings(std::string_view body) {
    auto read = ParseRequestObject(body);
    if (auto* error = std::get_if<core::LocalError>(&read)) return *error;
    boost::json::value parsed = std::move(std::get<boost::json::value>(read));
    const boost::json::object& o = parsed.get_object();
    const boost::json::value* input = o.if_contains("input");
    if (input == nullptr) {
        return core::LocalError{ErrorKind::kInvalidRequest, "Missing required parameter: 'input'.",
                                "input"};
    }
    if (!ValidInput(*input)) {
        return core::LocalError{ErrorKind::kInvalidRequest,
                                "'input' must be a string, a non-empty array of strings, an array "
                                "of token integers, or an array of arrays of token integers.",
                                "input"};
    }
    if (const boost::json::value* format = o.if_contains("encoding_format");
        format != nullptr && !(format->is_string() && (format->get_string() == "float" ||
                                                       format->get_string() == "base64"))) {
        return core::LocalError{ErrorKind::kInvalidRequest,
                                "'encoding_format' must be \"float\" or \"base64\".",
                                "encoding_format"};
    }
    if (const boost::json::value* dimensions = o.if_contains("dimensions");
        dimensions != nullptr &&
        !((dimensions->is_int64() && dimensions->get_int64() > 0) || dimensions->is_uint64())) {
        return core::LocalError{ErrorKind::kInvalidRequest,
                                "'dimensions' must be a positive integer.", "dimensions"};
    }
    if (const boost::json::value* stream = o.if_contains("stream");
        stream != nullptr && !(stream->is_bool() && !stream->get_bool()) && !stream->is_null()) {
        return core::LocalError{ErrorKind::kInvalidRequest, "Embeddings are never streamed.",
                                "stream"};
    }
    auto request = ChatRequestFromCanonical(std::move(parsed));
    if (auto* r = std::get_if<ChatRequest>(&request)) r->endpoint = Endpoint::kEmbeddings;
    return request;
}

}  // namespace switchyard::api
