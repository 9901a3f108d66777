#include <algorithm>
#include <boost/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "api/json_access.h"
#include "api/translate.h"
#include "api/translate_common.h"

// Requests: Anthropic -> OpenAI (translate.h). Each translator throws Refusal for what the OpenAI
// API cannot express; AnthropicRequestToOpenAi at the end turns it into its LocalError result.
// The other way is translate_requests_to_anthropic.cc.

namespace switchyard::api {
namespace {

namespace json = boost::json;

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

}  // namespace

std::variant<boost::json::object, core::LocalError> AnthropicRequestToOpenAi(
    const boost::json::object& request) {
    try {
        return AnthropicRequestToOpenAiOrThrow(request);
    } catch (Refusal& refusal) {
        return std::move(refusal.error);
    }
}

}  // namespace switchyard::api
