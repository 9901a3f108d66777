#include "api/openai_chat.h"

#include <algorithm>
#include <boost/json.hpp>
#include <new>
#include <optional>

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

namespace {

// A request document's memory: a monotonic arena (a handful of block allocations instead of one
// per JSON node) that the parse may fill to at most `limit` bytes. A body whose document would
// take more is refused, not allowed to take the worker's memory: a request's parse is bounded by
// its size. Edits after the parse (a rewrite for upstream) are not bounded.
class BoundedArena final : public boost::json::memory_resource {
  public:
    // `self` receives the arena's address: the storage_ptr that owns it points at another base of
    // Boost's shared wrapper, so the arena cannot be reached from it by a cast.
    BoundedArena(std::size_t limit, BoundedArena** self) : limit_(limit) { *self = this; }
    void Unbound() { limit_ = static_cast<std::size_t>(-1); }

  private:
    void* do_allocate(std::size_t n, std::size_t align) override {
        if (n > limit_ - used_) throw std::bad_alloc();
        used_ += n;
        return arena_.allocate(n, align);
    }
    void do_deallocate(void*, std::size_t, std::size_t) override {}  // freed with the arena
    bool do_is_equal(const boost::json::memory_resource& other) const noexcept override {
        return this == &other;
    }

    boost::json::monotonic_resource arena_;
    std::size_t limit_;
    std::size_t used_ = 0;
};

// What a request's document may take: a JSON value is 16 bytes however short its text, an object
// member more; 16 times the text leaves room for any real request.
constexpr std::size_t kDocumentBytesPerByte = 16;
constexpr std::size_t kDocumentBytesExtra = 1 << 20;

}  // namespace

std::variant<boost::json::value, core::LocalError> ParseRequestObject(std::string_view body) {
    boost::system::error_code ec;
    BoundedArena* arena = nullptr;
    const boost::json::storage_ptr storage = boost::json::make_shared_resource<BoundedArena>(
        body.size() * kDocumentBytesPerByte + kDocumentBytesExtra, &arena);
    std::optional<boost::json::value> parsed;  // constructed in place: it keeps `storage`
    try {
        parsed.emplace(core::ParseJson(body, ec, storage));
    } catch (const std::bad_alloc&) {
        return core::LocalError{ErrorKind::kPayloadTooLarge,
                                "The request body holds more JSON values than its size allows "
                                "(a document over 16 times its text)."};
    }
    arena->Unbound();
    if (ec) {
        return core::LocalError{ErrorKind::kMalformedJson,
                                "We could not parse the JSON body of your request: " +
                                    ec.message() + ". The body must be valid JSON."};
    }
    if (!parsed->is_object()) {
        return core::LocalError{ErrorKind::kMalformedJson,
                                "The request body must be a JSON object."};
    }
    return std::move(*parsed);
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
        request.raw_model = scan->model;
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
    const bool overridden =
        (overrides.system_prompt != nullptr && overrides.system_prompt->has_value()) ||
        overrides.stream_upstream || (overrides.params != nullptr && !overrides.params->empty());
    boost::json::value scanned;
    const boost::json::value* document = &request.body;
    if (request.body.is_null()) {
        if (!overridden && !request.raw_model.empty()) {
            // Only scanned, and only the model changes: the client's bytes with the model spliced
            // in (the scan found it unescaped, the only `model` of the object).
            const std::size_t at =
                static_cast<std::size_t>(request.raw_model.data() - request.raw.data());
            std::string out;
            out.reserve(request.raw.size() + model.size() + 8);
            out.append(request.raw.substr(0, at));
            const std::string quoted = boost::json::serialize(boost::json::string(model));
            out.append(quoted.substr(1, quoted.size() - 2));
            out.append(request.raw.substr(at + request.raw_model.size()));
            return out;
        }
        // Only scanned so far: the document is built now, for the rewrite.
        boost::system::error_code ec;
        scanned = core::ParseJson(request.raw, ec);
        if (ec || !scanned.is_object()) return std::string(request.raw);  // not ours to fix
        document = &scanned;
    }
    const boost::json::object& object = document->get_object();
    // The changes only: the request's document is never copied for them.
    const boost::json::value model_value(model);
    std::vector<core::MemberEdit> edits{
        {"model", &model_value}, {"models", nullptr}, {"fallbacks", nullptr}};
    boost::json::value messages_value;
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
        messages_value = std::move(messages);
        edits.push_back({"messages", &messages_value});
    }
    const boost::json::value stream_true(true);
    const boost::json::value usage_options = boost::json::object{{"include_usage", true}};
    if (overrides.stream_upstream) {
        edits.push_back({"stream", &stream_true});
        edits.push_back({"stream_options", &usage_options});
    }
    std::vector<boost::json::value> params;
    if (overrides.params != nullptr) {
        params.reserve(overrides.params->size());  // the edits point into it
        for (const auto& [name, json] : *overrides.params) {
            boost::system::error_code ec;
            boost::json::value value = core::ParseJson(json, ec);
            if (ec) continue;
            params.push_back(std::move(value));
            edits.push_back({name, &params.back()});
        }
    }
    return core::SerializeEdited(object, edits);
}

std::variant<ChatRequest, core::LocalError> ParseAnthropicMessages(std::string_view body) {
    auto read = ParseRequestObject(body);
    if (auto* error = std::get_if<core::LocalError>(&read)) return *error;
    boost::json::value parsed = std::move(std::get<boost::json::value>(read));
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
