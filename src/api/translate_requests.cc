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

// Requests, both ways (translate.h). Each translator throws Refusal for what the other API cannot
// express; the public functions at the end turn it into their LocalError result.

namespace switchyard::api {
namespace {

namespace json = boost::json;

// ---------------------------------------------------------------------------------------------
// Requests: Anthropic -> OpenAI

// "data:<media_type>;base64,<data>" or the URL of an Anthropic image block.
std::string ImageUrlOf(const json::object& block) {
    const json::object* source = FindObject(block, "source");
    if (source != nullptr) {
        const std::string_view type = StringAt(*source, "type");
        if (type == "base64") {
            return "data:" + std::string(StringAt(*source, "media_type")) + ";base64," +
                   std::string(StringAt(*source, "data"));
        }
        if (type == "url") {
            return std::string(StringAt(*source, "url"));
        }
        Refuse("Image source type " + Quoted(type) + " cannot be translated to the OpenAI API",
               "messages");
    }
    Refuse("An image block has no `source`", "messages");
}

[[noreturn]] void RefuseBlock(std::string_view type) {
    if (type == "document") {
        Refuse("Document (PDF) content blocks cannot be translated to the OpenAI API", "messages");
    }
    if (type == "thinking" || type == "redacted_thinking") {
        Refuse("Thinking content blocks cannot be translated to the OpenAI API", "messages");
    }
    Refuse("Content block type " + Quoted(type) + " cannot be translated to the OpenAI API",
           "messages");
}

json::value TextContent(std::vector<std::string> texts) {
    if (texts.size() == 1) {
        return json::string(texts.front());
    }
    json::array parts;
    for (std::string& text : texts) {
        parts.push_back(json::object{{"type", "text"}, {"text", std::move(text)}});
    }
    if (parts.empty()) {
        return json::string();
    }
    return parts;
}

json::object ToolMessageOf(const json::object& block) {
    const std::string_view id = StringAt(block, "tool_use_id");
    if (id.empty()) {
        Refuse("A tool_result block has no `tool_use_id`", "messages");
    }
    std::vector<std::string> texts;
    if (const json::value* content = Find(block, "content")) {
        if (content->is_string()) {
            texts.emplace_back(content->get_string());
        } else if (content->is_array()) {
            for (const json::value& item : content->get_array()) {
                const json::object* part = item.if_object();
                const std::string_view type = part != nullptr ? StringAt(*part, "type") : "";
                if (type != "text") {
                    Refuse("Tool results with " + Quoted(type) +
                               " content cannot be translated to the OpenAI API",
                           "messages");
                }
                texts.emplace_back(StringAt(*part, "text"));
            }
        } else {
            Refuse("A tool_result block's `content` is neither a string nor blocks", "messages");
        }
    }
    const json::value* is_error = Find(block, "is_error");
    if (is_error != nullptr && is_error->is_bool() && is_error->get_bool()) {
        // OpenAI tool messages have no error flag: the model learns of the failure from the text.
        if (texts.empty()) {
            texts.emplace_back("Error");
        } else {
            texts.front() = "Error: " + texts.front();
        }
    }
    return json::object{{"role", "tool"}, {"tool_call_id", id}, {"content", TextContent(texts)}};
}

void AppendAnthropicMessage(const json::object& message, json::array& out) {
    const std::string_view role = StringAt(message, "role");
    if (role != "user" && role != "assistant") {
        Refuse("Message role " + Quoted(role) + " is not user or assistant", "messages");
    }
    const json::value* content = Find(message, "content");
    if (content != nullptr && content->is_string()) {
        out.push_back(json::object{{"role", role}, {"content", content->get_string()}});
        return;
    }
    if (content == nullptr || !content->is_array()) {
        Refuse("A message's `content` is neither a string nor blocks", "messages");
    }
    json::array parts;
    json::array tool_calls;
    for (const json::value& item : content->get_array()) {
        const json::object* block = item.if_object();
        if (block == nullptr) {
            Refuse("A content block is not an object", "messages");
        }
        const std::string_view type = StringAt(*block, "type");
        if (type == "text") {
            parts.push_back(json::object{{"type", "text"}, {"text", StringAt(*block, "text")}});
        } else if (type == "image" && role == "user") {
            parts.push_back(
                json::object{{"type", "image_url"}, {"image_url", {{"url", ImageUrlOf(*block)}}}});
        } else if (type == "tool_result" && role == "user") {
            // Tool results answer the previous assistant turn, so they go before the user's text.
            out.push_back(ToolMessageOf(*block));
        } else if (type == "tool_use" && role == "assistant") {
            tool_calls.push_back(OpenAiToolCallOf(*block));
        } else {
            RefuseBlock(type);
        }
    }
    if (role == "user") {
        if (parts.empty() && !content->get_array().empty()) {
            return;  // only tool results
        }
        json::value user_content;
        if (parts.size() == 1 && parts.front().at("type") == "text") {
            user_content = parts.front().at("text");
        } else if (parts.empty()) {
            user_content = json::string();
        } else {
            user_content = std::move(parts);
        }
        out.push_back(json::object{{"role", "user"}, {"content", std::move(user_content)}});
        return;
    }
    json::object assistant{{"role", "assistant"}};
    if (parts.empty()) {
        assistant["content"] = tool_calls.empty() ? json::value(json::string()) : nullptr;
    } else if (parts.size() == 1) {
        assistant["content"] = parts.front().at("text");
    } else {
        assistant["content"] = std::move(parts);
    }
    if (!tool_calls.empty()) {
        assistant["tool_calls"] = std::move(tool_calls);
    }
    out.push_back(std::move(assistant));
}

json::object OpenAiToolOf(const json::value& item) {
    const json::object* tool = item.if_object();
    if (tool == nullptr) {
        Refuse("A tool is not an object", "tools");
    }
    const std::string_view type = StringAt(*tool, "type", "custom");
    if (type != "custom") {
        Refuse("Server tool " + Quoted(type) + " in `tools` cannot be translated to the OpenAI API",
               "tools");
    }
    json::object function{{"name", StringAt(*tool, "name")}};
    for (const auto& [key, value] : *tool) {
        if (value.is_null() || key == "name" || key == "type" || key == "cache_control") {
            continue;
        }
        if (key == "description") {
            function["description"] = value;
        } else if (key == "input_schema") {
            function["parameters"] = value;
        } else if (key == "strict") {
            function["strict"] = value;
        } else {
            Refuse("Tool field " + Quoted(key) + " cannot be translated to the OpenAI API",
                   "tools");
        }
    }
    return json::object{{"type", "function"}, {"function", std::move(function)}};
}

void ApplyAnthropicToolChoice(const json::value& value, json::object& out) {
    const json::object* choice = value.if_object();
    if (choice == nullptr) {
        Refuse("`tool_choice` is not an object", "tool_choice");
    }
    const std::string_view type = StringAt(*choice, "type");
    if (type == "auto") {
        out["tool_choice"] = "auto";
    } else if (type == "any") {
        out["tool_choice"] = "required";
    } else if (type == "none") {
        out["tool_choice"] = "none";
    } else if (type == "tool") {
        out["tool_choice"] = {{"type", "function"},
                              {"function", {{"name", StringAt(*choice, "name")}}}};
    } else {
        Refuse("`tool_choice` type " + Quoted(type) + " cannot be translated to the OpenAI API",
               "tool_choice");
    }
    const json::value* disable = Find(*choice, "disable_parallel_tool_use");
    if (disable != nullptr && disable->is_bool() && disable->get_bool()) {
        out["parallel_tool_calls"] = false;
    }
}

json::object AnthropicRequestToOpenAiOrThrow(const json::object& request) {
    json::object out;
    json::array messages;
    if (const json::value* model = Find(request, "model")) {
        out["model"] = *model;
    }
    if (const json::value* system = Find(request, "system")) {
        if (system->is_string()) {
            messages.push_back(json::object{{"role", "system"}, {"content", system->get_string()}});
        } else if (system->is_array()) {
            std::vector<std::string> texts;
            for (const json::value& item : system->get_array()) {
                const json::object* block = item.if_object();
                if (block == nullptr || StringAt(*block, "type") != "text") {
                    Refuse("`system` may only hold text blocks", "system");
                }
                texts.emplace_back(StringAt(*block, "text"));
            }
            messages.push_back(json::object{{"role", "system"}, {"content", TextContent(texts)}});
        } else {
            Refuse("`system` is neither a string nor text blocks", "system");
        }
    }
    const json::array* input = FindArray(request, "messages");
    if (input == nullptr) {
        Refuse("`messages` is missing or not an array", "messages");
    }
    for (const json::value& item : *input) {
        const json::object* message = item.if_object();
        if (message == nullptr) {
            Refuse("A message is not an object", "messages");
        }
        AppendAnthropicMessage(*message, messages);
    }
    out["messages"] = std::move(messages);

    for (const auto& [key, value] : request) {
        if (value.is_null() || key == "model" || key == "system" || key == "messages") {
            continue;
        }
        if (key == "max_tokens" || key == "temperature" || key == "top_p") {
            if (!NumberOf(value)) {
                Refuse(Quoted(key) + " is not a number", key);
            }
            out[key] = value;
        } else if (key == "stop_sequences") {
            const json::array* stops = value.if_array();
            if (stops == nullptr ||
                !std::all_of(stops->begin(), stops->end(),
                             [](const json::value& s) { return s.is_string(); })) {
                Refuse("`stop_sequences` is not an array of strings", key);
            }
            out["stop"] = value;
        } else if (key == "stream") {
            if (!value.is_bool()) {
                Refuse("`stream` is not a boolean", "stream");
            }
            out["stream"] = value;
            if (value.get_bool()) {
                out["stream_options"] = {{"include_usage", true}};
            }
        } else if (key == "metadata") {
            if (const json::object* metadata = value.if_object()) {
                if (const json::value* user = Find(*metadata, "user_id")) {
                    out["user"] = *user;
                }
            }
        } else if (key == "tools") {
            if (!value.is_array()) {
                Refuse("`tools` is not an array", "tools");
            }
            json::array tools;
            for (const json::value& tool : value.get_array()) {
                tools.push_back(OpenAiToolOf(tool));
            }
            out["tools"] = std::move(tools);
        } else if (key == "tool_choice") {
            ApplyAnthropicToolChoice(value, out);
        } else if (key == "thinking") {
            const json::object* thinking = value.if_object();
            if (thinking == nullptr || StringAt(*thinking, "type") != "disabled") {
                Refuse("Extended thinking (`thinking`) cannot be translated to the OpenAI API",
                       "thinking");
            }
        } else if (key == "service_tier") {
            if (!value.is_string() || value.get_string() != "auto") {
                Refuse("`service_tier` other than auto cannot be translated to the OpenAI API",
                       "service_tier");
            }
        } else if (key == "top_k") {
            Refuse("`top_k` cannot be translated to the OpenAI API", "top_k");
        } else if (key == "output_config") {
            // Structured output: chat completions' response_format asks for the same schema
            // (strict, as Anthropic's is).
            const json::object* config = value.if_object();
            const json::object* format = config ? FindObject(*config, "format") : nullptr;
            const json::value* schema = format ? Find(*format, "schema") : nullptr;
            if (config == nullptr || config->size() != 1 || format == nullptr ||
                StringAt(*format, "type") != "json_schema" || schema == nullptr ||
                !schema->is_object()) {
                Refuse(
                    "Only `output_config.format` with a json_schema can be translated to the "
                    "OpenAI API",
                    "output_config");
            }
            out["response_format"] = json::object{
                {"type", "json_schema"},
                {"json_schema",
                 json::object{{"name", "response"}, {"strict", true}, {"schema", *schema}}}};
        } else {
            Refuse("Parameter " + Quoted(key) + " cannot be translated to the OpenAI API", key);
        }
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Requests: OpenAI -> Anthropic

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
    for (const json::value& item : *input) {
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
    if (!system.empty()) {
        out["system"] = system;
    }
    out["messages"] = std::move(messages);

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
    return out;
}

}  // namespace

std::variant<boost::json::object, core::LocalError> AnthropicRequestToOpenAi(
    const boost::json::object& request) {
    try {
        return AnthropicRequestToOpenAiOrThrow(request);
    } catch (Refusal& refusal) {
        return std::move(refusal.error);
    }
}

std::variant<boost::json::object, core::LocalError> OpenAiRequestToAnthropic(
    const boost::json::object& request, std::int64_t default_max_tokens) {
    try {
        return OpenAiRequestToAnthropicOrThrow(request, default_max_tokens);
    } catch (Refusal& refusal) {
        return std::move(refusal.error);
    }
}

}  // namespace switchyard::api
