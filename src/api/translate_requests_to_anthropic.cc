#include <algorithm>
#include <boost/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/json_access.h"
#include "api/translate.h"
#include "api/translate_common.h"
#include "core/json.h"

// Requests: OpenAI -> Anthropic (translate.h). Each translator throws Refusal for what the
// Anthropic API cannot express; OpenAiRequestToAnthropic at the end turns it into its LocalError
// result. The other way is translate_requests_to_openai.cc.

namespace switchyard::api {
namespace {

namespace json = boost::json;

std::string SystemTextOf(const json::value* content) {
    json::array blocks;
    AppendContentBlocks(content, false, blocks);
    std::string text;
    for (const json::value& block : blocks) {
        text += block.at("text").get_string();
    }
    return text;
}

json::object ToolUseOf(const json::value& item) {
    const json::object* call = item.if_object();
    const json::object* function = call != nullptr ? FindObject(*call, "function") : nullptr;
    if (function == nullptr || StringAt(*call, "type", "function") != "function") {
        Refuse("Only function tool calls can be translated to the Anthropic API", "messages");
    }
    const std::string_view arguments = StringAt(*function, "arguments");
    json::value input = json::object();
    if (!arguments.empty()) {
        json::error_code ec;
        input = core::ParseJson(arguments, ec);
        if (ec || !input.is_object()) {
            Refuse("Tool call arguments are not a JSON object", "messages");
        }
    }
    return json::object{{"type", "tool_use"},
                        {"id", StringAt(*call, "id")},
                        {"name", StringAt(*function, "name")},
                        {"input", std::move(input)}};
}

json::object ToolResultOf(const json::object& message) {
    const std::string_view id = StringAt(message, "tool_call_id");
    if (id.empty()) {
        Refuse("A tool message has no `tool_call_id`", "messages");
    }
    json::object result{{"type", "tool_result"}, {"tool_use_id", id}};
    const json::value* content = Find(message, "content");
    if (content != nullptr && content->is_string()) {
        result["content"] = content->get_string();
    } else {
        json::array blocks;
        AppendContentBlocks(content, false, blocks);
        result["content"] = std::move(blocks);
    }
    return result;
}

struct AnthropicTurn {
    std::string role;
    json::array blocks;
};

void CheckOpenAiMessageFields(const json::object& message) {
    for (const auto& [key, value] : message) {
        if (value.is_null() || key == "role" || key == "content" || key == "tool_calls" ||
            key == "tool_call_id" || key == "refusal") {
            continue;
        }
        Refuse("Message field " + Quoted(key) + " cannot be translated to the Anthropic API",
               "messages");
    }
}

json::object AnthropicToolOf(const json::value& item) {
    const json::object* tool = item.if_object();
    const json::object* function = tool != nullptr ? FindObject(*tool, "function") : nullptr;
    if (function == nullptr || StringAt(*tool, "type") != "function") {
        Refuse("Only function tools can be translated to the Anthropic API", "tools");
    }
    json::object out{{"name", StringAt(*function, "name")}};
    if (const json::value* description = Find(*function, "description")) {
        out["description"] = *description;
    }
    if (const json::value* parameters = Find(*function, "parameters")) {
        out["input_schema"] = *parameters;
    } else {
        out["input_schema"] = {{"type", "object"}, {"properties", json::object()}};
    }
    const json::value* strict = Find(*function, "strict");
    if (strict != nullptr && strict->is_bool() && strict->get_bool()) {
        Refuse("Strict function tools cannot be translated to the Anthropic API", "tools");
    }
    return out;
}

json::object AnthropicToolChoiceOf(const json::value& value) {
    if (value.is_string()) {
        const std::string_view choice = value.get_string();
        if (choice == "auto" || choice == "none") {
            return {{"type", choice}};
        }
        if (choice == "required") {
            return {{"type", "any"}};
        }
    } else if (const json::object* choice = value.if_object()) {
        const json::object* function = FindObject(*choice, "function");
        if (StringAt(*choice, "type") == "function" && function != nullptr) {
            return {{"type", "tool"}, {"name", StringAt(*function, "name")}};
        }
    }
    Refuse("This `tool_choice` cannot be translated to the Anthropic API", "tool_choice");
}

bool IsZero(const json::value& value) {
    const std::optional<double> number = NumberOf(value);
    return number && *number == 0;
}

// Parameters with a neutral value that changes nothing; any other value is refused.
bool IsNeutral(std::string_view key, const json::value& value) {
    if (key == "n") {
        return IntegerOf(value) == 1;
    }
    if (key == "logprobs" || key == "store") {
        return value.is_bool() && !value.get_bool();
    }
    if (key == "presence_penalty" || key == "frequency_penalty") {
        return IsZero(value);
    }
    if (key == "logit_bias" || key == "metadata") {
        return value.is_object() && value.get_object().empty();
    }
    if (key == "response_format") {
        return value.is_object() && StringAt(value.get_object(), "type") == "text";
    }
    if (key == "modalities") {
        if (!value.is_array()) {
            return false;
        }
        const json::array& modalities = value.get_array();
        return std::all_of(modalities.begin(), modalities.end(),
                           [](const json::value& m) { return m == "text"; });
    }
    if (key == "service_tier") {
        return value == "auto" || value == "default";
    }
    return false;
}

// The chat messages as Anthropic's: system and developer text gathered into `system`, the rest
// as turns of alternating roles (consecutive same-role turns merged).
void AppendTurns(const json::array& input, std::string& system, std::vector<AnthropicTurn>& turns) {
    for (const json::value& item : input) {
        const json::object* message = item.if_object();
        if (message == nullptr) {
            Refuse("A message is not an object", "messages");
        }
        CheckOpenAiMessageFields(*message);
        const std::string_view role = StringAt(*message, "role");
        const json::value* content = Find(*message, "content");
        AnthropicTurn turn;
        if (role == "system" || role == "developer") {
            const std::string text = SystemTextOf(content);
            if (!text.empty()) {
                system += system.empty() ? text : "\n\n" + text;
            }
            continue;
        }
        if (role == "user") {
            turn.role = "user";
            AppendContentBlocks(content, true, turn.blocks);
        } else if (role == "assistant") {
            turn.role = "assistant";
            AppendContentBlocks(content, false, turn.blocks);
            const std::string_view refusal = StringAt(*message, "refusal");
            if (!refusal.empty()) {
                turn.blocks.push_back(json::object{{"type", "text"}, {"text", refusal}});
            }
            if (const json::value* calls = Find(*message, "tool_calls")) {
                if (!calls->is_array()) {
                    Refuse("`tool_calls` is not an array", "messages");
                }
                for (const json::value& call : calls->get_array()) {
                    turn.blocks.push_back(ToolUseOf(call));
                }
            }
        } else if (role == "tool") {
            turn.role = "user";
            turn.blocks.push_back(ToolResultOf(*message));
        } else {
            Refuse("Message role " + Quoted(role) + " cannot be translated to the Anthropic API",
                   "messages");
        }
        // Anthropic wants alternating roles: consecutive same-role turns become one.
        if (!turns.empty() && turns.back().role == turn.role) {
            for (json::value& block : turn.blocks) {
                turns.back().blocks.push_back(std::move(block));
            }
        } else {
            turns.push_back(std::move(turn));
        }
    }
}

// The turns as Anthropic's `messages`: tool results first in a user turn, a lone text block as a
// plain string.
json::array AnthropicMessagesOf(std::vector<AnthropicTurn>& turns) {
    json::array messages;
    for (AnthropicTurn& turn : turns) {
        // Anthropic requires tool_result blocks first in a user turn.
        std::stable_partition(turn.blocks.begin(), turn.blocks.end(),
                              [](const json::value& b) { return b.at("type") == "tool_result"; });
        json::value content;
        if (turn.blocks.size() == 1 && turn.blocks.front().at("type") == "text") {
            content = turn.blocks.front().at("text");
        } else if (turn.blocks.empty()) {
            content = json::string();
        } else {
            content = std::move(turn.blocks);
        }
        messages.push_back(json::object{{"role", turn.role}, {"content", std::move(content)}});
    }
    return messages;
}

// The request's parameters other than `model` and `messages`, in Anthropic's terms (a refusal for
// one it cannot carry): max_tokens (`default_max_tokens` when none), sampling, stop sequences,
// tools and tool choice, structured output.
void TranslateParameters(const json::object& request, std::int64_t default_max_tokens,
                         json::object& out) {
    std::int64_t max_tokens = default_max_tokens;
    bool parallel_tool_calls = true;
    for (const auto& [key, value] : request) {
        if (value.is_null() || key == "model" || key == "messages" || key == "stream_options" ||
            key == "models" || key == "fallbacks") {
            continue;
        }
        if (key == "max_tokens" || key == "max_completion_tokens") {
            const std::optional<std::int64_t> tokens = IntegerOf(value);
            if (!tokens || *tokens <= 0) {
                Refuse(Quoted(key) + " is not a positive integer", key);
            }
            if (key == "max_completion_tokens" || !Find(request, "max_completion_tokens")) {
                max_tokens = *tokens;
            }
        } else if (key == "temperature" || key == "top_p") {
            const std::optional<double> number = NumberOf(value);
            if (!number) {
                Refuse(Quoted(key) + " is not a number", key);
            }
            if (*number > 1) {
                // OpenAI's temperature ranges over 0-2, Anthropic's over 0-1.
                Refuse(Quoted(key) + " above 1 cannot be translated to the Anthropic API", key);
            }
            out[key] = value;
        } else if (key == "stop") {
            if (value.is_string()) {
                out["stop_sequences"] = json::array{value};
            } else if (value.is_array()) {
                out["stop_sequences"] = value;
            } else {
                Refuse("`stop` is neither a string nor an array", "stop");
            }
        } else if (key == "stream") {
            if (!value.is_bool()) {
                Refuse("`stream` is not a boolean", "stream");
            }
            out["stream"] = value;
        } else if (key == "user") {
            out["metadata"] = {{"user_id", value}};
        } else if (key == "tools") {
            if (!value.is_array()) {
                Refuse("`tools` is not an array", "tools");
            }
            json::array tools;
            for (const json::value& tool : value.get_array()) {
                tools.push_back(AnthropicToolOf(tool));
            }
            out["tools"] = std::move(tools);
        } else if (key == "tool_choice") {
            out["tool_choice"] = AnthropicToolChoiceOf(value);
        } else if (key == "parallel_tool_calls") {
            if (!value.is_bool()) {
                Refuse("`parallel_tool_calls` is not a boolean", key);
            }
            parallel_tool_calls = value.get_bool();
        } else if (key == "response_format" && value.is_object() &&
                   StringAt(value.get_object(), "type") == "json_schema") {
            // Structured output: Anthropic's output_config.format asks for the same schema.
            const json::object* format = FindObject(value.get_object(), "json_schema");
            const json::value* schema = format ? Find(*format, "schema") : nullptr;
            if (schema == nullptr || !schema->is_object()) {
                Refuse("`response_format.json_schema.schema` is not an object", "response_format");
            }
            out["output_config"] = json::object{
                {"format", json::object{{"type", "json_schema"}, {"schema", *schema}}}};
        } else if (!IsNeutral(key, value)) {
            Refuse("Parameter " + Quoted(key) + " cannot be translated to the Anthropic API", key);
        }
    }
    out["max_tokens"] = max_tokens;
    if (!parallel_tool_calls) {
        json::value& choice = out["tool_choice"];
        if (choice.is_null()) {
            choice = json::object{{"type", "auto"}};
        }
        if (choice.at("type") != "none") {
            choice.as_object()["disable_parallel_tool_use"] = true;
        }
    }
}

json::object OpenAiRequestToAnthropicOrThrow(const json::object& request,
                                             std::int64_t default_max_tokens) {
    json::object out;
    if (const json::value* model = Find(request, "model")) {
        out["model"] = *model;
    }
    const json::array* input = FindArray(request, "messages");
    if (input == nullptr) {
        Refuse("`messages` is missing or not an array", "messages");
    }
    std::string system;
    std::vector<AnthropicTurn> turns;
    AppendTurns(*input, system, turns);
    json::array messages = AnthropicMessagesOf(turns);
    if (!system.empty()) {
        out["system"] = system;
    }
    out["messages"] = std::move(messages);
    TranslateParameters(request, default_max_tokens, out);
    return out;
}

}  // namespace

std::variant<boost::json::object, core::LocalError> OpenAiRequestToAnthropic(
    const boost::json::object& request, std::int64_t default_max_tokens) {
    try {
        return OpenAiRequestToAnthropicOrThrow(request, default_max_tokens);
    } catch (Refusal& refusal) {
        return std::move(refusal.error);
    }
}

}  // namespace switchyard::api
