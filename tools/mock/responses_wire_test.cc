#include "responses_wire.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <string>
#include <vector>

namespace switchyard::mock::responses {
namespace {
namespace json = boost::json;

json::object ErrorOf(const std::string& body) { return json::parse(body).at("error").as_object(); }

ParsedResponsesRequest Parse(std::string_view body) { return ParseResponsesRequest(body); }

// A JSON string's text; "" for another kind.
std::string Text(const json::value& value) {
    if (!value.is_string()) return {};
    return std::string(value.get_string().data(), value.get_string().size());
}

// Splits SSE text into (event name, parsed data) pairs, checking the framing on the way.
std::vector<std::pair<std::string, json::value>> Events(const std::string& text) {
    std::vector<std::pair<std::string, json::value>> events;
    std::size_t at = 0;
    while (at < text.size()) {
        const auto end = text.find("\n\n", at);
        EXPECT_NE(end, std::string::npos) << text.substr(at);
        if (end == std::string::npos) break;
        const std::string event = text.substr(at, end - at);
        at = end + 2;
        const auto newline = event.find('\n');
        EXPECT_TRUE(event.starts_with("event: ")) << event;
        EXPECT_EQ(event.compare(newline + 1, 6, "data: "), 0) << event;
        const std::string name = event.substr(7, newline - 7);
        json::value data = json::parse(event.substr(newline + 7));
        EXPECT_EQ(data.at("type").as_string(), name) << event;
        events.emplace_back(name, std::move(data));
    }
    return events;
}

TEST(ParseResponsesRequest, ReadsTheFieldsTheMockActsOn) {
    const auto parsed = Parse(
        R"({"model":"gpt-4.1","stream":true,"instructions":"1234","max_output_tokens":64,)"
        R"("temperature":0.5,"tools":[{"type":"web_search"},{"type":"function","name":"lookup",)"
        R"("parameters":{}},{"type":"function","name":"second"}],"metadata":{"k":"v"},)"
        R"("input":[{"role":"user","content":"12345678"},)"
        R"({"type":"message","role":"user","content":[{"type":"input_text","text":"abcd"},)"
        R"({"type":"input_image","image_url":"https://x/y.png"}]},)"
        R"({"type":"function_call","call_id":"c1","name":"lookup","arguments":"{}"},)"
        R"({"type":"function_call_output","call_id":"c1","output":"ok"},)"
        R"({"type":"reasoning","id":"rs_1","summary":[]},)"
        R"({"role":"assistant","content":[{"type":"output_text","text":"yo",)"
        R"("annotations":[]}]}]})");
    ASSERT_EQ(parsed.status, 0) << parsed.error_body;
    const ResponsesRequest& request = parsed.request;
    EXPECT_EQ(request.model, "gpt-4.1");
    EXPECT_TRUE(request.stream);
    EXPECT_EQ(request.input_chars, 4 + 8 + 4 + 2 + 2 + 2);
    EXPECT_EQ(request.input_tokens, 5);
    EXPECT_EQ(request.max_output_tokens, 64);
    ASSERT_TRUE(request.tools.candidate);
    EXPECT_EQ(request.tools.candidate->name, "lookup");  // The first *function* tool.
    EXPECT_EQ(request.tools.candidate->arguments, "{}");
    EXPECT_FALSE(request.tools.forced);
    EXPECT_EQ(request.echo.instructions, R"("1234")");
    EXPECT_EQ(request.echo.max_output_tokens, "64");
    EXPECT_EQ(request.echo.temperature, "0.5");
    EXPECT_EQ(request.echo.top_p, "1.0");
    EXPECT_EQ(request.echo.metadata, R"({"k":"v"})");
    EXPECT_TRUE(request.echo.tools.starts_with(R"([{"type":"web_search"},)"));
}

TEST(ParseResponsesRequest, StringInputAndDefaults) {
    const auto parsed = Parse(R"({"model":"m","input":"hi","stream":null,"instructions":null,)"
                              R"("previous_response_id":null})");
    ASSERT_EQ(parsed.status, 0) << parsed.error_body;
    EXPECT_FALSE(parsed.request.stream);
    EXPECT_EQ(parsed.request.input_tokens, 1);
    EXPECT_EQ(parsed.request.max_output_tokens, 0);
    EXPECT_FALSE(parsed.request.tools.candidate);
    EXPECT_EQ(parsed.request.echo.instructions, "null");
    EXPECT_EQ(parsed.request.echo.tools, "[]");
}

TEST(ParseResponsesRequest, ToolChoiceForcesACall) {
    const auto tools_with = [](std::string_view choice) {
        const auto parsed =
            Parse(std::string(R"({"model":"m","input":"x","tools":[{"type":"web_search"},)"
                              R"({"type":"function","name":"a","parameters":{"type":"object",)"
                              R"("properties":{"when":{"type":"string","format":"date"}}}},)"
                              R"({"type":"function","name":"b"}])") +
                  std::string(choice) + "}");
        EXPECT_EQ(parsed.status, 0) << parsed.error_body;
        return parsed.request.tools;
    };
    EXPECT_EQ(tools_with("").Call(false), nullptr);
    ASSERT_NE(tools_with("").Call(true), nullptr);
    EXPECT_EQ(tools_with("").Call(true)->arguments, R"({"when":"2024-01-01"})");
    const ToolChoice required = tools_with(R"(,"tool_choice":"required")");
    ASSERT_NE(required.Call(false), nullptr);
    EXPECT_EQ(required.Call(false)->name, "a");
    const ToolChoice named = tools_with(R"(,"tool_choice":{"type":"function","name":"b"})");
    ASSERT_NE(named.Call(false), nullptr);
    EXPECT_EQ(named.Call(false)->name, "b");
    EXPECT_EQ(tools_with(R"(,"tool_choice":"none")").Call(true), nullptr);
    EXPECT_EQ(tools_with(R"(,"tool_choice":"auto")").Call(false), nullptr);
}

TEST(ParseResponsesRequest, RejectsInvalidBodiesWithOpenAiEnvelopes) {
    EXPECT_TRUE(ErrorOf(Parse("{").error_body)
                    .at("message")
                    .as_string()
                    .starts_with("We could not parse the JSON body of your request."));
    EXPECT_EQ(ErrorOf(Parse(R"("x")").error_body).at("message"),
              "Invalid body: expected a JSON object, but got a string.");

    const auto expect = [](std::string_view body, std::string_view param, std::string_view code) {
        const auto parsed = Parse(body);
        EXPECT_EQ(parsed.status, 400) << body;
        if (parsed.status != 400) return;
        const auto error = ErrorOf(parsed.error_body);
        EXPECT_EQ(error.at("type"), "invalid_request_error") << body;
        EXPECT_EQ(Text(error.at("param")), param) << body << " " << parsed.error_body;
        EXPECT_EQ(Text(error.at("code")), code) << body << " " << parsed.error_body;
    };
    expect(R"({"input":"x"})", "model", "missing_required_parameter");
    expect(R"({"model":7,"input":"x"})", "model", "invalid_type");
    expect(R"({"model":"m"})", "input", "missing_required_parameter");
    expect(R"({"model":"m","input":{}})", "input", "invalid_type");
    expect(R"({"model":"m","input":[1]})", "input[0]", "invalid_type");
    expect(R"({"model":"m","input":[{"content":"x"}]})", "input[0].role",
           "missing_required_parameter");
    expect(R"({"model":"m","input":[{"role":"robot","content":"x"}]})", "input[0].role",
           "invalid_value");
    expect(R"({"model":"m","input":[{"role":"user"}]})", "input[0].content",
           "missing_required_parameter");
    expect(R"({"model":"m","input":[{"role":"user","content":5}]})", "input[0].content",
           "invalid_type");
    expect(R"({"model":"m","input":["ok",{"role":"user","content":[{"type":"input_text"}]}]})",
           "input[0]", "invalid_type");  // "ok" is not an item.
    expect(R"({"model":"m","input":[{"role":"user","content":[{"type":"input_text"}]}]})",
           "input[0].content[0].text", "missing_required_parameter");
    expect(R"({"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":1}]}]})",
           "input[0].content[0].text", "invalid_type");
    expect(R"({"model":"m","input":[{"role":"user","content":[{"type":"input_audio"}]}]})",
           "input[0].content[0].type", "invalid_value");
    expect(R"({"model":"m","input":[{"role":"user","content":[{"type":"input_image"}]}]})",
           "input[0].content[0].image_url", "missing_required_parameter");
    expect(R"({"model":"m","input":[{"type":"function_call","name":"f","arguments":"{}"}]})",
           "input[0].call_id", "missing_required_parameter");
    expect(R"({"model":"m","input":[{"type":"function_call","call_id":"c","name":"f",)"
           R"("arguments":{}}]})",
           "input[0].arguments", "invalid_type");
    expect(R"({"model":"m","input":[{"type":"function_call_output","call_id":"c"}]})",
           "input[0].output", "missing_required_parameter");
    expect(R"({"model":"m","input":[{"type":"item_reference","id":"msg_1"}]})", "input[0].type",
           "invalid_value");
    expect(R"({"model":"m","input":"x","previous_response_id":"resp_1"})", "previous_response_id",
           "previous_response_not_found");
    expect(R"({"model":"m","input":"x","previous_response_id":1})", "previous_response_id",
           "invalid_type");
    expect(R"({"model":"m","input":"x","instructions":["a"]})", "instructions", "invalid_type");
    expect(R"({"model":"m","input":"x","stream":"yes"})", "stream", "invalid_type");

    const auto previous =
        ErrorOf(Parse(R"({"model":"m","input":"x","previous_response_id":"resp_1"})").error_body);
    EXPECT_TRUE(previous.at("message").as_string().starts_with(
        "Previous response with id 'resp_1' not found."));
    EXPECT_NE(std::string_view(previous.at("message").as_string()).find("stores no responses"),
              std::string_view::npos);
}

struct Fixture {
    Echo echo;
    ReplyText reply{"gpt-x", std::nullopt};
    Response response;

    Fixture() {
        response.id = "resp_1";
        response.created_at = 1700000000;
        response.model = "gpt-x";
        response.echo = &echo;
        response.input_tokens = 7;
        response.message_id = "msg_1";
        response.reply = &reply;
    }
};

TEST(AppendResponse, TextAnswer) {
    Fixture f;
    f.echo.instructions = R"("be brief")";
    std::string body;
    AppendResponse(body, f.response);
    EXPECT_EQ(
        body,
        R"({"id":"resp_1","object":"response","created_at":1700000000,"status":"completed",)"
        R"("error":null,"incomplete_details":null,"instructions":"be brief",)"
        R"("max_output_tokens":null,"model":"gpt-x","output":[{"type":"message","id":"msg_1",)"
        R"("status":"completed",)"
        R"("role":"assistant","content":[{"type":"output_text","text":"Mock reply from gpt-x.",)"
        R"("annotations":[],"logprobs":[]}]}],"parallel_tool_calls":true,)"
        R"("previous_response_id":null,"temperature":1.0,"tool_choice":"auto","tools":[],)"
        R"("top_p":1.0,"usage":{"input_tokens":7,"input_tokens_details":{"cached_tokens":0,)"
        R"("cache_write_tokens":0},"output_tokens":4,"output_tokens_details":)"
        R"({"reasoning_tokens":0},"total_tokens":11},"metadata":{}})");
}

constexpr std::string_view kArguments = R"({"query":"value"})";

TEST(AppendResponse, FunctionCallAnswer) {
    Fixture f;
    f.response.call = FunctionCall{"fc_1", "call_1", "lookup", kArguments};
    std::string body;
    AppendResponse(body, f.response);
    const json::value answer = json::parse(body);
    const auto& output = answer.at("output").as_array();
    ASSERT_EQ(output.size(), 1U);
    EXPECT_EQ(json::serialize(output[0]),
              R"({"type":"function_call","id":"fc_1","call_id":"call_1","name":"lookup",)"
              R"("arguments":"{\"query\":\"value\"}","status":"completed"})");
    EXPECT_EQ(answer.at("usage").at("output_tokens"), 3);  // One per argument fragment.
    EXPECT_EQ(answer.at("usage").at("total_tokens"), 7 + 3);
}

TEST(ResponseEvents, TextStream) {
    Fixture f;
    const ReplyText two("gpt-x", 2);
    f.response.reply = &two;
    ResponseEvents events(f.response);
    std::string out;
    for (int i = 0; i < events.OpeningCount(); ++i) events.AppendOpening(out, i);
    for (int i = 0; i < events.DeltaCount(); ++i) events.AppendDelta(out, i);
    for (int i = 0; i < events.ClosingCount(); ++i) events.AppendClosing(out, i);
    const auto parsed = Events(out);
    std::vector<std::string> names;
    for (const auto& [name, data] : parsed) names.push_back(name);
    EXPECT_EQ(names,
              (std::vector<std::string>{"response.created", "response.in_progress",
                                        "response.output_item.added", "response.content_part.added",
                                        "response.output_text.delta", "response.output_text.delta",
                                        "response.output_text.done", "response.content_part.done",
                                        "response.output_item.done", "response.completed"}));
    for (std::size_t i = 0; i < parsed.size(); ++i) {
        EXPECT_EQ(parsed[i].second.at("sequence_number"), static_cast<std::int64_t>(i));
    }
    // The data line starts with type and sequence_number, byte for byte.
    EXPECT_TRUE(
        out.starts_with("event: response.created\ndata: {\"type\":\"response.created\","
                        "\"sequence_number\":0,\"response\":{\"id\":\"resp_1\","));

    const auto& created = parsed[0].second.at("response");
    EXPECT_EQ(created.at("status"), "in_progress");
    EXPECT_TRUE(created.at("output").as_array().empty());
    EXPECT_TRUE(created.at("usage").is_null());
    EXPECT_EQ(parsed[1].second.at("response"), created);
    EXPECT_EQ(json::serialize(parsed[2].second),
              R"({"type":"response.output_item.added","sequence_number":2,"output_index":0,)"
              R"("item":{"type":"message","id":"msg_1","status":"in_progress","role":"assistant",)"
              R"("content":[]}})");
    EXPECT_EQ(json::serialize(parsed[3].second),
              R"({"type":"response.content_part.added","sequence_number":3,"item_id":"msg_1",)"
              R"("output_index":0,"content_index":0,"part":{"type":"output_text","text":"",)"
              R"("annotations":[],"logprobs":[]}})");
    EXPECT_EQ(json::serialize(parsed[4].second),
              R"({"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1",)"
              R"("output_index":0,"content_index":0,"delta":"word1","logprobs":[]})");
    EXPECT_EQ(parsed[5].second.at("delta"), " word2");
    EXPECT_EQ(json::serialize(parsed[6].second),
              R"({"type":"response.output_text.done","sequence_number":6,"item_id":"msg_1",)"
              R"("output_index":0,"content_index":0,"text":"word1 word2","logprobs":[]})");
    EXPECT_EQ(parsed[7].second.at("part").at("text"), "word1 word2");
    EXPECT_EQ(parsed[8].second.at("item").at("status"), "completed");
    EXPECT_EQ(parsed[8].second.at("item").at("content").at(0).at("text"), "word1 word2");
    const auto& completed = parsed[9].second.at("response");
    EXPECT_EQ(completed.at("status"), "completed");
    EXPECT_EQ(completed.at("output").at(0), parsed[8].second.at("item"));
    EXPECT_EQ(completed.at("usage").at("output_tokens"), 2);
    // The completed response is the non-streaming answer.
    std::string body;
    AppendResponse(body, f.response);
    EXPECT_EQ(completed, json::parse(body));
}

TEST(ResponseEvents, FunctionCallStream) {
    Fixture f;
    f.response.call = FunctionCall{"fc_1", "call_1", "lookup", kArguments};
    ResponseEvents events(f.response);
    std::string out;
    for (int i = 0; i < events.OpeningCount(); ++i) events.AppendOpening(out, i);
    ASSERT_EQ(events.DeltaCount(), 3);
    for (int i = 0; i < events.DeltaCount(); ++i) events.AppendDelta(out, i);
    for (int i = 0; i < events.ClosingCount(); ++i) events.AppendClosing(out, i);
    const auto parsed = Events(out);
    std::vector<std::string> names;
    for (const auto& [name, data] : parsed) names.push_back(name);
    EXPECT_EQ(
        names,
        (std::vector<std::string>{
            "response.created", "response.in_progress", "response.output_item.added",
            "response.function_call_arguments.delta", "response.function_call_arguments.delta",
            "response.function_call_arguments.delta", "response.function_call_arguments.done",
            "response.output_item.done", "response.completed"}));
    EXPECT_EQ(json::serialize(parsed[2].second.at("item")),
              R"({"type":"function_call","id":"fc_1","call_id":"call_1","name":"lookup",)"
              R"("arguments":"","status":"in_progress"})");
    std::string arguments;
    for (std::size_t i = 3; i < 6; ++i) {
        EXPECT_EQ(parsed[i].second.at("item_id"), "fc_1");
        EXPECT_EQ(parsed[i].second.at("output_index"), 0);
        arguments += parsed[i].second.at("delta").as_string();
    }
    EXPECT_EQ(arguments, kArguments);
    EXPECT_EQ(json::serialize(parsed[6].second),
              R"({"type":"response.function_call_arguments.done","sequence_number":6,)"
              R"("item_id":"fc_1","name":"lookup","output_index":0,)"
              R"("arguments":"{\"query\":\"value\"}"})");
    EXPECT_EQ(Text(parsed[7].second.at("item").at("arguments")), kArguments);
    EXPECT_EQ(parsed[8].second.at("response").at("output").at(0).at("type"), "function_call");
}

TEST(ResponseEvents, ErrorEventTakesTheNumberOfTheDeltaItReplaces) {
    Fixture f;
    const ResponseEvents events(f.response);
    std::string out;
    events.AppendError(out, 0, NamedError::kServerOverloaded);
    EXPECT_EQ(out,
              "event: error\ndata: {\"type\":\"error\",\"sequence_number\":4,"
              "\"code\":\"server_is_overloaded\",\"message\":\"Our servers are currently "
              "overloaded. Please try again later.\",\"param\":null}\n\n");
    out.clear();
    events.AppendError(out, 2, std::nullopt);  // After two deltas: server_error's.
    const auto parsed = Events(out);
    ASSERT_EQ(parsed.size(), 1U);
    EXPECT_EQ(parsed[0].second.at("sequence_number"), 6);
    EXPECT_EQ(parsed[0].second.at("code"), "server_error");
}

TEST(ResponseEvents, EventsArePureFunctionsOfTheirPosition) {
    Fixture f;
    const ResponseEvents events(f.response);
    std::string first;
    std::string again;
    events.AppendDelta(first, 1);
    events.AppendOpening(again, 0);
    again.clear();
    events.AppendDelta(again, 1);
    EXPECT_EQ(first, again);
    EXPECT_NE(first.find("\"sequence_number\":5,"), std::string::npos) << first;
}

TEST(StreamErrorOf, CodeElseTypeAndMessage) {
    auto error = StreamErrorOf(openai::ErrorBody(500, std::nullopt, "m"));
    EXPECT_EQ(error.code, "server_error");  // code null: the type.
    EXPECT_EQ(error.message,
              "The server had an error while processing your request. Sorry about that!");
    error = StreamErrorOf(openai::ErrorBody(429, NamedError::kInsufficientQuota, "m"));
    EXPECT_EQ(error.code, "insufficient_quota");
    error = StreamErrorOf(openai::ErrorBody(503, std::nullopt, "m"));
    EXPECT_EQ(error.code, "server_is_overloaded");
    error = StreamErrorOf(openai::ErrorBody(529, std::nullopt, "m"));  // Anthropic's body.
    EXPECT_EQ(error.code, "overloaded_error");
    EXPECT_EQ(error.message, "Overloaded");
    EXPECT_EQ(StreamErrorOf("not json").code, "server_error");
}

}  // namespace
}  // namespace switchyard::mock::responses
