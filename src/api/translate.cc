#include "api/translate.h"

#include <algorithm>
#include <boost/json.hpp>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "api/anthropic_wire.h"
#include "core/json.h"

namespace switchyard::api {
namespace {

namespace json = boost::json;

// Thrown inside the request translators and turned into their LocalError result.
struct Refusal {
    core::LocalError error;
};

[[noreturn]] void Refuse(std::string message, std::string param) {
    throw Refusal{
        core::LocalError{core::ErrorKind::kInvalidRequest, std::move(message), std::move(param)}};
}

// A member that is present and not null.
const json::value* Find(const json::object& object, std::string_view key) {
    const json::value* value = object.if_contains(key);
    return value != nullptr && !value->is_null() ? value : nullptr;
}

const json::object* FindObject(const json::object& object, std::string_view key) {
    const json::value* value = Find(object, key);
    return value != nullptr ? value->if_object() : nullptr;
}

const json::array* FindArray(const json::object& object, std::string_view key) {
    const json::value* value = Find(object, key);
    return value != nullptr ? value->if_array() : nullptr;
}

std::string_view StringAt(const json::object& object, std::string_view key,
                          std::string_view fallback = {}) {
    const json::value* value = Find(object, key);
    if (value == nullptr || !value->is_string()) {
        return fallback;
    }
    return value->get_string();
}

std::optional<double> NumberOf(const json::value& value) {
    if (value.is_int64()) {
        return static_cast<double>(value.get_int64());
    }
    if (value.is_uint64()) {
        return static_cast<double>(value.get_uint64());
    }
    if (value.is_double()) {
        return value.get_double();
    }
    return std::nullopt;
}

std::optional<std::int64_t> IntegerOf(const json::value& value) {
    if (value.is_int64()) {
        return value.get_int64();
    }
    if (value.is_uint64() && value.get_uint64() <= static_cast<std::uint64_t>(INT64_MAX)) {
        return static_cast<std::int64_t>(value.get_uint64());
    }
    if (value.is_double()) {
        const double number = value.get_double();
        if (number > -9.0e18 && number < 9.0e18 &&
            number == static_cast<double>(static_cast<std::int64_t>(number))) {
            return static_cast<std::int64_t>(number);
        }
    }
    return std::nullopt;
}

std::int64_t IntegerAt(const json::object& object, std::string_view key) {
    const json::value* value = Find(object, key);
    if (value == nullptr) {
        return 0;
    }
    return IntegerOf(*value).value_or(0);
}

std::string Quoted(std::string_view name) { return "`" + std::string(name) + "`"; }

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
            const json::value* input = Find(*block, "input");
            tool_calls.push_back(
                json::object{{"id", StringAt(*block, "id")},
                             {"type", "function"},
                             {"function",
                              {{"name", StringAt(*block, "name")},
                               {"arguments", input != nullptr ? json::serialize(*input) : "{}"}}}});
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
        } else {
            Refuse("Parameter " + Quoted(key) + " cannot be translated to the OpenAI API", key);
        }
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Requests: OpenAI -> Anthropic

json::object ImageBlockOf(const json::object& part) {
    std::string_view url;
    if (const json::value* image = Find(part, "image_url")) {
        if (image->is_string()) {
            url = image->get_string();
        } else if (image->is_object()) {
            url = StringAt(image->get_object(), "url");
        }
    }
    constexpr std::string_view kData = "data:";
    constexpr std::string_view kBase64 = ";base64,";
    if (url.starts_with(kData)) {
        const std::size_t marker = url.find(kBase64);
        if (marker == std::string_view::npos) {
            Refuse("Only base64 data URLs can be translated to the Anthropic API", "messages");
        }
        return json::object{{"type", "image"},
                            {"source",
                             {{"type", "base64"},
                              {"media_type", url.substr(kData.size(), marker - kData.size())},
                              {"data", url.substr(marker + kBase64.size())}}}};
    }
    if (url.starts_with("https://") || url.starts_with("http://")) {
        return json::object{{"type", "image"}, {"source", {{"type", "url"}, {"url", url}}}};
    }
    Refuse("An image URL is neither a data URL nor http(s)", "messages");
}

// Text (and, for users, image) blocks from an OpenAI message's content. Empty text is skipped:
// Anthropic rejects empty text blocks.
void AppendContentBlocks(const json::value* content, bool allow_images, json::array& blocks) {
    if (content == nullptr) {
        return;
    }
    if (content->is_string()) {
        if (!content->get_string().empty()) {
            blocks.push_back(json::object{{"type", "text"}, {"text", content->get_string()}});
        }
        return;
    }
    if (!content->is_array()) {
        Refuse("A message's `content` is neither a string nor parts", "messages");
    }
    for (const json::value& item : content->get_array()) {
        const json::object* part = item.if_object();
        const std::string_view type = part != nullptr ? StringAt(*part, "type") : "";
        if (type == "text" || type == "refusal") {
            const std::string_view text = StringAt(*part, type);
            if (!text.empty()) {
                blocks.push_back(json::object{{"type", "text"}, {"text", text}});
            }
        } else if (type == "image_url" && allow_images) {
            blocks.push_back(ImageBlockOf(*part));
        } else {
            Refuse(
                "Content part type " + Quoted(type) + " cannot be translated to the Anthropic API",
                "messages");
        }
    }
}

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

// ---------------------------------------------------------------------------------------------
// Responses

json::value FinishReasonOf(std::string_view stop_reason) {
    if (stop_reason.empty()) {
        return nullptr;
    }
    if (stop_reason == "max_tokens" || stop_reason == "model_context_window_exceeded") {
        return "length";
    }
    if (stop_reason == "tool_use") {
        return "tool_calls";
    }
    if (stop_reason == "refusal") {
        return "content_filter";
    }
    return "stop";  // end_turn, stop_sequence, pause_turn
}

std::string_view StopReasonOf(std::string_view finish_reason) {
    if (finish_reason == "length") {
        return "max_tokens";
    }
    if (finish_reason == "tool_calls" || finish_reason == "function_call") {
        return "tool_use";
    }
    if (finish_reason == "content_filter") {
        return "refusal";
    }
    return "end_turn";
}

struct AnthropicUsage {
    std::int64_t input = 0;
    std::int64_t output = 0;
    std::int64_t cache_read = 0;
    std::int64_t cache_creation = 0;

    void Update(const json::object& usage) {
        // message_delta usage is cumulative (docs/providers.md#streams): a present field replaces
        // the old one.
        if (Find(usage, "input_tokens")) input = IntegerAt(usage, "input_tokens");
        if (Find(usage, "output_tokens")) output = IntegerAt(usage, "output_tokens");
        if (Find(usage, "cache_read_input_tokens")) {
            cache_read = IntegerAt(usage, "cache_read_input_tokens");
        }
        if (Find(usage, "cache_creation_input_tokens")) {
            cache_creation = IntegerAt(usage, "cache_creation_input_tokens");
        }
    }

    json::object OpenAi() const {
        const std::int64_t prompt = input + cache_read + cache_creation;
        return {{"prompt_tokens", prompt},
                {"completion_tokens", output},
                {"total_tokens", prompt + output},
                {"prompt_tokens_details", {{"cached_tokens", cache_read}}}};
    }
};

json::object OpenAiErrorBody(std::string_view message, std::string_view type,
                             json::value code = nullptr) {
    return {
        {"error",
         {{"message", message}, {"type", type}, {"param", nullptr}, {"code", std::move(code)}}}};
}

json::object AnthropicErrorBody(std::string_view type, std::string_view message) {
    return {{"type", "error"}, {"error", {{"type", type}, {"message", message}}}};
}

// Anthropic's type for an OpenAI error met inside a stream, where there is no status.
std::string_view AnthropicTypeOfStreamError(const json::object& error) {
    const std::string_view type = StringAt(error, "type");
    const std::string_view code = StringAt(error, "code");
    if (type == "rate_limit_error" || code == "rate_limit_exceeded" || type == "tokens" ||
        type == "requests") {
        return "rate_limit_error";
    }
    if (type == "service_unavailable_error" || code == "server_is_overloaded") {
        return "overloaded_error";
    }
    if (type == "invalid_request_error") {
        return "invalid_request_error";
    }
    return "api_error";
}

std::string GenericUpstreamMessage(unsigned status) {
    return "Upstream returned HTTP " + std::to_string(status) + " without a readable error body";
}

void AppendAnthropicEvent(std::string_view name, json::object data, std::string& out) {
    json::object event{{"type", name}};
    for (auto& [key, value] : data) {
        event[key] = std::move(value);
    }
    out += "event: ";
    out += name;
    out += "\ndata: ";
    out += json::serialize(event);
    out += "\n\n";
}

void AppendData(const json::object& data, std::string& out) {
    out += "data: ";
    out += json::serialize(data);
    out += "\n\n";
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
                const json::value* input = Find(*block, "input");
                tool_calls.push_back(json::object{
                    {"id", StringAt(*block, "id")},
                    {"type", "function"},
                    {"function",
                     {{"name", StringAt(*block, "name")},
                      {"arguments", input != nullptr ? json::serialize(*input) : "{}"}}}});
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

boost::json::object OpenAiResponseToAnthropic(const boost::json::object& completion) {
    json::array content;
    std::string_view finish_reason;
    const json::array* choices = FindArray(completion, "choices");
    const json::object* choice =
        choices != nullptr && !choices->empty() ? choices->front().if_object() : nullptr;
    if (choice != nullptr) {
        finish_reason = StringAt(*choice, "finish_reason");
        if (const json::object* message = FindObject(*choice, "message")) {
            try {
                AppendContentBlocks(Find(*message, "content"), false, content);
            } catch (const Refusal&) {
                // Unknown response parts: keep what was read.
            }
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

// ---------------------------------------------------------------------------------------------
// Streams: Anthropic -> OpenAI

AnthropicToOpenAiStream::AnthropicToOpenAiStream(bool include_usage, std::int64_t created)
    : include_usage_(include_usage), created_(created) {}

void AnthropicToOpenAiStream::Chunk(boost::json::object delta, const char* finish_reason,
                                    std::string& out) const {
    json::object choice{{"index", 0}, {"delta", std::move(delta)}, {"logprobs", nullptr}};
    if (finish_reason == nullptr) {
        choice["finish_reason"] = nullptr;
    } else {
        choice["finish_reason"] = finish_reason;
    }
    json::object chunk{{"id", id_},
                       {"object", "chat.completion.chunk"},
                       {"created", created_},
                       {"model", model_},
                       {"choices", json::array{std::move(choice)}}};
    if (include_usage_) {
        chunk["usage"] = nullptr;  // every chunk but the last one carries a null usage (A.2.3)
    }
    AppendData(chunk, out);
}

void AnthropicToOpenAiStream::Error(std::string_view type, std::string_view message,
                                    std::string& out) {
    AppendData(OpenAiErrorBody(message, type), out);
    finished_ = true;
}

void AnthropicToOpenAiStream::Feed(std::string_view event_name, std::string_view data,
                                   std::string& out) {
    if (finished_ || event_name == "ping") {
        return;
    }
    json::error_code ec;
    const json::value parsed = core::ParseJson(data, ec);
    if (ec || !parsed.is_object()) {
        Error("api_error", "Upstream sent a malformed stream event", out);
        return;
    }
    const json::object& event = parsed.get_object();
    const std::string_view type = event_name.empty() ? StringAt(event, "type") : event_name;
    if (type == "message_start") {
        const json::object* message = FindObject(event, "message");
        if (message != nullptr) {
            id_ = StringAt(*message, "id");
            model_ = StringAt(*message, "model");
            if (const json::object* usage = FindObject(*message, "usage")) {
                AnthropicUsage u;
                u.Update(*usage);
                input_tokens_ = u.input;
                output_tokens_ = u.output;
                cache_read_tokens_ = u.cache_read;
                cache_creation_tokens_ = u.cache_creation;
            }
        }
        Chunk({{"role", "assistant"}, {"content", ""}}, nullptr, out);
    } else if (type == "content_block_start") {
        const json::object* block = FindObject(event, "content_block");
        if (block == nullptr) {
            return;
        }
        const std::string_view block_type = StringAt(*block, "type");
        if (block_type == "text" && !StringAt(*block, "text").empty()) {
            Chunk({{"content", StringAt(*block, "text")}}, nullptr, out);
        } else if (block_type == "tool_use") {
            const auto tool_index = static_cast<std::int64_t>(tool_index_of_block_.size());
            tool_index_of_block_[IntegerAt(event, "index")] = tool_index;
            json::object call{
                {"index", tool_index},
                {"id", StringAt(*block, "id")},
                {"type", "function"},
                {"function", {{"name", StringAt(*block, "name")}, {"arguments", ""}}}};
            Chunk({{"tool_calls", json::array{std::move(call)}}}, nullptr, out);
        }
    } else if (type == "content_block_delta") {
        const json::object* delta = FindObject(event, "delta");
        if (delta == nullptr) {
            return;
        }
        const std::string_view delta_type = StringAt(*delta, "type");
        if (delta_type == "text_delta") {
            Chunk({{"content", StringAt(*delta, "text")}}, nullptr, out);
        } else if (delta_type == "input_json_delta") {
            const auto found = tool_index_of_block_.find(IntegerAt(event, "index"));
            const std::string_view partial = StringAt(*delta, "partial_json");
            if (found == tool_index_of_block_.end() || partial.empty()) {
                return;
            }
            json::object call{{"index", found->second}, {"function", {{"arguments", partial}}}};
            Chunk({{"tool_calls", json::array{std::move(call)}}}, nullptr, out);
        }
    } else if (type == "message_delta") {
        if (const json::object* usage = FindObject(event, "usage")) {
            AnthropicUsage u{input_tokens_, output_tokens_, cache_read_tokens_,
                             cache_creation_tokens_};
            u.Update(*usage);
            input_tokens_ = u.input;
            output_tokens_ = u.output;
            cache_read_tokens_ = u.cache_read;
            cache_creation_tokens_ = u.cache_creation;
        }
        std::string_view stop_reason;
        if (const json::object* delta = FindObject(event, "delta")) {
            stop_reason = StringAt(*delta, "stop_reason");
        }
        if (!stop_reason.empty()) {
            const json::value finish = FinishReasonOf(stop_reason);
            Chunk({}, finish.get_string().c_str(), out);
        }
    } else if (type == "message_stop") {
        if (include_usage_) {
            const AnthropicUsage u{input_tokens_, output_tokens_, cache_read_tokens_,
                                   cache_creation_tokens_};
            AppendData({{"id", id_},
                        {"object", "chat.completion.chunk"},
                        {"created", created_},
                        {"model", model_},
                        {"choices", json::array()},
                        {"usage", u.OpenAi()}},
                       out);
        }
        out += "data: [DONE]\n\n";
        finished_ = true;
    } else if (type == "error") {
        const json::object* error = FindObject(event, "error");
        const std::string_view message =
            error != nullptr ? StringAt(*error, "message") : std::string_view();
        Error(error != nullptr ? StringAt(*error, "type", "api_error") : "api_error",
              message.empty() ? "Upstream stream failed" : message, out);
    }
    // content_block_stop, and event types added later, carry nothing for OpenAI clients.
}

// ---------------------------------------------------------------------------------------------
// Streams: OpenAI -> Anthropic

void OpenAiToAnthropicStream::Start(std::string_view id, std::string_view model, std::string& out) {
    json::object message{
        {"id", "msg_" + std::string(id)},
        {"type", "message"},
        {"role", "assistant"},
        {"content", json::array()},
        {"model", model},
        {"stop_reason", nullptr},
        {"stop_sequence", nullptr},
        {"usage",
         {{"input_tokens", std::max<std::int64_t>(0, input_tokens_)}, {"output_tokens", 0}}}};
    AppendAnthropicEvent("message_start", {{"message", std::move(message)}}, out);
    started_ = true;
}

void OpenAiToAnthropicStream::CloseBlock(std::string& out) {
    if (open_ == Block::kNone) {
        return;
    }
    AppendAnthropicEvent("content_block_stop", {{"index", current_index_}}, out);
    open_ = Block::kNone;
}

void OpenAiToAnthropicStream::Finish(std::string& out) {
    if (!started_) {
        Start("", "", out);
    }
    CloseBlock(out);
    json::object usage{{"output_tokens", output_tokens_}};
    if (input_tokens_ >= 0) {
        usage["input_tokens"] = std::max<std::int64_t>(0, input_tokens_ - cached_tokens_);
        usage["cache_read_input_tokens"] = cached_tokens_;
    }
    AppendAnthropicEvent("message_delta",
                         {{"delta",
                           {{"stop_reason", stop_reason_.empty() ? "end_turn" : stop_reason_},
                            {"stop_sequence", nullptr}}},
                          {"usage", std::move(usage)}},
                         out);
    AppendAnthropicEvent("message_stop", {}, out);
    finished_ = true;
}

void OpenAiToAnthropicStream::Error(std::string_view type, std::string_view message,
                                    std::string& out) {
    json::object body = AnthropicErrorBody(type, message);
    body.erase("type");
    AppendAnthropicEvent("error", std::move(body), out);
    finished_ = true;
}

void OpenAiToAnthropicStream::Feed(std::string_view /*event_name*/, std::string_view data,
                                   std::string& out) {
    if (finished_) {
        return;
    }
    if (data == "[DONE]") {
        Finish(out);
        return;
    }
    json::error_code ec;
    const json::value parsed = core::ParseJson(data, ec);
    if (ec || !parsed.is_object()) {
        Error("api_error", "Upstream sent a malformed stream event", out);
        return;
    }
    const json::object& chunk = parsed.get_object();
    if (const json::value* error = Find(chunk, "error")) {
        const json::object empty;
        const json::object& fields = error->is_object() ? error->get_object() : empty;
        const std::string_view message = StringAt(fields, "message");
        Error(AnthropicTypeOfStreamError(fields),
              message.empty() ? "An error occurred during streaming" : message, out);
        return;
    }
    if (const json::object* usage = FindObject(chunk, "usage")) {
        input_tokens_ = IntegerAt(*usage, "prompt_tokens");
        output_tokens_ = IntegerAt(*usage, "completion_tokens");
        if (const json::object* details = FindObject(*usage, "prompt_tokens_details")) {
            cached_tokens_ = IntegerAt(*details, "cached_tokens");
        }
    }
    if (!started_) {
        Start(StringAt(chunk, "id"), StringAt(chunk, "model"), out);
    }
    const json::array* choices = FindArray(chunk, "choices");
    const json::object* choice =
        choices != nullptr && !choices->empty() ? choices->front().if_object() : nullptr;
    if (choice == nullptr) {
        return;
    }
    if (const json::object* delta = FindObject(*choice, "delta")) {
        for (const std::string_view key : {"content", "refusal"}) {
            const std::string_view text = StringAt(*delta, key);
            if (text.empty()) {
                continue;
            }
            if (open_ != Block::kText) {
                CloseBlock(out);
                current_index_ = next_index_++;
                open_ = Block::kText;
                AppendAnthropicEvent("content_block_start",
                                     {{"index", current_index_},
                                      {"content_block", {{"type", "text"}, {"text", ""}}}},
                                     out);
            }
            AppendAnthropicEvent(
                "content_block_delta",
                {{"index", current_index_}, {"delta", {{"type", "text_delta"}, {"text", text}}}},
                out);
        }
        if (const json::array* calls = FindArray(*delta, "tool_calls")) {
            for (const json::value& item : *calls) {
                const json::object* call = item.if_object();
                if (call == nullptr) {
                    continue;
                }
                const std::int64_t tool_index = IntegerAt(*call, "index");
                const json::object* function = FindObject(*call, "function");
                const std::string_view id = StringAt(*call, "id");
                auto found = block_of_tool_.find(tool_index);
                if (found == block_of_tool_.end() || !id.empty()) {
                    CloseBlock(out);
                    current_index_ = next_index_++;
                    open_ = Block::kToolUse;
                    found = block_of_tool_.insert_or_assign(tool_index, current_index_).first;
                    AppendAnthropicEvent(
                        "content_block_start",
                        {{"index", current_index_},
                         {"content_block",
                          {{"type", "tool_use"},
                           {"id", id},
                           {"name", function != nullptr ? StringAt(*function, "name") : ""},
                           {"input", json::object()}}}},
                        out);
                }
                const std::string_view arguments =
                    function != nullptr ? StringAt(*function, "arguments") : "";
                if (!arguments.empty()) {
                    AppendAnthropicEvent(
                        "content_block_delta",
                        {{"index", found->second},
                         {"delta", {{"type", "input_json_delta"}, {"partial_json", arguments}}}},
                        out);
                }
            }
        }
    }
    const std::string_view finish_reason = StringAt(*choice, "finish_reason");
    if (!finish_reason.empty()) {
        CloseBlock(out);
        stop_reason_ = StopReasonOf(finish_reason);
    }
}

}  // namespace switchyard::api
