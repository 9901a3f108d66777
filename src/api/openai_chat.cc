#include "api/openai_chat.h"

#include <algorithm>
#include <boost/json.hpp>

#include "api/chat_scan.h"
#include "api/translate.h"
#include "core/json.h"

namespace switchyard::api {
namespace {

using core::ErrorKind;

// Reads a gateway field that must be an array of strings; nullopt (with `error` set) otherwise.
std::optional<std::vector<std::string>> NameList(const boost::json::value& list,
                                                 std::string_view field,
                                                 std::optional<core::LocalError>& error) {
    std::vector<std::string> names;
    if (list.is_array()) {
        for (const auto& item : list.get_array()) {
            if (!item.is_string()) break;
            names.emplace_back(item.get_string());
        }
    }
    if (!list.is_array() || names.size() != list.get_array().size()) {
        error = core::LocalError{ErrorKind::kInvalidRequest,
                                 "'" + std::string(field) + "' must be an array of model names.",
                                 std::string(field)};
        return std::nullopt;
    }
    return names;
}

}  // namespace

std::variant<boost::json::value, core::LocalError> ParseRequestObject(std::string_view body) {
    boost::system::error_code ec;
    // A monotonic arena owned by the parsed value: a handful of block allocations instead of one
    // per JSON node, on every request.
    boost::json::value parsed = core::ParseJson(
        body, ec, boost::json::make_shared_resource<boost::json::monotonic_resource>());
    if (ec) {
        return core::LocalError{ErrorKind::kMalformedJson,
                                "We could not parse the JSON body of your request: " +
                                    ec.message() + ". The body must be valid JSON."};
    }
    if (!parsed.is_object()) {
        return core::LocalError{ErrorKind::kMalformedJson,
                                "The request body must be a JSON object."};
    }
    return parsed;
}

std::variant<ChatRequest, core::LocalError> ParseOpenAiChat(std::string_view body) {
    if (const std::optional<ChatScan> scan = ScanChatRequest(body)) {
        // The plain case, without a document: most requests go upstream as they came.
        ChatRequest request;
        request.model = std::string(scan->model);
        request.stream = scan->stream;
        request.include_usage = scan->include_usage;
        request.max_tokens = scan->max_tokens;
        request.raw = body;
        return request;
    }
    auto parsed = ParseRequestObject(body);
    if (auto* error = std::get_if<core::LocalError>(&parsed)) return *error;
    return ChatRequestFromCanonical(std::move(std::get<boost::json::value>(parsed)));
}

std::variant<ChatRequest, core::LocalError> ChatRequestFromCanonical(boost::json::value parsed) {
    ChatRequest request;
    const boost::json::object& object = parsed.get_object();
    std::optional<core::LocalError> error;
    if (const boost::json::value* models = object.if_contains("models")) {
        request.has_gateway_fields = true;
        auto names = NameList(*models, "models", error);
        if (!names) return *error;
        request.models = std::move(*names);
    }
    if (const boost::json::value* fallbacks = object.if_contains("fallbacks")) {
        request.has_gateway_fields = true;
        request.fallbacks = NameList(*fallbacks, "fallbacks", error);
        if (!request.fallbacks) return *error;
    }
    const boost::json::value* model = object.if_contains("model");
    if (model != nullptr && model->is_string() && !model->get_string().empty()) {
        request.model = std::string(model->get_string());
    } else if (!request.models.empty()) {
        request.model = request.models.front();
    } else {
        return core::LocalError{ErrorKind::kModelNotFound, "You must provide a model parameter.",
                                "model"};
    }
    if (const boost::json::value* stream = object.if_contains("stream")) {
        if (stream->is_bool()) {
            request.stream = stream->get_bool();
        } else if (!stream->is_null()) {
            return core::LocalError{ErrorKind::kInvalidRequest, "'stream' must be a boolean.",
                                    "stream"};
        }
    }
    for (const char* key : {"max_completion_tokens", "max_tokens"}) {
        if (const boost::json::value* v = object.if_contains(key); v && v->is_int64()) {
            request.max_tokens = std::max(request.max_tokens, v->get_int64());
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

std::string RenderUpstreamBody(const ChatRequest& request, std::string_view model,
                               const RequestOverrides& overrides) {
    boost::json::value copy = request.body;
    if (copy.is_null()) {
        // Only scanned so far: the document is built now, for the rewrite.
        boost::system::error_code ec;
        copy = core::ParseJson(request.raw, ec);
        if (ec || !copy.is_object()) return std::string(request.raw);  // not ours to fix
    }
    boost::json::object& object = copy.get_object();
    object["model"] = model;
    object.erase("models");
    object.erase("fallbacks");
    if (overrides.system_prompt != nullptr && overrides.system_prompt->has_value()) {
        boost::json::array messages;
        messages.push_back(
            boost::json::object{{"role", "system"}, {"content", **overrides.system_prompt}});
        if (const boost::json::value* old = object.if_contains("messages");
            old && old->is_array()) {
            for (const auto& m : old->get_array()) {
                const boost::json::object* message = m.if_object();
                const boost::json::value* role = message ? message->if_contains("role") : nullptr;
                if (role && role->is_string() &&
                    (role->get_string() == "system" || role->get_string() == "developer")) {
                    continue;
                }
                messages.push_back(m);
            }
        }
        object["messages"] = std::move(messages);
    }
    if (overrides.stream_upstream) {
        object["stream"] = true;
        object["stream_options"] = {{"include_usage", true}};
    }
    if (overrides.params != nullptr) {
        for (const auto& [name, json] : *overrides.params) {
            boost::system::error_code ec;
            boost::json::value value = core::ParseJson(json, ec);
            if (!ec) object[name] = std::move(value);
        }
    }
    return boost::json::serialize(copy);
}

std::variant<ChatRequest, core::LocalError> ParseAnthropicMessages(std::string_view body) {
    boost::system::error_code ec;
    boost::json::value parsed = core::ParseJson(body, ec);
    if (ec || !parsed.is_object()) {
        return core::LocalError{
            ErrorKind::kMalformedJson,
            ec ? "We could not parse the JSON body of your request: " + ec.message() + "."
               : std::string("The request body must be a JSON object.")};
    }
    boost::json::object& original = parsed.get_object();
    // Gateway fields ride along in the canonical request and never reach a provider.
    boost::json::object gateway;
    for (const char* field : {"models", "fallbacks"}) {
        if (const auto it = original.find(field); it != original.end()) {
            gateway[field] = it->value();
            original.erase(it);
        }
    }
    const boost::json::value* model = original.if_contains("model");
    if ((model == nullptr || !model->is_string() || model->get_string().empty()) &&
        !gateway.contains("models")) {
        return core::LocalError{ErrorKind::kModelNotFound, "model: Field required", "model"};
    }
    auto translated = AnthropicRequestToOpenAi(original);
    if (auto* error = std::get_if<core::LocalError>(&translated)) return *error;
    boost::json::object canonical = std::move(std::get<boost::json::object>(translated));
    for (auto& [key, value] : gateway) canonical[key] = value;
    auto result = ChatRequestFromCanonical(boost::json::value(std::move(canonical)));
    if (auto* request = std::get_if<ChatRequest>(&result)) {
        request->wire = Wire::kAnthropic;
        request->original = std::move(original);
    }
    return result;
}

}  // namespace switchyard::api
