#include <boost/json.hpp>
#include <set>

#include "api/json_access.h"
#include "api/responses.h"

namespace switchyard::api {
namespace {

namespace json = boost::json;

// A chat content part for a Responses input part of a message.
json::object ChatPartOf(const json::value& part, const std::string& where) {
    const json::object* p = part.if_object();
    if (p == nullptr) Refuse("Each content part must be an object.", where);
    const std::string_view type = StringAt(*p, "type");
    if (type == "input_text" || type == "output_text") {
        return {{"type", "text"}, {"text", StringAt(*p, "text")}};
    }
    if (type == "input_image") {
        const json::value* url = Find(*p, "image_url");
        if (url == nullptr || !url->is_string()) {
            Refuse("An image given by file id cannot be sent to this deployment; give its URL.",
                   where);
        }
        json::object image{{"url", url->get_string()}};
        if (const json::value* detail = Find(*p, "detail")) image["detail"] = *detail;
        return {{"type", "image_url"}, {"image_url", std::move(image)}};
    }
    Refuse("The content part type " + Quoted(type) + " cannot be sent to this deployment.", where);
}

// The chat message for a Responses message item.
json::object ChatMessageOf(const json::object& item, const std::string& where) {
    std::string role(StringAt(item, "role"));
    if (role == "developer") role = "system";
    if (role != "user" && role != "assistant" && role != "system") {
        Refuse("Unknown message role " + Quoted(role) + ".", where + ".role");
    }
    const json::value* content = Find(item, "content");
    if (content == nullptr || content->is_string()) {
        return {{"role", role}, {"content", content ? *content : json::value("")}};
    }
    const json::array* parts = content->if_array();
    if (parts == nullptr) Refuse("Message content must be a string or parts.", where + ".content");
    if (role != "user") {
        // Assistant and system turns are text: their parts join into one string.
        std::string text;
        for (std::size_t i = 0; i < parts->size(); ++i) {
            const json::object part = ChatPartOf((*parts)[i], where + ".content");
            if (StringAt(part, "type") != "text") {
                Refuse("Only user messages may carry images.", where + ".content");
            }
            text += StringAt(part, "text");
        }
        return {{"role", role}, {"content", text}};
    }
    json::array chat_parts;
    for (std::size_t i = 0; i < parts->size(); ++i) {
        chat_parts.push_back(
            ChatPartOf((*parts)[i], where + ".content[" + std::to_string(i) + "]"));
    }
    return {{"role", role}, {"content", std::move(chat_parts)}};
}

// Appends the chat messages for the Responses `input`.
void AppendInput(const json::value& input, json::array& messages) {
    if (input.is_string()) {
        messages.push_back(json::object{{"role", "user"}, {"content", input}});
        return;
    }
    const json::array* items = input.if_array();
    if (items == nullptr) Refuse("'input' must be a string or an array of items.", "input");
    for (std::size_t i = 0; i < items->size(); ++i) {
        const std::string where = "input[" + std::to_string(i) + "]";
        const json::object* item = (*items)[i].if_object();
        if (item == nullptr) Refuse("Each input item must be an object.", where);
        const std::string_view type = StringAt(*item, "type", "message");
        if (type == "message") {
            messages.push_back(ChatMessageOf(*item, where));
        } else if (type == "function_call") {
            json::object call{
                {"id", StringAt(*item, "call_id")},
                {"type", "function"},
                {"function", json::object{{"name", StringAt(*item, "name")},
                                          {"arguments", StringAt(*item, "arguments", "{}")}}}};
            // Calls in a row are one assistant turn, as chat completions writes them.
            json::object* last = messages.empty() ? nullptr : messages.back().if_object();
            if (last != nullptr && StringAt(*last, "role") == "assistant") {
                if (!last->contains("tool_calls")) (*last)["tool_calls"] = json::array();
                (*last)["tool_calls"].as_array().push_back(std::move(call));
            } else {
                messages.push_back(json::object{{"role", "assistant"},
                                                {"content", nullptr},
                                                {"tool_calls", json::array{std::move(call)}}});
            }
        } else if (type == "function_call_output") {
            const json::value* output = Find(*item, "output");
            std::string text;
            if (output != nullptr && output->is_string()) {
                text = output->get_string();
            } else if (output != nullptr && output->is_array()) {
                for (const auto& part : output->get_array()) {
                    const json::object* p = part.if_object();
                    if (p == nullptr || StringAt(*p, "type") != "input_text") {
                        Refuse("A function call output may only carry text here.",
                               where + ".output");
                    }
                    text += StringAt(*p, "text");
                }
            }
            messages.push_back(json::object{
                {"role", "tool"}, {"tool_call_id", StringAt(*item, "call_id")}, {"content", text}});
        } else if (type == "reasoning") {
            // A model's own earlier reasoning: only that model could use it.
        } else {
            Refuse("The input item type " + Quoted(type) + " cannot be sent to this deployment.",
                   where + ".type");
        }
    }
}

json::array ChatToolsOf(const json::array& tools) {
    json::array out;
    for (std::size_t i = 0; i < tools.size(); ++i) {
        const std::string where = "tools[" + std::to_string(i) + "]";
        const json::object* tool = tools[i].if_object();
        if (tool == nullptr) Refuse("Each tool must be an object.", where);
        const std::string_view type = StringAt(*tool, "type");
        if (type != "function") {
            Refuse("The built-in tool " + Quoted(type) +
                       " exists only in the Responses API; this deployment cannot run it.",
                   where + ".type");
        }
        json::object function{{"name", StringAt(*tool, "name")}};
        if (const json::value* d = Find(*tool, "description")) function["description"] = *d;
        if (const json::value* p = Find(*tool, "parameters")) function["parameters"] = *p;
        if (const json::value* s = Find(*tool, "strict"); s && s->is_bool() && s->get_bool()) {
            function["strict"] = true;
        }
        out.push_back(json::object{{"type", "function"}, {"function", std::move(function)}});
    }
    return out;
}

json::value ChatToolChoiceOf(const json::value& choice) {
    if (choice.is_string()) return choice;
    const json::object* c = choice.if_object();
    if (c != nullptr && StringAt(*c, "type") == "function") {
        return json::object{{"type", "function"},
                            {"function", json::object{{"name", StringAt(*c, "name")}}}};
    }
    Refuse("A tool_choice naming a built-in tool cannot be sent to this deployment.",
           "tool_choice");
}

json::object ChatRequestOrThrow(const json::object& request) {
    json::object chat;
    json::array messages;
    if (const json::value* instructions = Find(request, "instructions")) {
        if (!instructions->is_string()) Refuse("'instructions' must be a string.", "instructions");
        messages.push_back(json::object{{"role", "system"}, {"content", *instructions}});
    }
    // Copied as they are; the others are handled below, dropped, or refused.
    static const std::set<std::string_view> kSame = {"model", "temperature", "top_p",
                                                     "parallel_tool_calls", "user"};
    static const std::set<std::string_view> kDropped = {
        "metadata", "prompt_cache_key", "safety_identifier", "stream_options",
        "models",   "fallbacks",        "instructions"};
    for (const auto& [key, value] : request) {
        if (value.is_null()) continue;
        if (kSame.contains(key)) {
            chat[key] = value;
        } else if (kDropped.contains(key)) {
        } else if (key == "input") {
            AppendInput(value, messages);
        } else if (key == "stream") {
            chat["stream"] = value;
            if (value.is_bool() && value.get_bool()) {
                chat["stream_options"] = json::object{{"include_usage", true}};
            }
        } else if (key == "max_output_tokens") {
            chat["max_completion_tokens"] = value;
        } else if (key == "tools") {
            if (!value.is_array()) Refuse("'tools' must be an array.", "tools");
            if (!value.get_array().empty()) chat["tools"] = ChatToolsOf(value.get_array());
        } else if (key == "tool_choice") {
            chat["tool_choice"] = ChatToolChoiceOf(value);
        } else if (key == "text") {
            const json::object* text = value.if_object();
            if (text == nullptr) Refuse("'text' must be an object.", "text");
            for (const auto& [text_key, text_value] : *text) {
                if (text_key == "verbosity" && text_value == "medium") continue;
                if (text_key != "format") {
                    Refuse(
                        "'text." + std::string(text_key) + "' cannot be sent to this deployment.",
                        "text." + std::string(text_key));
                }
                const json::object* format = text_value.if_object();
                const std::string_view type = format ? StringAt(*format, "type") : "";
                if (type == "text") continue;
                if (type == "json_object") {
                    chat["response_format"] = json::object{{"type", "json_object"}};
                } else if (type == "json_schema") {
                    json::object schema{{"name", StringAt(*format, "name", "response")}};
                    for (const char* k : {"schema", "strict", "description"}) {
                        if (const json::value* v = Find(*format, k)) schema[k] = *v;
                    }
                    chat["response_format"] =
                        json::object{{"type", "json_schema"}, {"json_schema", std::move(schema)}};
                } else {
                    Refuse("Unknown text format " + Quoted(type) + ".", "text.format");
                }
            }
        } else if (key == "reasoning") {
            const json::object* reasoning = value.if_object();
            if (reasoning == nullptr) Refuse("'reasoning' must be an object.", "reasoning");
            for (const auto& [r_key, r_value] : *reasoning) {
                if (r_value.is_null()) continue;
                if (r_key == "effort") {
                    chat["reasoning_effort"] = r_value;
                } else {
                    Refuse(
                        "'reasoning." + std::string(r_key) + "' cannot be sent to this deployment.",
                        "reasoning." + std::string(r_key));
                }
            }
        } else if (key == "store" && value.is_bool() && !value.get_bool()) {
        } else if (key == "truncation" && value == "disabled") {
        } else if (key == "service_tier" && (value == "auto" || value == "default")) {
        } else {
            // previous_response_id, conversation, store true, background, include, prompt, ...
            Refuse("'" + std::string(key) + "' cannot be carried over to Chat Completions.",
                   std::string(key));
        }
    }
    if (!request.contains("input")) Refuse("Missing required parameter: 'input'.", "input");
    chat["messages"] = std::move(messages);
    return chat;
}

}  // namespace

std::variant<boost::json::object, core::LocalError> ResponsesRequestToChat(
    const boost::json::object& request) {
    try {
        return ChatRequestOrThrow(request);
    } catch (const Refusal& refusal) {
        return refusal.error;
    }
}

}  // namespace switchyard::api
