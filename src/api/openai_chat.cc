#include "api/openai_chat.h"

#include <boost/json.hpp>

namespace switchyard::api {

std::variant<ChatRequest, core::LocalError> ParseOpenAiChat(std::string_view body) {
    using core::ErrorKind;
    boost::system::error_code ec;
    boost::json::value parsed = boost::json::parse(body, ec);
    if (ec) {
        return core::LocalError{ErrorKind::kMalformedJson,
                                "We could not parse the JSON body of your request: " +
                                    ec.message() + ". The body must be valid JSON."};
    }
    if (!parsed.is_object()) {
        return core::LocalError{ErrorKind::kMalformedJson,
                                "The request body must be a JSON object."};
    }
    ChatRequest request;
    const boost::json::object& object = parsed.get_object();
    const boost::json::value* model = object.if_contains("model");
    if (model == nullptr || !model->is_string() || model->get_string().empty()) {
        return core::LocalError{ErrorKind::kModelNotFound, "You must provide a model parameter.",
                                "model"};
    }
    request.model = std::string(model->get_string());
    if (const boost::json::value* stream = object.if_contains("stream")) {
        if (stream->is_bool()) {
            request.stream = stream->get_bool();
        } else if (!stream->is_null()) {
            return core::LocalError{ErrorKind::kInvalidRequest, "'stream' must be a boolean.",
                                    "stream"};
        }
    }
    if (const boost::json::value* options = object.if_contains("stream_options")) {
        if (const boost::json::object* o = options->if_object()) {
            if (const boost::json::value* usage = o->if_contains("include_usage")) {
                request.include_usage = usage->is_bool() && usage->get_bool();
            }
        }
    }
    request.body = std::move(parsed);
    return request;
}

std::string WithModel(const ChatRequest& request, std::string_view model) {
    boost::json::value copy = request.body;
    copy.get_object()["model"] = model;
    return boost::json::serialize(copy);
}

}  // namespace switchyard::api
