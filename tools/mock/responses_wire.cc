#include "responses_wire.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "json_text.h"

namespace switchyard::mock::responses {
namespace json = boost::json;
namespace {

constexpr std::string_view kInvalidRequest = "invalid_request_error";

std::string_view View(const json::string& s) { return {s.data(), s.size()}; }

// Reads the parts of a request the mock acts on. Each Check* returns the error body of the first
// problem it finds, or nothing.
class RequestReader final {
  public:
    explicit RequestReader(ResponsesRequest& request) : request_(request) {}

    std::optional<std::string> CheckInput(const json::value& input);

  private:
    std::optional<std::string> CheckItem(const json::object& item, const std::string& path);
    std::optional<std::string> CheckMessage(const json::object& item, const std::string& path);
    std::optional<std::string> CheckPart(const json::value& part, const std::string& path);
    // A required string field `name` of `object`: missing or of another type is an error;
    // otherwise its characters count when `counted`.
    std::optional<std::string> RequireString(const json::object& object, std::string_view name,
                                             const std::string& path, bool counted);

    ResponsesRequest& request_;
};

std::optional<std::string> RequestReader::RequireString(const json::object& object,
                                                        std::string_view name,
                                                        const std::string& path, bool counted) {
    const std::string param = fmt::format("{}.{}", path, name);
    const auto field = object.find(name);
    if (field == object.end()) return openai::MissingParameterBody(param);
    const auto* text = field->value().if_string();
    if (text == nullptr) return openai::InvalidTypeBody(param, "a string", field->value().kind());
    if (counted) request_.input_chars += static_cast<std::int64_t>(text->size());
    return std::nullopt;
}

std::optional<std::string> RequestReader::CheckPart(const json::value& part,
                                                    const std::string& path) {
    const auto* fields = part.if_object();
    if (fields == nullptr) return openai::InvalidTypeBody(path, "an object", part.kind());
    const auto type = fields->find("type");
    if (type == fields->end()) return openai::MissingParameterBody(path + ".type");
    const auto* name = type->value().if_string();
    if (name == nullptr) {
        return openai::InvalidTypeBody(path + ".type", "a string", type->value().kind());
    }
    if (*name == "input_text" || *name == "output_text") {
        return RequireString(*fields, "text", path, true);
    }
    if (*name == "refusal") return RequireString(*fields, "refusal", path, false);
    if (*name == "input_image") {
        for (const std::string_view source : {"image_url", "file_id"}) {
            const auto field = fields->find(source);
            if (field != fields->end() && field->value().is_string()) return std::nullopt;
        }
        return openai::MissingParameterBody(path + ".image_url");
    }
    if (*name == "input_file") return std::nullopt;
    return openai::InvalidValueBody(
        path + ".type", View(*name),
        "'input_text', 'input_image', 'input_file', 'output_text', and 'refusal'");
}

std::optional<std::string> RequestReader::CheckMessage(const json::object& item,
                                                       const std::string& path) {
    const auto role = item.find("role");
    if (role == item.end()) return openai::MissingParameterBody(path + ".role");
    const auto* role_name = role->value().if_string();
    if (role_name == nullptr) {
        return openai::InvalidTypeBody(path + ".role", "a string", role->value().kind());
    }
    if (*role_name != "user" && *role_name != "assistant" && *role_name != "system" &&
        *role_name != "developer") {
        return openai::InvalidValueBody(path + ".role", View(*role_name),
                                        "'assistant', 'system', 'developer', and 'user'");
    }
    const auto content = item.find("content");
    if (content == item.end()) return openai::MissingParameterBody(path + ".content");
    if (const auto* text = content->value().if_string()) {
        request_.input_chars += static_cast<std::int64_t>(text->size());
        return std::nullopt;
    }
    const auto* parts = content->value().if_array();
    if (parts == nullptr) {
        return openai::InvalidTypeBody(path + ".content", "a string or an array of content parts",
                                       content->value().kind());
    }
    for (std::size_t i = 0; i < parts->size(); ++i) {
        if (auto error = CheckPart((*parts)[i], fmt::format("{}.content[{}]", path, i))) {
            return error;
        }
    }
    return std::nullopt;
}

std::optional<std::string> RequestReader::CheckItem(const json::object& item,
                                                    const std::string& path) {
    const auto type = item.find("type");
    if (type == item.end()) return CheckMessage(item, path);  // An easy input message.
    const auto* name = type->value().if_string();
    if (name == nullptr) {
        return openai::InvalidTypeBody(path + ".type", "a string", type->value().kind());
    }
    if (*name == "message") return CheckMessage(item, path);
    if (*name == "function_call") {
        if (auto error = RequireString(item, "call_id", path, false)) return error;
        if (auto error = RequireString(item, "name", path, false)) return error;
        return RequireString(item, "arguments", path, true);
    }
    if (*name == "function_call_output") {
        if (auto error = RequireString(item, "call_id", path, false)) return error;
        const auto output = item.find("output");
        if (output == item.end()) return openai::MissingParameterBody(path + ".output");
        if (const auto* text = output->value().if_string()) {
            request_.input_chars += static_cast<std::int64_t>(text->size());
            return std::nullopt;
        }
        const auto* parts = output->value().if_array();
        if (parts == nullptr) {
            return openai::InvalidTypeBody(
                path + ".output", "a string or an array of content parts", output->value().kind());
        }
        for (std::size_t i = 0; i < parts->size(); ++i) {
            if (auto error = CheckPart((*parts)[i], fmt::format("{}.output[{}]", path, i))) {
                return error;
            }
        }
        return std::nullopt;
    }
    // Reasoning items come back in stateless conversations (encrypted content); nothing to check.
    if (*name == "reasoning") return std::nullopt;
    return openai::InvalidValueBody(
        path + ".type", View(*name),
        "'message', 'function_call', 'function_call_output', and 'reasoning'");
}

std::optional<std::string> RequestReader::CheckInput(const json::value& input) {
    if (const auto* text = input.if_string()) {
        request_.input_chars += static_cast<std::int64_t>(text->size());
        return std::nullopt;
    }
    const auto* items = input.if_array();
    if (items == nullptr) {
        return openai::InvalidTypeBody("input", "a string or an array of input items",
                                       input.kind());
    }
    for (std::size_t i = 0; i < items->size(); ++i) {
        const std::string path = fmt::format("input[{}]", i);
        const auto* item = (*items)[i].if_object();
        if (item == nullptr) {
            return openai::InvalidTypeBody(path, "an input item (an object)", (*items)[i].kind());
        }
        if (auto error = CheckItem(*item, path)) return error;
    }
    return std::nullopt;
}

ParsedResponsesRequest Invalid(std::string body) {
    ParsedResponsesRequest result;
    result.status = 400;
    result.error_body = std::move(body);
    return result;
}

// A JSON number as the API writes it back: integers as integers, others in shortest form.
std::string NumberText(const json::value& value) {
    if (value.is_double()) return fmt::format("{}", value.get_double());
    return json::serialize(value);
}

void ReadEcho(const json::object& object, ResponsesRequest& request) {
    Echo& echo = request.echo;
    const auto field = [&object](std::string_view name) -> const json::value* {
        const auto it = object.find(name);
        return it == object.end() ? nullptr : &it->value();
    };
    if (const auto* value = field("instructions"); value && value->is_string()) {
        echo.instructions = json::serialize(*value);
    }
    if (const auto* value = field("max_output_tokens"); value && value->is_int64()) {
        echo.max_output_tokens = json::serialize(*value);
        if (value->get_int64() > 0) request.max_output_tokens = value->get_int64();
    }
    if (const auto* value = field("parallel_tool_calls"); value && value->is_bool()) {
        echo.parallel_tool_calls = value->get_bool() ? "true" : "false";
    }
    if (const auto* value = field("temperature"); value && value->is_number()) {
        echo.temperature = NumberText(*value);
    }
    if (const auto* value = field("top_p"); value && value->is_number()) {
        echo.top_p = NumberText(*value);
    }
    if (const auto* value = field("tool_choice");
        value && (value->is_string() || value->is_object())) {
        echo.tool_choice = json::serialize(*value);
    }
    if (const auto* value = field("metadata"); value && value->is_object()) {
        echo.metadata = json::serialize(*value);
    }
    if (const auto* value = field("tools"); value && value->is_array()) {
        echo.tools = json::serialize(*value);
    }
}

// The `function` tools of a request and what its `tool_choice` allows.
ToolChoice ChooseResponsesTool(const json::object& object) {
    std::vector<OfferedTool> offered;
    if (const json::value* tools = object.if_contains("tools"); tools && tools->is_array()) {
        for (const json::value& tool : tools->get_array()) {
            const json::object* fields = tool.if_object();
            if (fields == nullptr) continue;
            const json::value* type = fields->if_contains("type");
            const json::value* name = fields->if_contains("name");
            if (type == nullptr || *type != "function" || name == nullptr || !name->is_string()) {
                continue;
            }
            offered.push_back({name->get_string(), fields->if_contains("parameters")});
        }
    }
    ToolMode mode = ToolMode::kAuto;
    std::string_view forced_name;
    if (const json::value* choice = object.if_contains("tool_choice")) {
        if (*choice == "none") {
            mode = ToolMode::kNone;
        } else if (*choice == "required") {
            mode = ToolMode::kAny;
        } else if (const json::object* named = choice->if_object()) {
            const json::value* type = named->if_contains("type");
            const json::value* name = named->if_contains("name");
            if (type != nullptr && *type == "function" && name != nullptr && name->is_string()) {
                mode = ToolMode::kNamed;
                forced_name = name->get_string();
            }
        }
    }
    return ChooseTool(offered, mode, forced_name);
}

void AppendUsage(std::string& out, int input_tokens, int output_tokens) {
    fmt::format_to(std::back_inserter(out),
                   R"({{"input_tokens":{},"input_tokens_details":{{"cached_tokens":0,)"
                   R"("cache_write_tokens":0}},"output_tokens":{},"output_tokens_details":)"
                   R"({{"reasoning_tokens":0}},"total_tokens":{}}})",
                   input_tokens, output_tokens, input_tokens + output_tokens);
}

// An output_text part holding the whole reply, or nothing (`reply` null).
void AppendTextPart(std::string& out, const ReplyText* reply) {
    out += R"({"type":"output_text","text":)";
    if (reply != nullptr) {
        reply->AppendTextJson(out);
    } else {
        out += R"("")";
    }
    out += R"(,"annotations":[],"logprobs":[]})";
}

// The output item; `done` is the finished item, otherwise the item as output_item.added shows it.
void AppendItem(std::string& out, const Response& response, bool done) {
    if (response.call) {
        const FunctionCall& call = *response.call;
        out += R"({"type":"function_call","id":)";
        AppendJsonString(out, call.id);
        out += R"(,"call_id":)";
        AppendJsonString(out, call.call_id);
        out += R"(,"name":)";
        AppendJsonString(out, call.name);
        out += R"(,"arguments":)";
        AppendJsonString(out, done ? call.arguments : std::string_view());
        out += done ? R"(,"status":"completed"})" : R"(,"status":"in_progress"})";
        return;
    }
    out += R"({"type":"message","id":)";
    AppendJsonString(out, response.message_id);
    out += done ? R"(,"status":"completed")" : R"(,"status":"in_progress")";
    out += R"(,"role":"assistant","content":[)";
    if (done) AppendTextPart(out, response.reply);
    out += "]}";
}

// The response object; `completed` with its output and usage, otherwise as the stream opens it
// (in_progress, no output, usage null).
void AppendResponseObject(std::string& out, const Response& response, bool completed) {
    static const Echo kDefaults;
    const Echo& echo = response.echo != nullptr ? *response.echo : kDefaults;
    out += R"({"id":)";
    AppendJsonString(out, response.id);
    fmt::format_to(std::back_inserter(out), R"(,"object":"response","created_at":{},"status":)",
                   response.created_at);
    out += completed ? R"("completed")" : R"("in_progress")";
    out += R"(,"error":null,"incomplete_details":null,"instructions":)";
    out += echo.instructions;
    out += R"(,"max_output_tokens":)";
    out += echo.max_output_tokens;
    out += R"(,"model":)";
    AppendJsonString(out, response.model);
    out += R"(,"output":[)";
    if (completed) AppendItem(out, response, true);
    out += R"(],"parallel_tool_calls":)";
    out += echo.parallel_tool_calls;
    out += R"(,"previous_response_id":null,"temperature":)";
    out += echo.temperature;
    out += R"(,"tool_choice":)";
    out += echo.tool_choice;
    out += R"(,"tools":)";
    out += echo.tools;
    out += R"(,"top_p":)";
    out += echo.top_p;
    out += R"(,"usage":)";
    if (completed) {
        AppendUsage(out, response.input_tokens, response.OutputTokens());
    } else {
        out += "null";
    }
    out += R"(,"metadata":)";
    out += echo.metadata;
    out += "}";
}

}  // namespace

ParsedResponsesRequest ParseResponsesRequest(std::string_view body) {
    unsigned char scratch[4096];
    json::monotonic_resource resource(scratch, sizeof scratch);
    boost::system::error_code ec;
    const json::value root = json::parse(json::string_view(body.data(), body.size()), ec,
                                         json::storage_ptr(&resource), DeepJsonDocuments());
    if (ec) return Invalid(openai::UnparsableJsonBody());
    const auto* object = root.if_object();
    if (object == nullptr) return Invalid(openai::NotAnObjectBody(root.kind()));

    ParsedResponsesRequest result;
    ResponsesRequest& request = result.request;
    const auto model = object->find("model");
    if (model == object->end()) return Invalid(openai::MissingParameterBody("model"));
    const auto* model_name = model->value().if_string();
    if (model_name == nullptr) {
        return Invalid(openai::InvalidTypeBody("model", "a string", model->value().kind()));
    }
    request.model.assign(model_name->data(), model_name->size());

    const auto input = object->find("input");
    if (input == object->end()) return Invalid(openai::MissingParameterBody("input"));
    RequestReader reader(request);
    if (auto error = reader.CheckInput(input->value())) return Invalid(std::move(*error));

    if (const auto previous = object->find("previous_response_id");
        previous != object->end() && !previous->value().is_null()) {
        const auto* id = previous->value().if_string();
        if (id == nullptr) {
            return Invalid(openai::InvalidTypeBody("previous_response_id", "a string",
                                                   previous->value().kind()));
        }
        return Invalid(PreviousResponseBody(View(*id)));
    }

    if (const auto instructions = object->find("instructions"); instructions != object->end()) {
        const json::value& value = instructions->value();
        if (const auto* text = value.if_string()) {
            request.input_chars += static_cast<std::int64_t>(text->size());
        } else if (!value.is_null()) {
            return Invalid(openai::InvalidTypeBody("instructions", "a string", value.kind()));
        }
    }

    if (const auto stream = object->find("stream"); stream != object->end()) {
        const json::value& value = stream->value();
        if (value.is_bool()) {
            request.stream = value.get_bool();
        } else if (!value.is_null()) {
            return Invalid(openai::InvalidTypeBody("stream", "a boolean", value.kind()));
        }
    }

    ReadEcho(*object, request);
    request.tools = ChooseResponsesTool(*object);
    request.input_tokens =
        static_cast<int>(std::clamp<std::int64_t>(request.input_chars / 4, 1, 1 << 30));
    return result;
}

int Response::OutputTokens() const {
    if (call) return static_cast<int>(ArgumentFragments(call->arguments).size());
    return reply != nullptr ? reply->WordCount() : 0;
}

void AppendResponse(std::string& out, const Response& response) {
    AppendResponseObject(out, response, true);
}

ResponseEvents::ResponseEvents(const Response& response) : response_(response) {
    if (response.call) fragments_ = ArgumentFragments(response.call->arguments);
}

void ResponseEvents::Begin(std::string& out, std::string_view type, int sequence_number) {
    out += "event: ";
    out += type;
    out += "\ndata: {\"type\":\"";
    out += type;
    fmt::format_to(std::back_inserter(out), "\",\"sequence_number\":{}", sequence_number);
}

void ResponseEvents::End(std::string& out) { out += "}\n\n"; }

int ResponseEvents::OpeningCount() const { return response_.call ? 3 : 4; }

void ResponseEvents::AppendOpening(std::string& out, int step) const {
    switch (step) {
        case 0:
        case 1:
            Begin(out, step == 0 ? "response.created" : "response.in_progress", step);
            out += R"(,"response":)";
            AppendResponseObject(out, response_, false);
            break;
        case 2:
            Begin(out, "response.output_item.added", step);
            out += R"(,"output_index":0,"item":)";
            AppendItem(out, response_, false);
            break;
        default:
            Begin(out, "response.content_part.added", step);
            out += R"(,"item_id":)";
            AppendJsonString(out, response_.message_id);
            out += R"(,"output_index":0,"content_index":0,"part":)";
            AppendTextPart(out, nullptr);
            break;
    }
    End(out);
}

int ResponseEvents::DeltaCount() const { return response_.OutputTokens(); }

void ResponseEvents::AppendDelta(std::string& out, int index) const {
    const int sequence_number = OpeningCount() + index;
    if (response_.call) {
        Begin(out, "response.function_call_arguments.delta", sequence_number);
        out += R"(,"item_id":)";
        AppendJsonString(out, response_.call->id);
        out += R"(,"output_index":0,"delta":)";
        AppendJsonString(out, fragments_[static_cast<std::size_t>(index)]);
        End(out);
        return;
    }
    Begin(out, "response.output_text.delta", sequence_number);
    out += R"(,"item_id":)";
    AppendJsonString(out, response_.message_id);
    out += R"(,"output_index":0,"content_index":0,"delta":)";
    response_.reply->AppendWordJson(out, index);
    out += R"(,"logprobs":[])";
    End(out);
}

int ResponseEvents::ClosingCount() const { return response_.call ? 3 : 4; }

void ResponseEvents::AppendClosing(std::string& out, int step) const {
    const int sequence_number = OpeningCount() + DeltaCount() + step;
    // Both sequences end with output_item.done and response.completed.
    const int from_end = ClosingCount() - step;
    if (from_end == 2) {
        Begin(out, "response.output_item.done", sequence_number);
        out += R"(,"output_index":0,"item":)";
        AppendItem(out, response_, true);
    } else if (from_end == 1) {
        Begin(out, "response.completed", sequence_number);
        out += R"(,"response":)";
        AppendResponseObject(out, response_, true);
    } else if (response_.call) {
        Begin(out, "response.function_call_arguments.done", sequence_number);
        out += R"(,"item_id":)";
        AppendJsonString(out, response_.call->id);
        out += R"(,"name":)";
        AppendJsonString(out, response_.call->name);
        out += R"(,"output_index":0,"arguments":)";
        AppendJsonString(out, response_.call->arguments);
    } else {
        Begin(out, step == 0 ? "response.output_text.done" : "response.content_part.done",
              sequence_number);
        out += R"(,"item_id":)";
        AppendJsonString(out, response_.message_id);
        out += R"(,"output_index":0,"content_index":0,)";
        if (step == 0) {
            out += R"("text":)";
            response_.reply->AppendTextJson(out);
            out += R"(,"logprobs":[])";
        } else {
            out += R"("part":)";
            AppendTextPart(out, response_.reply);
        }
    }
    End(out);
}

void ResponseEvents::AppendError(std::string& out, int deltas_sent,
                                 std::optional<NamedError> error) const {
    const int status = error ? NamedErrorStatus(*error) : 500;
    const StreamError stream_error =
        StreamErrorOf(openai::ErrorBody(status, error, response_.model));
    Begin(out, "error", OpeningCount() + deltas_sent);
    out += R"(,"code":)";
    AppendJsonString(out, stream_error.code);
    out += R"(,"message":)";
    AppendJsonString(out, stream_error.message);
    out += R"(,"param":null)";
    End(out);
}

StreamError StreamErrorOf(std::string_view error_body) {
    StreamError result{"server_error", ""};
    boost::system::error_code ec;
    const json::value root =
        json::parse(json::string_view(error_body.data(), error_body.size()), ec);
    if (ec || !root.is_object()) return result;
    const auto error = root.get_object().find("error");
    if (error == root.get_object().end() || !error->value().is_object()) return result;
    const json::object& fields = error->value().get_object();
    for (const std::string_view name : {"code", "type"}) {
        const auto field = fields.find(name);
        if (field != fields.end() && field->value().is_string()) {
            result.code = View(field->value().get_string());
            break;
        }
    }
    if (const auto message = fields.find("message");
        message != fields.end() && message->value().is_string()) {
        result.message = View(message->value().get_string());
    }
    return result;
}

std::string PreviousResponseBody(std::string_view id) {
    return openai::ErrorEnvelope(
        fmt::format("Previous response with id '{}' not found. switchyard-mock is stateless and "
                    "stores no responses: send the whole conversation in `input` instead of "
                    "previous_response_id.",
                    id),
        kInvalidRequest, "previous_response_id", "previous_response_not_found");
}

}  // namespace switchyard::mock::responses
