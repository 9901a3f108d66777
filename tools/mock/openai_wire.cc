#include "openai_wire.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "json_text.h"
#include "structured_output.h"

namespace switchyard::mock::openai {
namespace json = boost::json;
namespace {

constexpr std::string_view kInvalidRequest = "invalid_request_error";
constexpr std::string_view kServerError = "server_error";

// OpenAI's wording for a body that is not JSON at all.
constexpr std::string_view kUnparsableBody =
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't using "
    "your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not "
    "valid JSON. If you have trouble figuring out how to fix this, please contact us through our "
    "help center at help.openai.com.)";

ParsedChatRequest Invalid(std::string body) {
    ParsedChatRequest result;
    result.status = 400;
    result.error_body = std::move(body);
    return result;
}

// Characters of message content: a string, or the `text` of each part of an array of parts.
std::size_t ContentChars(const json::value& content) {
    if (const auto* text = content.if_string()) return text->size();
    std::size_t chars = 0;
    if (const auto* parts = content.if_array()) {
        for (const auto& part : *parts) {
            const auto* object = part.if_object();
            if (object == nullptr) continue;
            if (const auto* text = object->find("text"); text != object->end()) {
                if (const auto* s = text->value().if_string()) chars += s->size();
            }
        }
    }
    return chars;
}

void AppendUsageObject(std::string& out, Usage usage) {
    fmt::format_to(std::back_inserter(out),
                   R"({{"prompt_tokens":{},"completion_tokens":{},"total_tokens":{}}})",
                   usage.prompt_tokens, usage.completion_tokens,
                   usage.prompt_tokens + usage.completion_tokens);
}

// `{"id":...,"object":"chat.completion","created":...,"model":...` of a full completion.
void AppendCompletionHead(std::string& out, const CompletionIdentity& identity) {
    out += R"({"id":)";
    AppendJsonString(out, identity.id);
    fmt::format_to(std::back_inserter(out), R"(,"object":"chat.completion","created":{},"model":)",
                   identity.created);
    AppendJsonString(out, identity.model);
}

std::string StatusBody(int status, std::string_view model) {
    switch (status) {
        case 400:
            return ErrorEnvelope("Invalid request.", kInvalidRequest);
        case 401:
            return InvalidApiKeyBody();
        case 403:
            return ErrorEnvelope("Country, region, or territory not supported", "request_forbidden",
                                 {}, "unsupported_country_region_territory");
        case 404:
            return ErrorEnvelope(
                fmt::format("The model `{}` does not exist or you do not have access to it.",
                            model),
                kInvalidRequest, {}, "model_not_found");
        case 408:
            return ErrorEnvelope("Request timed out.", kInvalidRequest);
        case 409:
            return ErrorEnvelope("The request conflicted with another request. Please try again.",
                                 kInvalidRequest);
        case 413:
            return ErrorEnvelope("Request entity too large.", kInvalidRequest);
        case 422:
            return ErrorEnvelope("The request could not be processed.", kInvalidRequest);
        case 429:
            return ErrorEnvelope("Rate limit reached for requests. Limit 3500 per min.", "requests",
                                 {}, "rate_limit_exceeded");
        case 500:
            return ErrorEnvelope(
                "The server had an error while processing your request. Sorry about that!",
                kServerError);
        case 502:
            return ErrorEnvelope("Bad gateway.", kServerError);
        case 503:
            return ErrorEnvelope("Our servers are currently overloaded. Please try again later.",
                                 "service_unavailable_error", {}, "server_is_overloaded");
        case 504:
            return ErrorEnvelope("Gateway timeout.", kServerError);
        case 529:
            // Anthropic's overload answer, which has its own envelope
            // (docs/providers.md#anthropic-errors).
            return R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})";
        default:
            return ErrorEnvelope(fmt::format("The server answered with HTTP status {}.", status),
                                 status >= 500 ? kServerError : kInvalidRequest);
    }
}

std::string NamedBody(NamedError error, std::string_view model) {
    switch (error) {
        case NamedError::kRateLimit:
            return StatusBody(429, model);
        case NamedError::kInsufficientQuota:
            return ErrorEnvelope(
                "You exceeded your current quota, please check your plan and billing details.",
                "insufficient_quota", {}, "insufficient_quota");
        case NamedError::kCreditBalanceExhausted:
            return ErrorEnvelope("You have no credits remaining.", "insufficient_quota", {},
                                 "credit_balance_exhausted");
        case NamedError::kOrganizationSpendLimit:
            return ErrorEnvelope("Your organization has reached its spend limit.",
                                 "insufficient_quota", {}, "organization_spend_limit_exceeded");
        case NamedError::kProjectSpendLimit:
            return ErrorEnvelope("Your project has reached its spend limit.", "insufficient_quota",
                                 {}, "project_spend_limit_exceeded");
        case NamedError::kContextLength:
            return ErrorEnvelope(
                "This model's maximum context length is 128000 tokens. However, your messages "
                "resulted in 205351 tokens. Please reduce the length of the messages.",
                kInvalidRequest, "messages", "context_length_exceeded");
        case NamedError::kContentPolicy:
            return ErrorEnvelope(
                "Your request was rejected as a result of our safety system. Your prompt may "
                "contain text that is not allowed by our safety system.",
                kInvalidRequest, {}, "content_policy_violation");
        case NamedError::kServerOverloaded:
            return StatusBody(503, model);
        case NamedError::kServerError:
            return StatusBody(500, model);
        case NamedError::kInvalidApiKey:
            return StatusBody(401, model);
        case NamedError::kModelNotFound:
            return StatusBody(404, model);
        case NamedError::kTimeout:
            return StatusBody(504, model);
        case NamedError::kOverloaded:
            return StatusBody(529, model);
        case NamedError::kEnforcedSpendLimit:
        case NamedError::kPromptTooLong:
        case NamedError::kBilling:
            break;  // Anthropic's only (HasNamedError); requests naming them are rejected.
    }
    return StatusBody(500, model);
}

// The `function` tools of a request and what its `tool_choice` allows.
ToolChoice ChooseChatTool(const json::object& request) {
    std::vector<OfferedTool> offered;
    if (const json::value* tools = request.if_contains("tools"); tools && tools->is_array()) {
        for (const json::value& tool : tools->get_array()) {
            const json::value* function =
                tool.is_object() ? tool.get_object().if_contains("function") : nullptr;
            if (function == nullptr || !function->is_object()) continue;
            const json::value* name = function->get_object().if_contains("name");
            if (name == nullptr || !name->is_string()) continue;
            offered.push_back(
                {name->get_string(), function->get_object().if_contains("parameters")});
        }
    }
    ToolMode mode = ToolMode::kAuto;
    std::string_view forced_name;
    if (const json::value* choice = request.if_contains("tool_choice")) {
        if (*choice == "none") {
            mode = ToolMode::kNone;
        } else if (*choice == "required") {
            mode = ToolMode::kAny;
        } else if (const json::object* named = choice->if_object()) {
            const json::value* function = named->if_contains("function");
            const json::value* name = function && function->is_object()
                                          ? function->get_object().if_contains("name")
                                          : nullptr;
            if (name != nullptr && name->is_string()) {
                mode = ToolMode::kNamed;
                forced_name = name->get_string();
            }
        }
    }
    return ChooseTool(offered, mode, forced_name);
}

}  // namespace

ParsedChatRequest ParseChatRequest(std::string_view body) {
    // Request bodies are parsed into a stack buffer first; only large ones reach the heap.
    unsigned char scratch[4096];
    json::monotonic_resource resource(scratch, sizeof scratch);
    boost::system::error_code ec;
    const json::value root = json::parse(json::string_view(body.data(), body.size()), ec,
                                         json::storage_ptr(&resource), DeepJsonDocuments());
    if (ec) return Invalid(UnparsableJsonBody());

    const auto* object = root.if_object();
    if (object == nullptr) return Invalid(NotAnObjectBody(root.kind()));

    ParsedChatRequest result;
    const auto model = object->find("model");
    if (model == object->end()) {
        return Invalid(ErrorEnvelope("you must provide a model parameter", kInvalidRequest));
    }
    const auto* model_name = model->value().if_string();
    if (model_name == nullptr) {
        return Invalid(InvalidTypeBody("model", "a string", model->value().kind()));
    }
    result.request.model.assign(model_name->data(), model_name->size());

    const auto messages = object->find("messages");
    if (messages == object->end()) {
        return Invalid(MissingParameterBody("messages"));
    }
    const auto* message_list = messages->value().if_array();
    if (message_list == nullptr) {
        return Invalid(InvalidTypeBody("messages", "an array", messages->value().kind()));
    }
    std::size_t chars = 0;
    for (const auto& message : *message_list) {
        const auto* fields = message.if_object();
        if (fields == nullptr) continue;
        if (const auto content = fields->find("content"); content != fields->end()) {
            chars += ContentChars(content->value());
        }
    }
    result.request.prompt_tokens = static_cast<int>(std::clamp<std::size_t>(chars / 4, 1, 1 << 30));
    result.request.content_chars = static_cast<std::int64_t>(chars);
    for (const std::string_view name : {"max_completion_tokens", "max_tokens"}) {
        const auto max_tokens = object->find(name);
        if (max_tokens == object->end()) continue;
        if (max_tokens->value().is_int64() && max_tokens->value().get_int64() > 0) {
            result.request.max_tokens = max_tokens->value().get_int64();
            break;
        }
    }

    if (const auto stream = object->find("stream"); stream != object->end()) {
        result.request.stream = stream->value().is_bool() && stream->value().get_bool();
    }
    result.request.output_schema = OutputSchemaOf(*object);
    result.request.tools = ChooseChatTool(*object);
    if (const auto options = object->find("stream_options"); options != object->end()) {
        if (const auto* fields = options->value().if_object()) {
            if (const auto usage = fields->find("include_usage"); usage != fields->end()) {
                result.request.include_usage =
                    usage->value().is_bool() && usage->value().get_bool();
            }
        }
    }
    return result;
}

ReplyText::ReplyText(std::string_view model, std::optional<int> chunks, std::string_view structured)
    : model_(model),
      whole_(structured),
      json_(!structured.empty()),
      numbered_(chunks.has_value()),
      word_count_(!structured.empty() ? 1
                  : chunks            ? *chunks
                                      : 4) {}

ReplyText::ReplyText(VerbatimTag, std::string_view whole) : whole_(whole), word_count_(1) {}

ReplyText ReplyText::Verbatim(std::string_view text) { return ReplyText(VerbatimTag{}, text); }

void ReplyText::AppendBareWord(std::string& out, int index) const {
    if (!whole_.empty()) {
        out += whole_;
        return;
    }
    if (index > 0) out.push_back(' ');
    if (numbered_) {
        fmt::format_to(std::back_inserter(out), "word{}", index + 1);
        return;
    }
    switch (index) {
        case 0:
            out += "Mock";
            break;
        case 1:
            out += "reply";
            break;
        case 2:
            out += "from";
            break;
        default:
            out += model_;
            out.push_back('.');
            break;
    }
}

void ReplyText::AppendWord(std::string& out, int index) const {
    AppendBareWord(out, index);
    if (index == 0) out.append(pad_, Fill());
}

void ReplyText::AppendText(std::string& out) const {
    for (int i = 0; i < word_count_; ++i) AppendWord(out, i);
}

void ReplyText::AppendWordJson(std::string& out, int index) const {
    std::string word;
    AppendBareWord(word, index);
    if (index != 0 || pad_ == 0) {
        AppendJsonString(out, word);
        return;
    }
    // Room for the rest of the event too, so that it does not copy the padding again.
    out.reserve(out.size() + word.size() + pad_ + 512);
    out.push_back('"');
    AppendJsonStringContent(out, word);
    out.append(pad_, Fill());  // Neither fill character needs escaping.
    out.push_back('"');
}

void ReplyText::AppendTextJson(std::string& out) const {
    if (word_count_ == 0) {
        out += R"("")";
        return;
    }
    std::string rest;
    for (int i = 1; i < word_count_; ++i) AppendBareWord(rest, i);
    AppendWordJson(out, 0);
    out.pop_back();
    AppendJsonStringContent(out, rest);
    out.push_back('"');
}

void AppendCompletion(std::string& out, const CompletionIdentity& identity, const ReplyText& reply,
                      Usage usage) {
    AppendCompletionHead(out, identity);
    out += R"(,"choices":[{"index":0,"message":{"role":"assistant","content":)";
    reply.AppendTextJson(out);
    out += R"(,"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":)";
    AppendUsageObject(out, usage);
    out += R"(,"service_tier":"default","system_fingerprint":"fp_mock"})";
}

void AppendToolCallCompletion(std::string& out, const CompletionIdentity& identity,
                              std::string_view call_id, const ToolCall& call, Usage usage) {
    AppendCompletionHead(out, identity);
    out += R"(,"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[)";
    out += R"({"id":)";
    AppendJsonString(out, call_id);
    out += R"(,"type":"function","function":{"name":)";
    AppendJsonString(out, call.name);
    out += R"(,"arguments":)";
    AppendJsonString(out, call.arguments);
    out +=
        R"(}}],"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"tool_calls"}],)";
    out += R"("usage":)";
    AppendUsageObject(out, usage);
    out += R"(,"service_tier":"default","system_fingerprint":"fp_mock"})";
}

int ToolCallTokens(const ToolCall& call) {
    return static_cast<int>(ArgumentFragments(call.arguments).size());
}

ChunkEvents::ChunkEvents(const CompletionIdentity& identity, bool include_usage)
    : include_usage_(include_usage) {
    prefix_ = R"(data: {"id":)";
    AppendJsonString(prefix_, identity.id);
    fmt::format_to(std::back_inserter(prefix_),
                   R"(,"object":"chat.completion.chunk","created":{},"model":)", identity.created);
    AppendJsonString(prefix_, identity.model);
    prefix_ += R"(,"system_fingerprint":"fp_mock","choices":)";
}

void ChunkEvents::AppendChoice(std::string& out, std::string_view choice) const {
    out += prefix_;
    out += choice;
    EndChoice(out);
}

void ChunkEvents::EndChoice(std::string& out) const {
    out += include_usage_ ? ",\"usage\":null}\n\n" : "}\n\n";
}

void ChunkEvents::AppendRole(std::string& out) const {
    AppendChoice(out, R"([{"index":0,"delta":{"role":"assistant","content":"","refusal":null},)"
                      R"("logprobs":null,"finish_reason":null}])");
}

void ChunkEvents::AppendWord(std::string& out, const ReplyText& reply, int index) const {
    out += prefix_;
    out += R"([{"index":0,"delta":{"content":)";
    reply.AppendWordJson(out, index);
    out += R"(},"logprobs":null,"finish_reason":null}])";
    EndChoice(out);
}

void ChunkEvents::AppendFinish(std::string& out, std::string_view finish_reason) const {
    out += prefix_;
    out += R"([{"index":0,"delta":{},"logprobs":null,"finish_reason":)";
    AppendJsonString(out, finish_reason);
    out += "}]";
    EndChoice(out);
}

// The role chunk of a tool call has no text: content null, as the API sends it.
void ChunkEvents::AppendToolRole(std::string& out) const {
    AppendChoice(out, R"([{"index":0,"delta":{"role":"assistant","content":null,"refusal":null},)"
                      R"("logprobs":null,"finish_reason":null}])");
}

void ChunkEvents::AppendToolCallStart(std::string& out, std::string_view call_id,
                                      std::string_view name) const {
    out += prefix_;
    out += R"([{"index":0,"delta":{"tool_calls":[{"index":0,"id":)";
    AppendJsonString(out, call_id);
    out += R"(,"type":"function","function":{"name":)";
    AppendJsonString(out, name);
    out += R"(,"arguments":""}}]},"logprobs":null,"finish_reason":null}])";
    EndChoice(out);
}

void ChunkEvents::AppendArgumentsDelta(std::string& out, std::string_view fragment) const {
    out += prefix_;
    out += R"([{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":)";
    AppendJsonString(out, fragment);
    out += R"(}}]},"logprobs":null,"finish_reason":null}])";
    EndChoice(out);
}

void ChunkEvents::AppendUsage(std::string& out, Usage usage) const {
    out += prefix_;
    out += R"([],"usage":)";
    AppendUsageObject(out, usage);
    out += "}\n\n";
}

void ChunkEvents::AppendDone(std::string& out) { out += "data: [DONE]\n\n"; }

void ChunkEvents::AppendError(std::string& out, std::string_view envelope) {
    out += "data: ";
    out += envelope;
    out += "\n\n";
}

ChatStream::ChatStream(const CompletionIdentity& identity, bool include_usage, int prompt_tokens,
                       const ReplyText& reply)
    : events_(identity, include_usage),
      model_(identity.model),
      prompt_tokens_(prompt_tokens),
      reply_(&reply) {}

ChatStream::ChatStream(const CompletionIdentity& identity, bool include_usage, int prompt_tokens,
                       std::string_view call_id, const ToolCall& call)
    : events_(identity, include_usage),
      model_(identity.model),
      prompt_tokens_(prompt_tokens),
      call_id_(call_id),
      call_(&call),
      fragments_(ArgumentFragments(call.arguments)) {}

void ChatStream::AppendOpening(std::string& out, int step) const {
    if (call_ == nullptr) {
        events_.AppendRole(out);
    } else if (step == 0) {
        events_.AppendToolRole(out);
    } else {
        events_.AppendToolCallStart(out, call_id_, call_->name);
    }
}

int ChatStream::DeltaCount() const {
    return call_ != nullptr ? static_cast<int>(fragments_.size()) : reply_->WordCount();
}

void ChatStream::AppendDelta(std::string& out, int index) const {
    if (call_ != nullptr) {
        events_.AppendArgumentsDelta(out, fragments_[static_cast<std::size_t>(index)]);
    } else {
        events_.AppendWord(out, *reply_, index);
    }
}

void ChatStream::AppendClosing(std::string& out, int step) const {
    if (step == 0) {
        events_.AppendFinish(out, call_ != nullptr ? "tool_calls" : "stop");
    } else if (step == 1 && events_.include_usage()) {
        events_.AppendUsage(out, {prompt_tokens_, DeltaCount()});
    } else {
        ChunkEvents::AppendDone(out);
    }
}

void ChatStream::AppendError(std::string& out, int /*deltas_sent*/,
                             std::optional<NamedError> error) const {
    const int status = error ? NamedErrorStatus(*error) : 500;
    ChunkEvents::AppendError(out, ErrorBody(status, error, model_));
}

bool HasNamedError(NamedError error) {
    return error != NamedError::kEnforcedSpendLimit && error != NamedError::kPromptTooLong &&
           error != NamedError::kBilling;
}

std::string ErrorBody(int status, std::optional<NamedError> error, std::string_view model) {
    return error ? NamedBody(*error, model) : StatusBody(status, model);
}

std::string ErrorEnvelope(std::string_view message, std::string_view type, std::string_view param,
                          std::string_view code) {
    const auto string_or_null = [](std::string_view s) -> json::value {
        if (s.empty()) return nullptr;
        return json::string_view(s.data(), s.size());
    };
    json::object error;
    error["message"] = json::string_view(message.data(), message.size());
    error["type"] = json::string_view(type.data(), type.size());
    error["param"] = string_or_null(param);
    error["code"] = string_or_null(code);
    json::object envelope;
    envelope["error"] = std::move(error);
    return json::serialize(envelope);
}

std::string RateLimitBody(RateLimitReason reason, std::int64_t limit) {
    const std::string_view type =
        reason == RateLimitReason::kRequests || reason == RateLimitReason::kAcceleration
            ? "requests"
            : "tokens";
    // OpenAI has no acceleration limits of its own; the message is the mock's wording.
    const std::string message =
        reason == RateLimitReason::kAcceleration
            ? std::string(
                  "Rate limit reached for requests: the request rate grew too quickly "
                  "(acceleration limits). Ramp up traffic gradually and try again later.")
            : fmt::format("Rate limit reached for {}. Limit {} per min.", type, limit);
    std::string out = R"({"error":{"message":)";
    AppendJsonString(out, message);
    out += R"(,"type":)";
    AppendJsonString(out, type);
    out += R"(,"code":"rate_limit_exceeded"}})";
    return out;
}

std::string UnparsableJsonBody() { return ErrorEnvelope(kUnparsableBody, kInvalidRequest); }

std::string NotAnObjectBody(json::kind got) {
    return ErrorEnvelope(
        fmt::format("Invalid body: expected a JSON object, but got {}.", JsonKindName(got)),
        kInvalidRequest);
}

std::string MissingParameterBody(std::string_view param) {
    return ErrorEnvelope(fmt::format("Missing required parameter: '{}'.", param), kInvalidRequest,
                         param, "missing_required_parameter");
}

std::string InvalidTypeBody(std::string_view param, std::string_view expected, json::kind got) {
    return ErrorEnvelope(fmt::format("Invalid type for '{}': expected {}, but got {} instead.",
                                     param, expected, JsonKindName(got)),
                         kInvalidRequest, param, "invalid_type");
}

std::string InvalidValueBody(std::string_view param, std::string_view value,
                             std::string_view supported) {
    return ErrorEnvelope(
        fmt::format("Invalid value: '{}'. Supported values are: {}.", value, supported),
        kInvalidRequest, param, "invalid_value");
}

std::string InvalidApiKeyBody() {
    return ErrorEnvelope("Incorrect API key provided.", kInvalidRequest, {}, "invalid_api_key");
}

std::string InvalidUrlBody(std::string_view method, std::string_view path) {
    return ErrorEnvelope(fmt::format("Invalid URL ({} {})", method, path), kInvalidRequest);
}

std::string InvalidMethodBody(std::string_view method, std::string_view path) {
    return ErrorEnvelope(fmt::format("Invalid method for URL ({} {})", method, path),
                         kInvalidRequest);
}

}  // namespace switchyard::mock::openai
