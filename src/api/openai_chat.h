#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <string_view>
#include <variant>

#include "core/error.h"

namespace switchyard::api {

// What routing needs from an OpenAI chat completions request, read once from the body.
struct ChatRequest {
    boost::json::value body;  // the parsed request, kept for rewriting
    std::string model;        // the model group the client named
    bool stream = false;
    bool include_usage = false;  // stream_options.include_usage
};

// Scans an OpenAI chat completions body. Errors: kMalformedJson (not JSON / not an object),
// kModelNotFound (no string `model`), kInvalidRequest (`stream` not a boolean).
std::variant<ChatRequest, core::LocalError> ParseOpenAiChat(std::string_view body);

// The request body with `model` replaced, serialised. Callers skip this when the model is
// unchanged and forward the client's bytes as they came.
std::string WithModel(const ChatRequest& request, std::string_view model);

}  // namespace switchyard::api
