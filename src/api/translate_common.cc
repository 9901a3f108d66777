#include "api/translate_common.h"

#include <boost/json.hpp>
#include <cstddef>
#include <utility>

#include "api/json_access.h"

namespace switchyard::api {

namespace json = boost::json;

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

void AnthropicUsage::Update(const json::object& usage) {
    // message_delta usage is cumulative (docs/providers.md#streams): a present field replaces the
    // old one.
    if (Find(usage, "input_tokens")) input = IntegerAt(usage, "input_tokens");
    if (Find(usage, "output_tokens")) output = IntegerAt(usage, "output_tokens");
    if (Find(usage, "cache_read_input_tokens")) {
        cache_read = IntegerAt(usage, "cache_read_input_tokens");
    }
    if (Find(usage, "cache_creation_input_tokens")) {
        cache_creation = IntegerAt(usage, "cache_creation_input_tokens");
    }
}

json::object AnthropicUsage::OpenAi() const {
    const std::int64_t prompt = input + cache_read + cache_creation;
    return {{"prompt_tokens", prompt},
            {"completion_tokens", output},
            {"total_tokens", prompt + output},
            {"prompt_tokens_details", {{"cached_tokens", cache_read}}}};
}

json::object OpenAiErrorBody(std::string_view message, std::string_view type, json::value code) {
    return {
        {"error",
         {{"message", message}, {"type", type}, {"param", nullptr}, {"code", std::move(code)}}}};
}

json::object AnthropicErrorBody(std::string_view type, std::string_view message) {
    return {{"type", "error"}, {"error", {{"type", type}, {"message", message}}}};
}

json::object OpenAiToolCallOf(const json::object& tool_use) {
    const json::value* input = Find(tool_use, "input");
    return {{"id", StringAt(tool_use, "id")},
            {"type", "function"},
            {"function",
             {{"name", StringAt(tool_use, "name")},
              {"arguments", input != nullptr ? json::serialize(*input) : "{}"}}}};
}

namespace {

// An Anthropic image block for an OpenAI image_url part: a base64 data URL or an http(s) URL.
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

}  // namespace

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

}  // namespace switchyard::api
