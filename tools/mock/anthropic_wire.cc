#include "anthropic_wire.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "json_text.h"
#include "structured_output.h"

namespace switchyard::mock::anthropic {
namespace json = boost::json;
namespace {

// The providers accept request documents far deeper than Boost.JSON's default limit of 32 (deep
// tool schemas); so does the mock, well past what a gateway forwards.
json::parse_options DeepDocuments() {
    json::parse_options options;
    options.max_depth = 256;
    return options;
}

constexpr std::string_view kInvalidRequest = "invalid_request_error";

// The tail of the API's per-minute rate-limit messages (seen in 2025-2026 SDK issue reports).
constexpr std::string_view kRateLimitAdvice =
    ". For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the "
    "response headers for current usage. Please reduce the prompt length or the maximum tokens "
    "requested, or try again later. You may also contact sales at "
    "https://claude.com/contact-sales to discuss your options for a rate limit increase.";

// Digits grouped by thousands with commas, as the API prints limits: "1,000,000".
std::string GroupThousands(std::int64_t n) {
    std::string digits = std::to_string(n);
    for (auto at = static_cast<std::ptrdiff_t>(digits.size()) - 3; at > 0; at -= 3) {
        digits.insert(static_cast<std::size_t>(at), 1, ',');
    }
    return digits;
}

ParsedMessagesRequest Invalid(std::string_view message, std::string_view request_id) {
    ParsedMessagesRequest result;
    result.status = 400;
    result.error_body = ErrorEnvelope(kInvalidRequest, message, request_id);
    return result;
}

// Characters of text: a string, or the `text` of each block of an array of content blocks.
std::size_t TextChars(const json::value& content) {
    if (const auto* text = content.if_string()) return text->size();
    std::size_t chars = 0;
    if (const auto* blocks = content.if_array()) {
        for (const auto& block : *blocks) {
            const auto* object = block.if_object();
            if (object == nullptr) continue;
            if (const auto text = object->find("text"); text != object->end()) {
                if (const auto* s = text->value().if_string()) chars += s->size();
            }
        }
    }
    return chars;
}

void AppendEvent(std::string& out, std::string_view name, std::string_view data) {
    out += "event: ";
    out += name;
    out += "\ndata: ";
    out += data;
    out += "\n\n";
}

void AppendUsageObject(std::string& out, Usage usage) {
    fmt::format_to(std::back_inserter(out), R"({{"input_tokens":{},"output_tokens":{}}})",
                   usage.input_tokens, usage.output_tokens);
}

// `{"id":...,"type":"message","role":"assistant","model":...,"content":[` of a full message.
void AppendMessageHead(std::string& out, const MessageIdentity& identity) {
    out += R"({"id":)";
    AppendJsonString(out, identity.id);
    out += R"(,"type":"message","role":"assistant","model":)";
    AppendJsonString(out, identity.model);
    out += R"(,"content":[)";
}

void AppendMessageTail(std::string& out, std::string_view stop_reason, Usage usage) {
    out += R"(],"stop_reason":)";
    AppendJsonString(out, stop_reason);
    out += R"(,"stop_sequence":null,"usage":)";
    AppendUsageObject(out, usage);
    out += "}";
}

std::string StatusBody(int status, std::string_view model, std::string_view request_id) {
    const std::string_view type = ErrorTypeForStatus(status);
    switch (status) {
        case 400:
            return ErrorEnvelope(type, "Invalid request.", request_id);
        case 401:
            return InvalidApiKeyBody(request_id);
        case 402:
            return ErrorEnvelope(type,
                                 "Your credit balance is too low to access the Anthropic API. "
                                 "Please go to Plans & Billing to upgrade or purchase credits.",
                                 request_id);
        case 403:
            return ErrorEnvelope(
                type, "Your API key does not have permission to use the specified resource.",
                request_id);
        case 404:
            return ErrorEnvelope(type, fmt::format("model: {}", model), request_id);
        case 409:
            return ErrorEnvelope(
                type, "The request conflicts with the current state of the resource.", request_id);
        case 413:
            return ErrorEnvelope(type, "Request exceeds the maximum allowed number of bytes.",
                                 request_id);
        case 429:
            return ErrorEnvelope(type,
                                 "Number of request tokens has exceeded your per-minute rate limit",
                                 request_id);
        case 500:
            return ErrorEnvelope(type, "Internal server error", request_id);
        case 504:
            return ErrorEnvelope(type, "Request timed out", request_id);
        case 529:
            return ErrorEnvelope(type, "Overloaded", request_id);
        default:
            return ErrorEnvelope(
                type, fmt::format("The server answered with HTTP status {}.", status), request_id);
    }
}

std::string NamedBody(NamedError error, std::string_view model, std::string_view request_id) {
    switch (error) {
        case NamedError::kEnforcedSpendLimit:
            return ErrorEnvelope("rate_limit_error",
                                 "You have reached your monthly spend limit. Access resumes at "
                                 "00:00 UTC on the 1st of next month.",
                                 request_id, "enforced_spend_limit_reached");
        case NamedError::kPromptTooLong:
        case NamedError::kContextLength:
            return ErrorEnvelope(kInvalidRequest,
                                 "prompt is too long: 205351 tokens > 200000 maximum", request_id);
        case NamedError::kOverloaded:
            return StatusBody(529, model, request_id);
        case NamedError::kBilling:
            return StatusBody(402, model, request_id);
        case NamedError::kRateLimit:
            return StatusBody(429, model, request_id);
        case NamedError::kServerError:
            return StatusBody(500, model, request_id);
        case NamedError::kInvalidApiKey:
            return StatusBody(401, model, request_id);
        case NamedError::kModelNotFound:
            return StatusBody(404, model, request_id);
        case NamedError::kTimeout:
            return StatusBody(504, model, request_id);
        case NamedError::kInsufficientQuota:
        case NamedError::kCreditBalanceExhausted:
        case NamedError::kOrganizationSpendLimit:
        case NamedError::kProjectSpendLimit:
        case NamedError::kContentPolicy:
        case NamedError::kServerOverloaded:
            break;  // OpenAI's only (HasNamedError); requests naming them are rejected.
    }
    return StatusBody(500, model, request_id);
}

// The tools of a request (those with a name: custom tools and named server tools alike) and what
// its `tool_choice` allows.
ToolChoice ChooseMessagesTool(const json::object& request) {
    std::vector<OfferedTool> offered;
    if (const json::value* tools = request.if_contains("tools"); tools && tools->is_array()) {
        for (const json::value& tool : tools->get_array()) {
            const json::object* fields = tool.if_object();
            const json::value* name = fields != nullptr ? fields->if_contains("name") : nullptr;
            if (name == nullptr || !name->is_string()) continue;
            offered.push_back({name->get_string(), fields->if_contains("input_schema")});
        }
    }
    ToolMode mode = ToolMode::kAuto;
    std::string_view forced_name;
    const json::value* choice = request.if_contains("tool_choice");
    const json::object* choice_fields = choice != nullptr ? choice->if_object() : nullptr;
    if (const json::value* type =
            choice_fields != nullptr ? choice_fields->if_contains("type") : nullptr) {
        if (*type == "none") {
            mode = ToolMode::kNone;
        } else if (*type == "any") {
            mode = ToolMode::kAny;
        } else if (const json::value* name = choice_fields->if_contains("name");
                   *type == "tool" && name != nullptr && name->is_string()) {
            mode = ToolMode::kNamed;
            forced_name = name->get_string();
        }
    }
    return ChooseTool(offered, mode, forced_name);
}

}  // namespace

ParsedMessagesRequest ParseMessagesRequest(std::string_view body, std::string_view request_id) {
    // Request bodies are parsed into a stack buffer first; only large ones reach the heap.
    unsigned char scratch[4096];
    json::monotonic_resource resource(scratch, sizeof scratch);
    boost::system::error_code ec;
    const json::value root = json::parse(json::string_view(body.data(), body.size()), ec,
                                         json::storage_ptr(&resource), DeepDocuments());
    if (ec) return Invalid("The request body is not valid JSON.", request_id);

    const auto* object = root.if_object();
    if (object == nullptr) return Invalid("Input should be a valid dictionary", request_id);

    ParsedMessagesRequest result;
    const auto model = object->find("model");
    if (model == object->end()) return Invalid("model: Field required", request_id);
    const auto* model_name = model->value().if_string();
    if (model_name == nullptr) return Invalid("model: Input should be a valid string", request_id);
    result.request.model.assign(model_name->data(), model_name->size());

    const auto messages = object->find("messages");
    if (messages == object->end()) return Invalid("messages: Field required", request_id);
    const auto* message_list = messages->value().if_array();
    if (message_list == nullptr) {
        return Invalid("messages: Input should be a valid list", request_id);
    }

    const auto max_tokens = object->find("max_tokens");
    if (max_tokens == object->end()) return Invalid("max_tokens: Field required", request_id);
    const json::value& max_value = max_tokens->value();
    if (!max_value.is_int64() && !max_value.is_uint64()) {
        return Invalid("max_tokens: Input should be a valid integer", request_id);
    }
    if (max_value.is_int64() && max_value.get_int64() < 1) {
        return Invalid("max_tokens: Input should be greater than or equal to 1", request_id);
    }

    std::size_t chars = 0;
    if (const auto system = object->find("system"); system != object->end()) {
        chars += TextChars(system->value());
    }
    for (const auto& message : *message_list) {
        const auto* fields = message.if_object();
        if (fields == nullptr) continue;
        if (const auto content = fields->find("content"); content != fields->end()) {
            chars += TextChars(content->value());
        }
    }
    result.request.input_tokens = static_cast<int>(std::clamp<std::size_t>(chars / 4, 1, 1 << 30));

    if (const auto stream = object->find("stream"); stream != object->end()) {
        result.request.stream = stream->value().is_bool() && stream->value().get_bool();
    }
    result.request.output_schema = OutputSchemaOf(*object);
    result.request.tools = ChooseMessagesTool(*object);
    return result;
}

void AppendMessage(std::string& out, const MessageIdentity& identity, const ReplyText& reply,
                   Usage usage) {
    AppendMessageHead(out, identity);
    out += R"({"type":"text","text":)";
    reply.AppendTextJson(out);
    out += "}";
    AppendMessageTail(out, "end_turn", usage);
}

void AppendToolUseMessage(std::string& out, const MessageIdentity& identity, const ToolUse& tool,
                          Usage usage) {
    AppendMessageHead(out, identity);
    out += R"({"type":"tool_use","id":)";
    AppendJsonString(out, tool.id);
    out += R"(,"name":)";
    AppendJsonString(out, tool.call.name);
    out += R"(,"input":)";
    out += tool.call.arguments;  // A JSON object already.
    out += "}";
    AppendMessageTail(out, "tool_use", usage);
}

std::vector<std::string_view> ToolInputFragments(std::string_view input) {
    std::vector<std::string_view> fragments{std::string_view()};
    for (const std::string_view fragment : ArgumentFragments(input)) fragments.push_back(fragment);
    return fragments;
}

int ToolUseOutputTokens(const ToolCall& call) {
    return static_cast<int>(ToolInputFragments(call.arguments).size());
}

void AppendMessageStart(std::string& out, const MessageIdentity& identity, int input_tokens) {
    std::string data = R"({"type":"message_start","message":{"id":)";
    AppendJsonString(data, identity.id);
    data += R"(,"type":"message","role":"assistant","content":[],"model":)";
    AppendJsonString(data, identity.model);
    data += R"(,"stop_reason":null,"stop_sequence":null,"usage":)";
    AppendUsageObject(data, {input_tokens, 1});
    data += "}}";
    AppendEvent(out, "message_start", data);
}

void AppendTextBlockStart(std::string& out) {
    AppendEvent(
        out, "content_block_start",
        R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})");
}

void AppendToolUseBlockStart(std::string& out, const ToolUse& tool) {
    std::string data =
        R"({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":)";
    AppendJsonString(data, tool.id);
    data += R"(,"name":)";
    AppendJsonString(data, tool.call.name);
    data += R"(,"input":{}}})";
    AppendEvent(out, "content_block_start", data);
}

void AppendPing(std::string& out) { AppendEvent(out, "ping", R"({"type": "ping"})"); }

void AppendTextDelta(std::string& out, const ReplyText& reply, int index) {
    // Written straight into `out`: a padded word (event_bytes) may be very large.
    out += "event: content_block_delta\ndata: ";
    out += R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":)";
    reply.AppendWordJson(out, index);
    out += "}}\n\n";
}

void AppendInputJsonDelta(std::string& out, std::string_view partial_json) {
    std::string data =
        R"({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":)";
    AppendJsonString(data, partial_json);
    data += "}}";
    AppendEvent(out, "content_block_delta", data);
}

void AppendBlockStop(std::string& out) {
    AppendEvent(out, "content_block_stop", R"({"type":"content_block_stop","index":0})");
}

void AppendMessageDelta(std::string& out, std::string_view stop_reason, int output_tokens) {
    std::string data = R"({"type":"message_delta","delta":{"stop_reason":)";
    AppendJsonString(data, stop_reason);
    fmt::format_to(std::back_inserter(data),
                   R"(,"stop_sequence":null}},"usage":{{"output_tokens":{}}}}})", output_tokens);
    AppendEvent(out, "message_delta", data);
}

void AppendMessageStop(std::string& out) {
    AppendEvent(out, "message_stop", R"({"type":"message_stop"})");
}

void AppendErrorEvent(std::string& out, std::string_view body) { AppendEvent(out, "error", body); }

MessageStream::MessageStream(const MessageIdentity& identity, int input_tokens,
                             const ReplyText& reply)
    : identity_(identity), input_tokens_(input_tokens), reply_(&reply) {}

MessageStream::MessageStream(const MessageIdentity& identity, int input_tokens, const ToolUse& tool)
    : identity_(identity),
      input_tokens_(input_tokens),
      tool_(tool),
      fragments_(ToolInputFragments(tool.call.arguments)) {}

void MessageStream::AppendOpening(std::string& out, int step) const {
    if (step == 0) {
        AppendMessageStart(out, identity_, input_tokens_);
    } else if (step == 1 && tool_) {
        AppendToolUseBlockStart(out, *tool_);
    } else if (step == 1) {
        AppendTextBlockStart(out);
    } else {
        AppendPing(out);
    }
}

int MessageStream::DeltaCount() const {
    return tool_ ? static_cast<int>(fragments_.size()) : reply_->WordCount();
}

void MessageStream::AppendDelta(std::string& out, int index) const {
    if (tool_) {
        AppendInputJsonDelta(out, fragments_[static_cast<std::size_t>(index)]);
    } else {
        AppendTextDelta(out, *reply_, index);
    }
}

void MessageStream::AppendClosing(std::string& out, int step) const {
    if (step == 0) {
        AppendBlockStop(out);
    } else if (step == 1) {
        AppendMessageDelta(out, tool_ ? "tool_use" : "end_turn", DeltaCount());
    } else {
        AppendMessageStop(out);
    }
}

void MessageStream::AppendError(std::string& out, int /*deltas_sent*/,
                                std::optional<NamedError> error) const {
    // In-stream errors carry no request_id; without error= it is the overload error.
    const int status = error ? NamedErrorStatus(*error) : 529;
    AppendErrorEvent(out, ErrorBody(status, error, identity_.model, {}));
}

std::string ErrorEnvelope(std::string_view type, std::string_view message,
                          std::string_view request_id, std::string_view details_code) {
    std::string out = R"({"type":"error","error":{"type":)";
    AppendJsonString(out, type);
    out += R"(,"message":)";
    AppendJsonString(out, message);
    if (!details_code.empty()) {
        out += R"(,"details":{"error_code":)";
        AppendJsonString(out, details_code);
        out += "}";
    }
    out += "}";
    if (!request_id.empty()) {
        out += R"(,"request_id":)";
        AppendJsonString(out, request_id);
    }
    out += "}";
    return out;
}

std::string_view ErrorTypeForStatus(int status) {
    switch (status) {
        case 400:
            return kInvalidRequest;
        case 401:
            return "authentication_error";
        case 402:
            return "billing_error";
        case 403:
            return "permission_error";
        case 404:
            return "not_found_error";
        case 409:
            return "conflict_error";
        case 413:
            return "request_too_large";
        case 429:
            return "rate_limit_error";
        case 504:
            return "timeout_error";
        case 529:
            return "overloaded_error";
        default:
            return status < 500 ? kInvalidRequest : "api_error";
    }
}

bool HasNamedError(NamedError error) {
    switch (error) {
        case NamedError::kInsufficientQuota:
        case NamedError::kCreditBalanceExhausted:
        case NamedError::kOrganizationSpendLimit:
        case NamedError::kProjectSpendLimit:
        case NamedError::kContentPolicy:
        case NamedError::kServerOverloaded:
            return false;
        default:
            return true;
    }
}

std::string ErrorBody(int status, std::optional<NamedError> error, std::string_view model,
                      std::string_view request_id) {
    return error ? NamedBody(*error, model, request_id) : StatusBody(status, model, request_id);
}

bool SuppressesRetryAfter(const FaultSpec& spec) {
    return spec.error == NamedError::kEnforcedSpendLimit;
}

std::string RateLimitBody(RateLimitReason reason, std::int64_t limit, std::string_view request_id) {
    std::string_view unit = "input tokens";
    switch (reason) {
        case RateLimitReason::kAcceleration:
            // The wording is the mock's own; the API's acceleration message is not on record.
            return ErrorEnvelope("rate_limit_error",
                                 "Your organization's usage increased too quickly and hit "
                                 "acceleration limits. Please ramp up your traffic gradually. For "
                                 "details, refer to: https://docs.claude.com/en/api/rate-limits.",
                                 request_id);
        case RateLimitReason::kRequests:
            unit = "requests";
            break;
        case RateLimitReason::kOutputTokens:
            unit = "output tokens";
            break;
        case RateLimitReason::kTokens:
        case RateLimitReason::kInputTokens:
            break;
    }
    return ErrorEnvelope("rate_limit_error",
                         fmt::format("This request would exceed your organization's rate limit of "
                                     "{} {} per minute{}",
                                     GroupThousands(limit), unit, kRateLimitAdvice),
                         request_id);
}

std::string InvalidApiKeyBody(std::string_view request_id) {
    return ErrorEnvelope("authentication_error", "invalid x-api-key", request_id);
}

std::string InvalidMethodBody(std::string_view method, std::string_view path,
                              std::string_view request_id) {
    return ErrorEnvelope(kInvalidRequest, fmt::format("Method not allowed: {} {}", method, path),
                         request_id);
}

}  // namespace switchyard::mock::anthropic
