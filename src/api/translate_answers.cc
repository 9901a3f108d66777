#include <algorithm>
#include <boost/json.hpp>
#include <cstdint>
#include <string>
#include <utility>

#include "api/anthropic_wire.h"
#include "api/json_access.h"
#include "api/translate.h"
#include "api/translate_common.h"
#include "core/json.h"

// Answers, both ways (translate.h): successful non-streaming responses and upstream error bodies.

namespace switchyard::api {
namespace {

namespace json = boost::json;

std::string GenericUpstreamMessage(unsigned status) {
    return "Upstream returned HTTP " + std::to_string(status) + " without a readable error body";
}

// A refusal met in an upstream answer: the upstream's doing, not the client's, so a protocol
// failure without a client parameter.
core::LocalError UntranslatableAnswer(const core::LocalError& refusal) {
    core::LocalError error;
    error.kind = core::ErrorKind::kUpstreamProtocol;
    error.message = "The upstream answer cannot be translated: " + refusal.message;
    return error;
}

json::object OpenAiResponseToAnthropicOrThrow(const json::object& completion) {
    json::array content;
    std::string_view finish_reason;
    const json::array* choices = FindArray(completion, "choices");
    const json::object* choice =
        choices != nullptr && !choices->empty() ? choices->front().if_object() : nullptr;
    if (choice != nullptr) {
        finish_reason = StringAt(*choice, "finish_reason");
        if (const json::object* message = FindObject(*choice, "message")) {
            // Content other than a string or text / refusal parts is refused (Refusal).
            AppendContentBlocks(Find(*message, "content"), false, content);
            const std::string_view refusal = StringAt(*message, "refusal");
            if (!refusal.empty()) {
                content.push_back(json::object{{"type", "text"}, {"text", refusal}});
            }
            if (const json::array* calls = FindArray(*message, "tool_calls")) {
                for (const json::value& item : *calls) {
                    const json::object* call = item.if_object();
                    const json::object* function =
                        call != nullptr ? FindObject(*call, "function") : nullptr;
                    if (function == nullptr) {
                        continue;
                    }
                    json::error_code ec;
                    json::value input = core::ParseJson(StringAt(*function, "arguments"), ec);
                    if (ec || !input.is_object()) {
                        input = json::object();  // Anthropic's input must be an object
                    }
                    content.push_back(json::object{{"type", "tool_use"},
                                                   {"id", StringAt(*call, "id")},
                                                   {"name", StringAt(*function, "name")},
                                                   {"input", std::move(input)}});
                }
            }
        }
    }
    json::object usage{{"input_tokens", 0}, {"output_tokens", 0}};
    if (const json::object* u = FindObject(completion, "usage")) {
        std::int64_t cached = 0;
        if (const json::object* details = FindObject(*u, "prompt_tokens_details")) {
            cached = IntegerAt(*details, "cached_tokens");
        }
        usage["input_tokens"] = std::max<std::int64_t>(0, IntegerAt(*u, "prompt_tokens") - cached);
        usage["output_tokens"] = IntegerAt(*u, "completion_tokens");
        usage["cache_read_input_tokens"] = cached;
    }
    return {{"id", "msg_" + std::string(StringAt(completion, "id"))},
            {"type", "message"},
            {"role", "assistant"},
            {"model", StringAt(completion, "model")},
            {"content", std::move(content)},
            {"stop_reason", StopReasonOf(finish_reason)},
            {"stop_sequence", nullptr},
            {"usage", std::move(usage)}};
}

}  // namespace

boost::json::object AnthropicResponseToOpenAi(const boost::json::object& message,
                                              std::int64_t created) {
    std::string text;
    bool has_text = false;
    json::array tool_calls;
    if (const json::array* content = FindArray(message, "content")) {
        for (const json::value& item : *content) {
            const json::object* block = item.if_object();
            if (block == nullptr) {
                continue;
            }
            const std::string_view type = StringAt(*block, "type");
            if (type == "text") {
                text += StringAt(*block, "text");
                has_text = true;
            } else if (type == "tool_use") {
                tool_calls.push_back(OpenAiToolCallOf(*block));
            }
        }
    }
    json::object reply{{"role", "assistant"}};
    if (has_text || tool_calls.empty()) {
        reply["content"] = text;
    } else {
        reply["content"] = nullptr;
    }
    reply["refusal"] = nullptr;
    if (!tool_calls.empty()) {
        reply["tool_calls"] = std::move(tool_calls);
    }
    AnthropicUsage usage;
    if (const json::object* u = FindObject(message, "usage")) {
        usage.Update(*u);
    }
    json::object choice{{"index", 0},
                        {"message", std::move(reply)},
                        {"logprobs", nullptr},
                        {"finish_reason", FinishReasonOf(StringAt(message, "stop_reason"))}};
    return {{"id", StringAt(message, "id")},
            {"object", "chat.completion"},
            {"created", created},
            {"model", StringAt(message, "model")},
            {"choices", json::array{std::move(choice)}},
            {"usage", usage.OpenAi()}};
}

std::variant<boost::json::object, core::LocalError> OpenAiResponseToAnthropic(
    const boost::json::object& completion) {
    try {
        return OpenAiResponseToAnthropicOrThrow(completion);
    } catch (const Refusal& refusal) {
        return UntranslatableAnswer(refusal.error);
    }
}

std::string OpenAiErrorToAnthropic(std::string_view body, unsigned status) {
    json::error_code ec;
    const json::value parsed = core::ParseJson(body, ec);
    std::string message;
    if (!ec && parsed.is_object()) {
        if (const json::value* error = Find(parsed.get_object(), "error")) {
            if (error->is_object()) {
                message = StringAt(error->get_object(), "message");
            } else if (error->is_string()) {
                message = error->get_string();
            }
        }
    }
    if (message.empty()) {
        message = GenericUpstreamMessage(status);
    }
    return json::serialize(AnthropicErrorBody(AnthropicErrorTypeOf(status), message));
}

std::string AnthropicErrorToOpenAi(std::string_view body, unsigned status) {
    json::error_code ec;
    const json::value parsed = core::ParseJson(body, ec);
    const json::object* error = nullptr;
    if (!ec && parsed.is_object()) {
        error = FindObject(parsed.get_object(), "error");
    }
    if (error == nullptr || StringAt(*error, "message").empty()) {
        return json::serialize(
            OpenAiErrorBody(GenericUpstreamMessage(status), AnthropicErrorTypeOf(status)));
    }
    json::value code = nullptr;
    if (const json::object* details = FindObject(*error, "details")) {
        if (const json::value* error_code = Find(*details, "error_code")) {
            code = *error_code;
        }
    }
    return json::serialize(OpenAiErrorBody(StringAt(*error, "message"),
                                           StringAt(*error, "type", AnthropicErrorTypeOf(status)),
                                           std::move(code)));
}

}  // namespace switchyard::api
