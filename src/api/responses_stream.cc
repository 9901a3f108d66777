#include <boost/json.hpp>

#include "api/json_access.h"
#include "api/responses.h"
#include "api/responses_common.h"
#include "core/json.h"

namespace switchyard::api {

namespace json = boost::json;

ChatToResponsesStream::ChatToResponsesStream(const json::object& request, std::int64_t created)
    : echo_(ResponseEcho(request)), created_(created) {}

void ChatToResponsesStream::Emit(std::string_view type, json::object data, std::string& out) {
    data["type"] = type;
    data["sequence_number"] = sequence_++;
    out += "event: ";
    out += type;
    out += "\ndata: ";
    out += json::serialize(data);
    out += "\n\n";
}

json::object ChatToResponsesStream::Response(std::string_view status) const {
    json::array output;
    // The output items in the order they were opened.
    std::map<std::int64_t, json::object> items;
    if (message_index_ >= 0) {
        items[message_index_] = MessageItem(message_id_, text_, false,
                                            status == "in_progress" ? "in_progress" : "completed");
    }
    for (const auto& [index, call] : tools_) {
        items[call.output_index] =
            FunctionCallItem(call.id, call.call_id, call.name, call.arguments,
                             status == "in_progress" ? "in_progress" : "completed");
    }
    for (auto& [index, item] : items) output.push_back(std::move(item));
    json::object response{
        {"id", id_},        {"object", "response"},       {"created_at", created_},
        {"status", status}, {"error", nullptr},           {"incomplete_details", nullptr},
        {"model", model_},  {"output", std::move(output)}};
    if (status == "incomplete") {
        response["incomplete_details"] = json::object{
            {"reason", finish_reason_ == "length" ? "max_output_tokens" : "content_filter"}};
    }
    for (const auto& [key, value] : echo_) response[key] = value;
    response["usage"] = usage_.empty() ? json::value(nullptr) : json::value(usage_);
    return response;
}

void ChatToResponsesStream::Start(const json::object& chunk, std::string& out) {
    started_ = true;
    const std::string_view upstream_id = StringAt(chunk, "id", "chatcmpl-0");
    id_ = ResponsesId("resp_", upstream_id);
    message_id_ = ResponsesId("msg_", upstream_id);
    model_ = StringAt(chunk, "model");
    Emit("response.created", {{"response", Response("in_progress")}}, out);
    Emit("response.in_progress", {{"response", Response("in_progress")}}, out);
}

void ChatToResponsesStream::OpenMessage(std::string& out) {
    message_open_ = true;
    message_index_ = next_output_index_++;
    json::object item = MessageItem(message_id_, "", false, "in_progress");
    item["content"] = json::array();
    Emit("response.output_item.added", {{"output_index", message_index_}, {"item", item}}, out);
    Emit("response.content_part.added",
         {{"item_id", message_id_},
          {"output_index", message_index_},
          {"content_index", 0},
          {"part",
           json::object{{"type", "output_text"}, {"text", ""}, {"annotations", json::array()}}}},
         out);
}

void ChatToResponsesStream::CloseMessage(std::string& out) {
    if (!message_open_ || message_done_) return;
    message_done_ = true;
    Emit("response.output_text.done",
         {{"item_id", message_id_},
          {"output_index", message_index_},
          {"content_index", 0},
          {"text", text_}},
         out);
    Emit("response.content_part.done",
         {{"item_id", message_id_},
          {"output_index", message_index_},
          {"content_index", 0},
          {"part",
           json::object{{"type", "output_text"}, {"text", text_}, {"annotations", json::array()}}}},
         out);
    Emit("response.output_item.done",
         {{"output_index", message_index_},
          {"item", MessageItem(message_id_, text_, false, "completed")}},
         out);
}

void ChatToResponsesStream::Finish(std::string& out) {
    if (finished_) return;
    finished_ = true;
    CloseMessage(out);
    for (auto& [index, call] : tools_) {
        Emit("response.function_call_arguments.done",
             {{"item_id", call.id},
              {"output_index", call.output_index},
              {"name", call.name},
              {"arguments", call.arguments}},
             out);
        Emit("response.output_item.done",
             {{"output_index", call.output_index},
              {"item",
               FunctionCallItem(call.id, call.call_id, call.name, call.arguments, "completed")}},
             out);
    }
    const bool incomplete = finish_reason_ == "length" || finish_reason_ == "content_filter";
    const std::string_view status = incomplete ? "incomplete" : "completed";
    Emit(incomplete ? "response.incomplete" : "response.completed",
         {{"response", Response(status)}}, out);
}

void ChatToResponsesStream::Feed(std::string_view /*event_name*/, std::string_view data,
                                 std::string& out) {
    if (finished_ && data != "[DONE]") return;
    if (data == "[DONE]") {
        if (started_) Finish(out);
        return;
    }
    boost::system::error_code ec;
    const json::value parsed = core::ParseJson(data, ec);
    const json::object* chunk = ec ? nullptr : parsed.if_object();
    if (chunk == nullptr) {
        out += ResponsesErrorEvent("stream_interrupted",
                                   "The upstream sent an event that is not JSON.", sequence_++);
        finished_ = true;
        return;
    }
    if (const json::object* error = FindObject(*chunk, "error")) {
        const std::string_view code =
            StringAt(*error, "code", StringAt(*error, "type", "server_error"));
        out += ResponsesErrorEvent(code, StringAt(*error, "message", "The upstream failed."),
                                   sequence_++);
        finished_ = true;
        return;
    }
    if (!started_) Start(*chunk, out);
    if (const json::object* usage = FindObject(*chunk, "usage")) usage_ = ResponsesUsageOf(*usage);
    const json::array* choices = FindArray(*chunk, "choices");
    if (choices == nullptr || choices->empty() || !(*choices)[0].is_object()) return;
    const json::object& choice = (*choices)[0].get_object();
    if (const json::object* delta = FindObject(choice, "delta")) {
        if (const std::string_view text = StringAt(*delta, "content"); !text.empty()) {
            if (!message_open_) OpenMessage(out);
            text_ += text;
            Emit("response.output_text.delta",
                 {{"item_id", message_id_},
                  {"output_index", message_index_},
                  {"content_index", 0},
                  {"delta", text}},
                 out);
        }
        if (const json::array* calls = FindArray(*delta, "tool_calls")) {
            for (const auto& value : *calls) {
                const json::object* call = value.if_object();
                if (call == nullptr) continue;
                const std::int64_t index = IntegerAt(*call, "index");
                const json::object* function = FindObject(*call, "function");
                auto it = tools_.find(index);
                if (it == tools_.end()) {
                    // A new call: the text before it is complete.
                    CloseMessage(out);
                    ToolCall tool;
                    tool.id = ResponsesId("fc_", id_, "_" + std::to_string(index));
                    tool.call_id = std::string(StringAt(*call, "id"));
                    tool.name = function ? std::string(StringAt(*function, "name")) : "";
                    tool.output_index = next_output_index_++;
                    it = tools_.emplace(index, std::move(tool)).first;
                    Emit("response.output_item.added",
                         {{"output_index", it->second.output_index},
                          {"item", FunctionCallItem(it->second.id, it->second.call_id,
                                                    it->second.name, "", "in_progress")}},
                         out);
                }
                if (function != nullptr) {
                    if (const std::string_view args = StringAt(*function, "arguments");
                        !args.empty()) {
                        it->second.arguments += args;
                        Emit("response.function_call_arguments.delta",
                             {{"item_id", it->second.id},
                              {"output_index", it->second.output_index},
                              {"delta", args}},
                             out);
                    }
                }
            }
        }
    }
    if (const std::string_view reason = StringAt(choice, "finish_reason"); !reason.empty()) {
        finish_reason_ = reason;
    }
}

}  // namespace switchyard::api
