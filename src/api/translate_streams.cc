#include <algorithm>
#include <boost/json.hpp>
#include <cstdint>
#include <string>
#include <utility>

#include "api/json_access.h"
#include "api/translate.h"
#include "api/translate_common.h"
#include "core/json.h"

// Streams, both ways (translate.h): one stateful translator per stream, fed event by event.

namespace switchyard::api {
namespace {

namespace json = boost::json;

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
    // No event translation in this file refuses today; one that does ends the stream with its
    // error event instead of losing the event or throwing out of Feed.
    try {
        Translate(event_name, data, out);
    } catch (const Refusal& refusal) {
        Error("api_error", refusal.error.message, out);
    }
}

void AnthropicToOpenAiStream::Translate(std::string_view event_name, std::string_view data,
                                        std::string& out) {
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
    try {
        Translate(data, out);
    } catch (const Refusal& refusal) {
        Error("api_error", refusal.error.message, out);
    }
}

void OpenAiToAnthropicStream::Translate(std::string_view data, std::string& out) {
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
