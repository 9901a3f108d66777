#include <boost/json.hpp>
#include <charconv>

#include "api/json_access.h"
#include "api/responses.h"
#include "api/responses_common.h"

namespace switchyard::api {

namespace json = boost::json;

json::object ChatAnswerToResponse(const json::object& completion, const json::object& request,
                                  std::int64_t created) {
    const std::string_view upstream_id = StringAt(completion, "id", "chatcmpl-0");
    json::array output;
    std::string_view finish_reason;
    if (const json::array* choices = FindArray(completion, "choices");
        choices != nullptr && !choices->empty() && (*choices)[0].is_object()) {
        const json::object& choice = (*choices)[0].get_object();
        finish_reason = StringAt(choice, "finish_reason");
        if (const json::object* message = FindObject(choice, "message")) {
            const json::value* content = Find(*message, "content");
            std::string text;
            if (content != nullptr && content->is_string()) {
                text = content->get_string();
            } else if (content != nullptr && content->is_array()) {
                for (const auto& part : content->get_array()) {
                    if (const json::object* p = part.if_object()) text += StringAt(*p, "text");
                }
            }
            if (!text.empty()) {
                output.push_back(
                    MessageItem(ResponsesId("msg_", upstream_id), text, false, "completed"));
            } else if (const std::string_view refusal = StringAt(*message, "refusal");
                       !refusal.empty()) {
                output.push_back(
                    MessageItem(ResponsesId("msg_", upstream_id), refusal, true, "completed"));
            }
            if (const json::array* calls = FindArray(*message, "tool_calls")) {
                for (std::size_t i = 0; i < calls->size(); ++i) {
                    const json::object* call = (*calls)[i].if_object();
                    if (call == nullptr) continue;
                    const json::object* function = FindObject(*call, "function");
                    output.push_back(FunctionCallItem(
                        ResponsesId("fc_", upstream_id, "_" + std::to_string(i)),
                        StringAt(*call, "id"), function ? StringAt(*function, "name") : "",
                        function ? StringAt(*function, "arguments", "{}") : "{}", "completed"));
                }
            }
        }
    }
    json::object response{{"id", ResponsesId("resp_", upstream_id)},
                          {"object", "response"},
                          {"created_at", created},
                          {"status", "completed"},
                          {"error", nullptr},
                          {"incomplete_details", nullptr},
                          {"model", StringAt(completion, "model")},
                          {"output", std::move(output)}};
    if (finish_reason == "length" || finish_reason == "content_filter") {
        response["status"] = "incomplete";
        response["incomplete_details"] = json::object{
            {"reason", finish_reason == "length" ? "max_output_tokens" : "content_filter"}};
    }
    for (auto& [key, value] : ResponseEcho(request)) response[key] = value;
    response["usage"] = ResponsesUsageOf(
        FindObject(completion, "usage") ? *FindObject(completion, "usage") : json::object());
    return response;
}

std::string ResponsesErrorEvent(std::string_view code, std::string_view message,
                                std::int64_t sequence_number) {
    return "event: error\ndata: " +
           json::serialize(json::object{{"type", "error"},
                                        {"sequence_number", sequence_number},
                                        {"code", code},
                                        {"message", message},
                                        {"param", nullptr}}) +
           "\n\n";
}

std::optional<std::int64_t> SequenceNumberOf(std::string_view data) {
    constexpr std::string_view kName = "\"sequence_number\":";
    const std::size_t at = data.find(kName);
    if (at == std::string_view::npos) return std::nullopt;
    std::size_t pos = at + kName.size();
    while (pos < data.size() && data[pos] == ' ') ++pos;
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(data.data() + pos, data.data() + data.size(), value);
    if (ec != std::errc() || end == data.data() + pos) return std::nullopt;
    return value;
}

}  // namespace switchyard::api
