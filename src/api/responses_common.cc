#include "api/responses_common.h"

#include <boost/json.hpp>

#include "api/json_access.h"

namespace switchyard::api {

namespace json = boost::json;

json::object ResponseEcho(const json::object& request) {
    const auto value_or = [&](std::string_view key, json::value fallback) {
        const json::value* v = Find(request, key);
        return v != nullptr ? *v : fallback;
    };
    return {{"instructions", value_or("instructions", nullptr)},
            {"max_output_tokens", value_or("max_output_tokens", nullptr)},
            {"parallel_tool_calls", value_or("parallel_tool_calls", true)},
            {"previous_response_id", nullptr},
            {"reasoning",
             value_or("reasoning", json::object{{"effort", nullptr}, {"summary", nullptr}})},
            {"store", false},
            {"temperature", value_or("temperature", 1.0)},
            {"text", value_or("text", json::object{{"format", json::object{{"type", "text"}}}})},
            {"tool_choice", value_or("tool_choice", "auto")},
            {"tools", value_or("tools", json::array())},
            {"top_p", value_or("top_p", 1.0)},
            {"truncation", "disabled"},
            {"metadata", value_or("metadata", json::object())}};
}

json::object ResponsesUsageOf(const json::object& chat_usage) {
    const std::int64_t input = IntegerAt(chat_usage, "prompt_tokens");
    const std::int64_t output = IntegerAt(chat_usage, "completion_tokens");
    std::int64_t cached = 0;
    if (const json::object* details = FindObject(chat_usage, "prompt_tokens_details")) {
        cached = IntegerAt(*details, "cached_tokens");
    }
    std::int64_t reasoning = 0;
    if (const json::object* details = FindObject(chat_usage, "completion_tokens_details")) {
        reasoning = IntegerAt(*details, "reasoning_tokens");
    }
    return {{"input_tokens", input},
            {"input_tokens_details", json::object{{"cached_tokens", cached}}},
            {"output_tokens", output},
            {"output_tokens_details", json::object{{"reasoning_tokens", reasoning}}},
            {"total_tokens", input + output}};
}

std::string ResponsesId(std::string_view prefix, std::string_view upstream_id,
                        std::string_view suffix) {
    const std::size_t cut = upstream_id.find_last_of("-_");
    std::string_view tail =
        cut == std::string_view::npos ? upstream_id : upstream_id.substr(cut + 1);
    if (tail.empty()) tail = "0";
    std::string id(prefix);
    id += tail;
    id += suffix;
    return id;
}

json::object MessageItem(std::string_view id, std::string_view text, bool refusal,
                         std::string_view status) {
    json::object part =
        refusal
            ? json::object{{"type", "refusal"}, {"refusal", text}}
            : json::object{{"type", "output_text"}, {"text", text}, {"annotations", json::array()}};
    return {{"type", "message"},
            {"id", id},
            {"status", status},
            {"role", "assistant"},
            {"content", json::array{std::move(part)}}};
}

json::object FunctionCallItem(std::string_view id, std::string_view call_id, std::string_view name,
                              std::string_view arguments, std::string_view status) {
    return {{"type", "function_call"}, {"id", id},        {"call_id", call_id}, {"name", name},
            {"arguments", arguments},  {"status", status}};
}

}  // namespace switchyard::api
