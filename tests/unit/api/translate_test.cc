#include "api/translate.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "api/anthropic_wire.h"

namespace switchyard::api {
namespace translate_test {

namespace json = boost::json;
using core::ErrorKind;

json::object Obj(std::string_view text) { return json::parse(text).as_object(); }

json::object ToOpenAi(std::string_view anthropic) {
    auto result = AnthropicRequestToOpenAi(Obj(anthropic));
    if (auto* error = std::get_if<core::LocalError>(&result)) {
        ADD_FAILURE() << error->message;
        return {};
    }
    return std::get<json::object>(std::move(result));
}

json::object ToAnthropic(std::string_view openai, std::int64_t default_max_tokens = 4096) {
    auto result = OpenAiRequestToAnthropic(Obj(openai), default_max_tokens);
    if (auto* error = std::get_if<core::LocalError>(&result)) {
        ADD_FAILURE() << error->message;
        return {};
    }
    return std::get<json::object>(std::move(result));
}

core::LocalError RefusedToOpenAi(std::string_view anthropic) {
    auto result = AnthropicRequestToOpenAi(Obj(anthropic));
    if (!std::holds_alternative<core::LocalError>(result)) {
        ADD_FAILURE() << "translated: " << json::serialize(std::get<json::object>(result));
        return {};
    }
    return std::get<core::LocalError>(std::move(result));
}

// A successful OpenAI answer translated for an Anthropic client; a refusal fails the test.
json::object AnswerToAnthropic(const json::object& completion) {
    auto result = OpenAiResponseToAnthropic(completion);
    if (auto* error = std::get_if<core::LocalError>(&result)) {
        ADD_FAILURE() << error->message;
        return {};
    }
    return std::get<json::object>(std::move(result));
}

core::LocalError RefusedToAnthropic(std::string_view openai) {
    auto result = OpenAiRequestToAnthropic(Obj(openai), 1024);
    if (!std::holds_alternative<core::LocalError>(result)) {
        ADD_FAILURE() << "translated: " << json::serialize(std::get<json::object>(result));
        return {};
    }
    return std::get<core::LocalError>(std::move(result));
}

// Splits an SSE text into events: (event name, data).
std::vector<std::pair<std::string, std::string>> Events(std::string_view sse) {
    std::vector<std::pair<std::string, std::string>> events;
    std::size_t start = 0;
    while (start < sse.size()) {
        const std::size_t end = sse.find("\n\n", start);
        EXPECT_NE(end, std::string_view::npos) << "unterminated event";
        if (end == std::string_view::npos) {
            break;
        }
        std::string_view event = sse.substr(start, end - start);
        std::pair<std::string, std::string> parsed;
        while (!event.empty()) {
            const std::size_t line_end = event.find('\n');
            const std::string_view line = event.substr(0, line_end);
            if (line.starts_with("event: ")) {
                parsed.first = line.substr(7);
            } else if (line.starts_with("data: ")) {
                parsed.second = line.substr(6);
            } else {
                ADD_FAILURE() << "unexpected line: " << line;
            }
            event = line_end == std::string_view::npos ? "" : event.substr(line_end + 1);
        }
        events.push_back(std::move(parsed));
        start = end + 2;
    }
    return events;
}

// ------------------------------------------------------------------------------------------------
// Requests: Anthropic -> OpenAI

TEST(TranslateRequestTest, AnthropicToOpenAiBasics) {
    const json::object out = ToOpenAi(R"({
        "model": "claude-sonnet-4", "max_tokens": 256, "system": "Be brief.",
        "messages": [{"role": "user", "content": "Hi"},
                     {"role": "assistant", "content": [{"type": "text", "text": "Hello"}]},
                     {"role": "user", "content": [{"type": "text", "text": "Again",
                                                   "cache_control": {"type": "ephemeral"}}]}],
        "stop_sequences": ["END"], "temperature": 0.5, "top_p": 0.9, "stream": true,
        "metadata": {"user_id": "u-1"}})");
    EXPECT_EQ(out, Obj(R"({
        "model": "claude-sonnet-4",
        "messages": [{"role": "system", "content": "Be brief."},
                     {"role": "user", "content": "Hi"},
                     {"role": "assistant", "content": "Hello"},
                     {"role": "user", "content": "Again"}],
        "max_tokens": 256, "stop": ["END"], "temperature": 0.5, "top_p": 0.9, "stream": true,
        "stream_options": {"include_usage": true}, "user": "u-1"})"));
}

TEST(TranslateRequestTest, AnthropicSystemBlocksAndImages) {
    const json::object out = ToOpenAi(R"({
        "model": "m", "max_tokens": 10,
        "system": [{"type": "text", "text": "One"},
                   {"type": "text", "text": "Two", "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}},
            {"type": "image", "source": {"type": "url", "url": "https://x.test/a.jpg"}}]}]})");
    EXPECT_EQ(out.at("messages"), json::parse(R"([
        {"role": "system", "content": [{"type": "text", "text": "One"}, {"type": "text", "text": "Two"}]},
        {"role": "user", "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
            {"type": "image_url", "image_url": {"url": "https://x.test/a.jpg"}}]}])"));
}

TEST(TranslateRequestTest, AnthropicToolsToolUseAndResults) {
    const json::object out = ToOpenAi(R"({
        "model": "m", "max_tokens": 10,
        "tools": [{"name": "get_weather", "description": "Weather",
                   "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
                   "cache_control": {"type": "ephemeral"}}],
        "tool_choice": {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": true},
        "messages": [
            {"role": "user", "content": "Weather in Paris and Rome?"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "Rome"}}]},
            {"role": "user", "content": [
                {"type": "text", "text": "Here you go"},
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true,
                 "content": [{"type": "text", "text": "timeout"}]}]}]})");
    EXPECT_EQ(out.at("tools"), json::parse(R"([{"type": "function", "function": {
        "name": "get_weather", "description": "Weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}])"));
    EXPECT_EQ(out.at("tool_choice"),
              json::parse(R"({"type": "function", "function": {"name": "get_weather"}})"));
    EXPECT_EQ(out.at("parallel_tool_calls"), false);
    EXPECT_EQ(out.at("messages"), json::parse(R"([
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {"role": "assistant", "content": "Checking.", "tool_calls": [
            {"id": "toolu_1", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
            {"id": "toolu_2", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\":\"Rome\"}"}}]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "18C"},
        {"role": "tool", "tool_call_id": "toolu_2", "content": "Error: timeout"},
        {"role": "user", "content": "Here you go"}])"));
}

TEST(TranslateRequestTest, AnthropicToolUseOnlyHasNullContent) {
    const json::object out = ToOpenAi(R"({"model": "m", "max_tokens": 1, "messages": [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]}]})");
    EXPECT_EQ(out.at("messages"), json::parse(R"([
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "t", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "t", "content": ""}])"));
}

TEST(TranslateRequestTest, AnthropicToolChoiceMapping) {
    const std::pair<const char*, const char*> cases[] = {
        {R"({"type":"auto"})", R"("auto")"},
        {R"({"type":"any"})", R"("required")"},
        {R"({"type":"none"})", R"("none")"},
    };
    for (const auto& [in, expected] : cases) {
        const json::object out = ToOpenAi(
            std::string(R"({"model":"m","max_tokens":1,"messages":[],"tool_choice":)") + in + "}");
        EXPECT_EQ(out.at("tool_choice"), json::parse(expected)) << in;
        EXPECT_FALSE(out.contains("parallel_tool_calls"));
    }
}

TEST(TranslateRequestTest, AnthropicDisabledThinkingIsDropped) {
    const json::object out = ToOpenAi(
        R"({"model":"m","max_tokens":1,"messages":[],"thinking":{"type":"disabled"},"service_tier":"auto"})");
    EXPECT_FALSE(out.contains("thinking"));
    EXPECT_FALSE(out.contains("service_tier"));
}

TEST(TranslateRequestTest, AnthropicUntranslatableFeaturesAre400s) {
    const std::pair<const char*, const char*> cases[] = {
        {R"("thinking":{"type":"enabled","budget_tokens":1024})", "thinking"},
        {R"("top_k":5)", "top_k"},
        {R"("container":"c1")", "container"},
        {R"("mcp_servers":[{"type":"url","url":"https://m","name":"x"}])", "mcp_servers"},
        {R"("tools":[{"type":"web_search_20250305","name":"web_search"}])", "tools"},
        {R"("service_tier":"standard_only")", "service_tier"},
        {R"("unknown_param":1)", "unknown_param"},
        {R"("tool_choice":{"type":"weird"})", "tool_choice"},
        {R"("system":[{"type":"image"}])", "system"},
        {R"("stop_sequences":"END")", "stop_sequences"},
    };
    for (const auto& [field, param] : cases) {
        const core::LocalError error = RefusedToOpenAi(
            std::string(R"({"model":"m","max_tokens":1,"messages":[],)") + field + "}");
        EXPECT_EQ(error.kind, ErrorKind::kInvalidRequest) << field;
        EXPECT_EQ(error.param, param) << field;
        EXPECT_NE(error.message.find(param), std::string::npos) << error.message;
    }
}

TEST(TranslateRequestTest, AnthropicUntranslatableBlocksAre400s) {
    const std::pair<const char*, const char*> cases[] = {
        {R"({"role":"user","content":[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBE"}}]})",
         "Document"},
        {R"({"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"s"}]})",
         "Thinking"},
        {R"({"role":"assistant","content":[{"type":"redacted_thinking","data":"x"}]})", "Thinking"},
        {R"({"role":"user","content":[{"type":"search_result"}]})", "search_result"},
        {R"({"role":"user","content":[{"type":"image","source":{"type":"file","file_id":"f"}}]})",
         "file"},
        {R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{}}]}]})",
         "image"},
        {R"({"role":"user","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]})",
         "tool_use"},
        {R"({"role":"system","content":"x"})", "system"},
        {R"({"role":"user","content":7})", "content"},
    };
    for (const auto& [message, needle] : cases) {
        const core::LocalError error = RefusedToOpenAi(
            std::string(R"({"model":"m","max_tokens":1,"messages":[)") + message + "]}");
        EXPECT_EQ(error.kind, ErrorKind::kInvalidRequest);
        EXPECT_EQ(error.param, "messages");
        EXPECT_NE(error.message.find(needle), std::string::npos) << error.message;
    }
}

// ------------------------------------------------------------------------------------------------
// Requests: OpenAI -> Anthropic

TEST(TranslateRequestTest, OpenAiToAnthropicBasics) {
    const json::object out = ToAnthropic(R"({
        "model": "gpt-4o", "stream": true, "stream_options": {"include_usage": true},
        "messages": [{"role": "system", "content": "Be brief."},
                     {"role": "developer", "content": [{"type": "text", "text": "Use French."}]},
                     {"role": "user", "content": "Hi"},
                     {"role": "user", "content": [{"type": "text", "text": "there"}]},
                     {"role": "assistant", "content": "Bonjour"}],
        "max_tokens": 100, "max_completion_tokens": 200, "stop": "END", "temperature": 0.7,
        "top_p": 1, "user": "u-1", "n": 1, "presence_penalty": 0, "frequency_penalty": 0.0,
        "logprobs": false, "response_format": {"type": "text"}, "seed": null,
        "models": ["a", "b"], "fallbacks": []})");
    EXPECT_EQ(out, Obj(R"({
        "model": "gpt-4o", "system": "Be brief.\n\nUse French.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"},
                                                  {"type": "text", "text": "there"}]},
                     {"role": "assistant", "content": "Bonjour"}],
        "stream": true, "stop_sequences": ["END"], "temperature": 0.7, "top_p": 1,
        "metadata": {"user_id": "u-1"}, "max_tokens": 200})"));
}

TEST(TranslateRequestTest, OpenAiMaxTokensFallsBackToDefault) {
    EXPECT_EQ(ToAnthropic(R"({"model":"m","messages":[]})", 777).at("max_tokens"), 777);
    EXPECT_EQ(ToAnthropic(R"({"model":"m","messages":[],"max_tokens":5})").at("max_tokens"), 5);
    EXPECT_EQ(ToAnthropic(R"({"model":"m","messages":[],"stop":["a","b"]})").at("stop_sequences"),
              json::parse(R"(["a","b"])"));
}

TEST(TranslateRequestTest, OpenAiImages) {
    const json::object out = ToAnthropic(R"({"model":"m","messages":[{"role":"user","content":[
        {"type":"text","text":"Look"},
        {"type":"image_url","image_url":{"url":"data:image/jpeg;base64,/9j/4AAQ","detail":"high"}},
        {"type":"image_url","image_url":{"url":"https://x.test/cat.png"}}]}]})");
    EXPECT_EQ(out.at("messages"), json::parse(R"([{"role":"user","content":[
        {"type":"text","text":"Look"},
        {"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/4AAQ"}},
        {"type":"image","source":{"type":"url","url":"https://x.test/cat.png"}}]}])"));
}

TEST(TranslateRequestTest, OpenAiToolsToolCallsAndToolMessages) {
    const json::object out = ToAnthropic(R"({
        "model": "m", "parallel_tool_calls": false, "tool_choice": "required",
        "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
                   "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}},
                  {"type": "function", "function": {"name": "now"}}],
        "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
                {"id": "call_2", "type": "function", "function": {"name": "now", "arguments": ""}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "18C"},
            {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "noon"}]},
            {"role": "user", "content": "Thanks"}]})");
    EXPECT_EQ(out.at("tools"), json::parse(R"([
        {"name": "get_weather", "description": "Weather",
         "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}},
        {"name": "now", "input_schema": {"type": "object", "properties": {}}}])"));
    EXPECT_EQ(out.at("tool_choice"),
              json::parse(R"({"type": "any", "disable_parallel_tool_use": true})"));
    EXPECT_EQ(out.at("messages"), json::parse(R"([
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}},
            {"type": "tool_use", "id": "call_2", "name": "now", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": "18C"},
            {"type": "tool_result", "tool_use_id": "call_2", "content": [{"type": "text", "text": "noon"}]},
            {"type": "text", "text": "Thanks"}]}])"));
}

TEST(TranslateRequestTest, OpenAiToolResultsGoFirstInAMergedUserTurn) {
    const json::object out = ToAnthropic(R"({"model":"m","messages":[
        {"role":"assistant","content":"x","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},
        {"role":"user","content":"first"},
        {"role":"tool","tool_call_id":"c","content":"r"}]})");
    EXPECT_EQ(out.at("messages").at(1), json::parse(R"({"role":"user","content":[
        {"type":"tool_result","tool_use_id":"c","content":"r"},{"type":"text","text":"first"}]})"));
    EXPECT_EQ(out.at("messages").at(0).at("content").at(0),
              json::parse(R"({"type":"text","text":"x"})"));
}

TEST(TranslateRequestTest, OpenAiToolChoiceMapping) {
    const std::pair<const char*, const char*> cases[] = {
        {R"("auto")", R"({"type":"auto"})"},
        {R"("none")", R"({"type":"none"})"},
        {R"("required")", R"({"type":"any"})"},
        {R"({"type":"function","function":{"name":"f"}})", R"({"type":"tool","name":"f"})"},
    };
    for (const auto& [in, expected] : cases) {
        const json::object out =
            ToAnthropic(std::string(R"({"model":"m","messages":[],"tool_choice":)") + in + "}");
        EXPECT_EQ(out.at("tool_choice"), json::parse(expected)) << in;
    }
}

TEST(TranslateRequestTest, OpenAiUntranslatableFeaturesAre400s) {
    const std::pair<const char*, const char*> cases[] = {
        {R"("n":2)", "n"},
        {R"("logprobs":true)", "logprobs"},
        {R"("top_logprobs":3)", "top_logprobs"},
        {R"("response_format":{"type":"json_object"})", "response_format"},
        {R"("response_format":{"type":"json_schema","json_schema":{}})", "response_format"},
        {R"("audio":{"voice":"alloy","format":"wav"})", "audio"},
        {R"("modalities":["text","audio"])", "modalities"},
        {R"("functions":[{"name":"f"}])", "functions"},
        {R"("function_call":"auto")", "function_call"},
        {R"("logit_bias":{"50256":-100})", "logit_bias"},
        {R"("presence_penalty":0.5)", "presence_penalty"},
        {R"("frequency_penalty":-1)", "frequency_penalty"},
        {R"("seed":42)", "seed"},
        {R"("temperature":1.5)", "temperature"},
        {R"("store":true)", "store"},
        {R"("metadata":{"k":"v"})", "metadata"},
        {R"("reasoning_effort":"low")", "reasoning_effort"},
        {R"("max_tokens":"lots")", "max_tokens"},
        {R"("tools":[{"type":"custom","custom":{"name":"x"}}])", "tools"},
        {R"("tools":[{"type":"function","function":{"name":"f","strict":true}}])", "tools"},
        {R"("tool_choice":{"type":"allowed_tools"})", "tool_choice"},
    };
    for (const auto& [field, param] : cases) {
        const core::LocalError error =
            RefusedToAnthropic(std::string(R"({"model":"m","messages":[],)") + field + "}");
        EXPECT_EQ(error.kind, ErrorKind::kInvalidRequest) << field;
        EXPECT_EQ(error.param, param) << field;
        EXPECT_NE(error.message.find(param), std::string::npos) << error.message;
    }
}

TEST(TranslateRequestTest, OpenAiUntranslatableMessagesAre400s) {
    const std::pair<const char*, const char*> cases[] = {
        {R"({"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{not json"}}]})",
         "arguments"},
        {R"({"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"[1]"}}]})",
         "arguments"},
        {R"({"role":"user","content":[{"type":"input_audio","input_audio":{}}]})", "input_audio"},
        {R"({"role":"user","content":[{"type":"file","file":{}}]})", "file"},
        {R"({"role":"user","content":[{"type":"image_url","image_url":{"url":"ftp://x"}}]})",
         "image URL"},
        {R"({"role":"user","content":"hi","name":"alice"})", "name"},
        {R"({"role":"function","name":"f","content":"x"})", "name"},
        {R"({"role":"function","content":"x"})", "function"},
        {R"({"role":"tool","content":"x"})", "tool_call_id"},
        {R"({"role":"user","content":{"a":1}})", "content"},
    };
    for (const auto& [message, needle] : cases) {
        const core::LocalError error =
            RefusedToAnthropic(std::string(R"({"model":"m","messages":[)") + message + "]}");
        EXPECT_EQ(error.kind, ErrorKind::kInvalidRequest);
        EXPECT_EQ(error.param, "messages");
        EXPECT_NE(error.message.find(needle), std::string::npos) << error.message;
    }
}

TEST(TranslateRequestTest, MalformedRequestsAreRefusedNotCrashes) {
    const char* bodies[] = {
        R"({})",
        R"({"messages":"no"})",
        R"({"messages":[1,null,"x"]})",
        R"({"messages":[{"role":"user","content":[1,{"type":7}]}]})",
        R"({"messages":[{"role":"assistant","tool_calls":[null,{"function":3}]}]})",
        R"({"messages":[],"tools":[null],"tool_choice":3})",
        R"({"messages":[],"tools":"x"})",
        R"({"messages":[],"stream":"yes"})",
        R"({"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png,abc"}}]}]})",
    };
    for (const char* body : bodies) {
        const json::object request = Obj(body);
        EXPECT_TRUE(std::holds_alternative<core::LocalError>(AnthropicRequestToOpenAi(request)))
            << body;
        EXPECT_TRUE(std::holds_alternative<core::LocalError>(OpenAiRequestToAnthropic(request, 10)))
            << body;
    }
}

// ------------------------------------------------------------------------------------------------
// Responses

TEST(TranslateResponseTest, AnthropicToOpenAiText) {
    const json::object out = AnthropicResponseToOpenAi(Obj(R"({
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4",
        "content": [{"type": "text", "text": "Hello"}, {"type": "text", "text": " world"}],
        "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 100,
                  "cache_creation_input_tokens": 20}})"),
                                                       1700000000);
    EXPECT_EQ(out, Obj(R"({
        "id": "msg_01", "object": "chat.completion", "created": 1700000000,
        "model": "claude-sonnet-4",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello world",
                                             "refusal": null},
                     "logprobs": null, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 130, "completion_tokens": 5, "total_tokens": 135,
                  "prompt_tokens_details": {"cached_tokens": 100}}})"));
}

TEST(TranslateResponseTest, AnthropicToOpenAiToolUse) {
    const json::object out = AnthropicResponseToOpenAi(Obj(R"({
        "id": "msg_02", "model": "c", "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                     "input": {"city": "Paris"}}],
        "usage": {"input_tokens": 3, "output_tokens": 4}})"),
                                                       1700000001);
    EXPECT_EQ(out.at("created"), 1700000001);
    EXPECT_EQ(out.at("choices").at(0), json::parse(R"({"index": 0, "message": {
        "role": "assistant", "content": null, "refusal": null, "tool_calls": [
            {"id": "toolu_1", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
        "logprobs": null, "finish_reason": "tool_calls"})"));
    EXPECT_EQ(out.at("usage"), json::parse(R"({"prompt_tokens": 3, "completion_tokens": 4,
        "total_tokens": 7, "prompt_tokens_details": {"cached_tokens": 0}})"));
}

TEST(TranslateResponseTest, AnthropicStopReasonsToFinishReasons) {
    const std::pair<const char*, const char*> cases[] = {
        {"end_turn", "stop"},          {"stop_sequence", "stop"},
        {"max_tokens", "length"},      {"tool_use", "tool_calls"},
        {"refusal", "content_filter"}, {"model_context_window_exceeded", "length"},
    };
    for (const auto& [stop_reason, finish_reason] : cases) {
        json::object message = Obj(R"({"id":"m","content":[{"type":"text","text":"x"}]})");
        message["stop_reason"] = stop_reason;
        EXPECT_EQ(
            AnthropicResponseToOpenAi(message, 1700000000).at("choices").at(0).at("finish_reason"),
            finish_reason);
    }
}

TEST(TranslateResponseTest, OpenAiToAnthropicTextAndToolCalls) {
    const json::object out = AnswerToAnthropic(Obj(R"({
        "id": "chatcmpl-9", "object": "chat.completion", "created": 1, "model": "gpt-4o",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Let me check.",
            "tool_calls": [{"id": "call_1", "type": "function",
                            "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
            "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 7, "total_tokens": 127,
                  "prompt_tokens_details": {"cached_tokens": 100}}})"));
    EXPECT_EQ(out, Obj(R"({
        "id": "msg_chatcmpl-9", "type": "message", "role": "assistant", "model": "gpt-4o",
        "content": [{"type": "text", "text": "Let me check."},
                    {"type": "tool_use", "id": "call_1", "name": "get_weather",
                     "input": {"city": "Paris"}}],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 20, "output_tokens": 7, "cache_read_input_tokens": 100}})"));
}

TEST(TranslateResponseTest, OpenAiFinishReasonsToStopReasons) {
    const std::pair<const char*, const char*> cases[] = {
        {"stop", "end_turn"},
        {"length", "max_tokens"},
        {"tool_calls", "tool_use"},
        {"content_filter", "refusal"},
    };
    for (const auto& [finish_reason, stop_reason] : cases) {
        json::object completion = Obj(R"({"id":"c","choices":[{"message":{"content":""}}]})");
        completion["choices"].as_array()[0].as_object()["finish_reason"] = finish_reason;
        const json::object out = AnswerToAnthropic(completion);
        EXPECT_EQ(out.at("stop_reason"), stop_reason);
        EXPECT_TRUE(out.at("content").as_array().empty());  // no empty text block
    }
}

TEST(TranslateResponseTest, MalformedResponsesDoNotCrash) {
    const char* bodies[] = {
        R"({})", R"({"choices":7,"usage":"x","content":3})",
        R"({"choices":[null],"content":[null,{"type":"tool_use"}]})",
        R"({"choices":[{"message":{"tool_calls":[{"function":{"arguments":"{"}}]}}]})"};
    for (const char* body : bodies) {
        const json::object in = Obj(body);
        EXPECT_EQ(AnthropicResponseToOpenAi(in, 1700000000).at("object"), "chat.completion");
        EXPECT_EQ(AnswerToAnthropic(in).at("type"), "message");
    }
}

TEST(TranslateResponseTest, OpenAiContentPartsAnthropicCanExpress) {
    const json::object out = AnswerToAnthropic(Obj(R"({"id":"c","choices":[{"message":{
        "content":[{"type":"text","text":"Hi"},{"type":"text","text":""},
                   {"type":"refusal","refusal":"No"}]},"finish_reason":"stop"}]})"));
    EXPECT_EQ(out.at("content"),
              json::parse(R"([{"type":"text","text":"Hi"},{"type":"text","text":"No"}])"));
}

// Content Anthropic cannot express used to be dropped (the text before it kept, the answer passed
// on as whole); now the answer fails as an upstream protocol error naming what was refused.
TEST(TranslateResponseTest, OpenAiContentAnthropicCannotExpressFailsTheAnswer) {
    const std::pair<const char*, const char*> cases[] = {
        {R"({"id":"c","choices":[{"message":{"content":[{"type":"text","text":"Hi"},
            {"type":"audio","audio":{"data":"AAAA"}}]},"finish_reason":"stop"}]})",
         "`audio`"},
        {R"({"id":"c","choices":[{"message":{"content":[
            {"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]}}]})",
         "`image_url`"},
        {R"({"id":"c","choices":[{"message":{"content":[7]}}]})", "``"},
        {R"({"id":"c","choices":[{"message":{"content":{"text":"Hi"}}}]})", "neither a string"},
    };
    for (const auto& [body, named] : cases) {
        const auto result = OpenAiResponseToAnthropic(Obj(body));
        const auto* error = std::get_if<core::LocalError>(&result);
        ASSERT_NE(error, nullptr) << body;
        EXPECT_EQ(error->kind, ErrorKind::kUpstreamProtocol) << body;
        EXPECT_EQ(core::StatusOf(error->kind), 502u);
        EXPECT_TRUE(error->param.empty()) << error->param;  // not the client's parameter
        EXPECT_NE(error->message.find(named), std::string::npos) << error->message;
    }
}

// ------------------------------------------------------------------------------------------------
// Errors

TEST(TranslateErrorTest, OpenAiErrorToAnthropicKeepsMessageAndTypesByStatus) {
    EXPECT_EQ(
        json::parse(OpenAiErrorToAnthropic(
            R"({"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}})",
            429)),
        json::parse(
            R"({"type":"error","error":{"type":"rate_limit_error","message":"Rate limit reached"}})"));
    EXPECT_EQ(json::parse(OpenAiErrorToAnthropic(R"({"error":{"message":"bad key"}})", 401))
                  .at("error")
                  .at("type"),
              "authentication_error");
    const json::value generic = json::parse(OpenAiErrorToAnthropic("<html>oops</html>", 502));
    EXPECT_EQ(generic.at("error").at("type"), "api_error");
    EXPECT_NE(std::string(generic.at("error").at("message").as_string()).find("502"),
              std::string::npos);
}

TEST(TranslateErrorTest, AnthropicErrorToOpenAiKeepsTypeAndCode) {
    EXPECT_EQ(
        json::parse(AnthropicErrorToOpenAi(
            R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"})",
            529)),
        json::parse(
            R"({"error":{"message":"Overloaded","type":"overloaded_error","param":null,"code":null}})"));
    EXPECT_EQ(
        json::parse(AnthropicErrorToOpenAi(
            R"({"type":"error","error":{"type":"rate_limit_error","message":"Spend limit","details":{"error_code":"enforced_spend_limit_reached"}}})",
            429)),
        json::parse(
            R"({"error":{"message":"Spend limit","type":"rate_limit_error","param":null,"code":"enforced_spend_limit_reached"}})"));
    const json::value generic = json::parse(AnthropicErrorToOpenAi("upstream connect error", 503));
    EXPECT_EQ(generic.at("error").at("type"), "api_error");  // no documented type of its own
    EXPECT_TRUE(generic.at("error").at("code").is_null());
    EXPECT_NE(std::string(generic.at("error").at("message").as_string()).find("503"),
              std::string::npos);
    EXPECT_NO_THROW(json::parse(AnthropicErrorToOpenAi("", 0)));
    EXPECT_NO_THROW(json::parse(OpenAiErrorToAnthropic("[1,2]", 0)));
}

TEST(AnthropicWireTest, RendersLocalErrorsByStatus) {
    const std::pair<ErrorKind, const char*> kinds[] = {
        {ErrorKind::kMalformedJson, "invalid_request_error"},
        {ErrorKind::kInvalidRequest, "invalid_request_error"},
        {ErrorKind::kUnauthorized, "authentication_error"},
        {ErrorKind::kForbidden, "permission_error"},
        {ErrorKind::kModelNotFound, "not_found_error"},
        {ErrorKind::kMethodNotAllowed, "invalid_request_error"},
        {ErrorKind::kPayloadTooLarge, "request_too_large"},
        {ErrorKind::kUpstreamUnreachable, "api_error"},
        {ErrorKind::kUnavailable, "api_error"},
        {ErrorKind::kUpstreamTimeout, "timeout_error"},
        {ErrorKind::kInternal, "api_error"},
    };
    for (const auto& [kind, type] : kinds) {
        const LocalReply reply = RenderAnthropicError({kind, "msg \"q\"", "p"});
        EXPECT_EQ(reply.status, core::StatusOf(kind));
        EXPECT_EQ(json::parse(reply.body),
                  json::parse(std::string(R"({"type":"error","error":{"type":")") + type +
                              R"(","message":"msg \"q\""}})"));
    }
}

TEST(AnthropicWireTest, StatusOverrideChoosesTheType) {
    const std::pair<unsigned, const char*> statuses[] = {
        {402, "billing_error"},    {422, "invalid_request_error"},
        {429, "rate_limit_error"}, {529, "overloaded_error"},
        {500, "api_error"},        {418, "invalid_request_error"},
        {409, "conflict_error"},   {503, "api_error"},
    };
    for (const auto& [status, type] : statuses) {
        core::LocalError error{ErrorKind::kAllAttemptsFailed, "failed", ""};
        error.status = status;
        const LocalReply reply = RenderAnthropicError(error);
        EXPECT_EQ(reply.status, status);
        EXPECT_EQ(json::parse(reply.body).at("error").at("type"), type);
    }
}

TEST(AnthropicWireTest, AllAttemptsFailedListsEachAttempt) {
    core::LocalError error{ErrorKind::kAllAttemptsFailed, "Every deployment failed.", ""};
    error.status = 429;
    error.attempts = {{"g", "d1", 429, "rate_limited", "req_1", 0},
                      {"g", "d2", 0, "connect", "", 250}};
    const LocalReply reply = RenderAnthropicError(error);
    EXPECT_EQ(json::parse(reply.body), json::parse(R"({"type":"error","error":{
        "type":"rate_limit_error","message":"Every deployment failed.","attempts":[
        {"model_group":"g","deployment":"d1","error_class":"rate_limited",
         "upstream_request_id":"req_1","wait_ms":0,"status":429},
        {"model_group":"g","deployment":"d2","error_class":"connect",
         "upstream_request_id":"","wait_ms":250,"status":null}]}})"));
}

// ------------------------------------------------------------------------------------------------
// Streams: Anthropic -> OpenAI

// docs/providers.md#streams: anthropic-sdk-python tests/lib/streaming/fixtures/basic_response.txt.
const std::pair<const char*, const char*> kAnthropicBasicStream[] = {
    {"message_start",
     R"({"type":"message_start","message":{"id":"msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK","type":"message","role":"assistant","content":[],"model":"claude-3-opus-latest","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":11,"output_tokens":1}}})"},
    {"content_block_start",
     R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"},
    {"ping", R"({"type": "ping"})"},
    {"content_block_delta",
     R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}})"},
    {"content_block_stop", R"({"type":"content_block_stop","index":0})"},
    {"message_delta",
     R"({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":6}})"},
    {"message_stop", R"({"type":"message_stop"})"},
};

std::string Chunk(std::string_view choices_and_usage) {
    return R"(data: {"id":"msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK","object":"chat.completion.chunk","created":1700000000,"model":"claude-3-opus-latest",)" +
           std::string(choices_and_usage) + "}\n\n";
}

TEST(TranslateStreamTest, AnthropicFixtureToOpenAiChunksWithUsage) {
    AnthropicToOpenAiStream stream(true, 1700000000);
    std::string out;
    for (const auto& [name, data] : kAnthropicBasicStream) {
        stream.Feed(name, data, out);
    }
    const std::string expected =
        Chunk(
            R"("choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null)") +
        Chunk(
            R"("choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}],"usage":null)") +
        Chunk(
            R"("choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null)") +
        Chunk(
            R"("choices":[],"usage":{"prompt_tokens":11,"completion_tokens":6,"total_tokens":17,"prompt_tokens_details":{"cached_tokens":0}})") +
        "data: [DONE]\n\n";
    EXPECT_EQ(out, expected);
}

TEST(TranslateStreamTest, AnthropicFixtureWithoutUsageOrEventNames) {
    AnthropicToOpenAiStream stream(false, 1700000000);
    std::string out;
    for (const auto& [name, data] : kAnthropicBasicStream) {
        stream.Feed("", data, out);  // the type inside data names the event
    }
    const auto events = Events(out);
    ASSERT_EQ(events.size(), 4u);
    EXPECT_EQ(json::parse(events[1].second).at("choices").at(0).at("delta"),
              json::parse(R"({"content":"Hello"})"));
    EXPECT_FALSE(json::parse(events[2].second).as_object().contains("usage"));
    EXPECT_EQ(events[3].second, "[DONE]");
    for (const auto& [name, data] : events) {
        EXPECT_EQ(name, "");  // OpenAI chunks have no event line
    }
}

TEST(TranslateStreamTest, AnthropicToolUseToOpenAiToolCallChunks) {
    AnthropicToOpenAiStream stream(false, 5);
    std::string out;
    const std::pair<const char*, const char*> events[] = {
        {"message_start",
         R"({"type":"message_start","message":{"id":"msg_1","model":"c","usage":{"input_tokens":20,"output_tokens":1}}})"},
        {"content_block_start",
         R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"},
        {"content_block_delta",
         R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Checking"}})"},
        {"content_block_stop", R"({"type":"content_block_stop","index":0})"},
        {"content_block_start",
         R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_a","name":"get_weather","input":{}}})"},
        {"content_block_delta",
         R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}})"},
        {"content_block_delta",
         R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"locati"}})"},
        {"content_block_delta",
         R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"on\":\"Paris\"}"}})"},
        {"content_block_stop", R"({"type":"content_block_stop","index":1})"},
        {"content_block_start",
         R"({"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_b","name":"now","input":{}}})"},
        {"content_block_delta",
         R"({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{}"}})"},
        {"content_block_stop", R"({"type":"content_block_stop","index":2})"},
        {"message_delta",
         R"({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}})"},
        {"message_stop", R"({"type":"message_stop"})"},
    };
    for (const auto& [name, data] : events) {
        stream.Feed(name, data, out);
    }
    const auto chunks = Events(out);
    std::vector<json::value> deltas;
    for (const auto& [name, data] : chunks) {
        if (data == "[DONE]") {
            continue;
        }
        const json::value chunk = json::parse(data);
        EXPECT_EQ(chunk.at("id"), "msg_1");
        EXPECT_EQ(chunk.at("created"), 5);
        deltas.push_back(chunk.at("choices").at(0));
    }
    ASSERT_EQ(deltas.size(), 8u);
    EXPECT_EQ(deltas[2].at("delta"), json::parse(R"({"tool_calls":[{"index":0,"id":"toolu_a",
        "type":"function","function":{"name":"get_weather","arguments":""}}]})"));
    EXPECT_EQ(deltas[3].at("delta"),
              json::parse(R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"locati"}}]})"));
    EXPECT_EQ(
        deltas[4].at("delta"),
        json::parse(R"({"tool_calls":[{"index":0,"function":{"arguments":"on\":\"Paris\"}"}}]})"));
    EXPECT_EQ(deltas[5].at("delta"), json::parse(R"({"tool_calls":[{"index":1,"id":"toolu_b",
        "type":"function","function":{"name":"now","arguments":""}}]})"));
    EXPECT_EQ(deltas[6].at("delta"),
              json::parse(R"({"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]})"));
    EXPECT_EQ(deltas[7].at("finish_reason"), "tool_calls");
    EXPECT_EQ(chunks.back().second, "[DONE]");
}

TEST(TranslateStreamTest, AnthropicErrorEventToOpenAiErrorChunk) {
    AnthropicToOpenAiStream stream(true, 1700000000);
    std::string out;
    stream.Feed("message_start", kAnthropicBasicStream[0].second, out);
    out.clear();
    stream.Feed("error",
                R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})",
                out);
    EXPECT_EQ(
        out,
        "data: {\"error\":{\"message\":\"Overloaded\",\"type\":\"overloaded_error\",\"param\":null,"
        "\"code\":null}}\n\n");
    out.clear();
    stream.Feed("message_stop", R"({"type":"message_stop"})", out);
    EXPECT_EQ(out, "");  // nothing after the error
}

TEST(TranslateStreamTest, AnthropicMalformedEventsDoNotCrash) {
    const char* inputs[] = {"not json",
                            "[]",
                            "{}",
                            R"({"type":"content_block_delta"})",
                            R"({"type":"content_block_start","content_block":7})",
                            R"({"type":"message_start","message":{"usage":"x"}})"};
    for (const char* data : inputs) {
        AnthropicToOpenAiStream stream(true, 1700000000);
        std::string out;
        stream.Feed("", data, out);
        stream.Feed("content_block_delta", data, out);
        stream.Feed("message_delta", data, out);
        for (const auto& [name, event] : Events(out)) {
            EXPECT_NO_THROW(json::parse(event)) << event;
        }
    }
    AnthropicToOpenAiStream stream(false, 1700000000);
    std::string out;
    stream.Feed("message_start", "{broken", out);
    EXPECT_EQ(json::parse(Events(out).at(0).second).at("error").at("type"), "api_error");
}

// ------------------------------------------------------------------------------------------------
// Streams: OpenAI -> Anthropic

std::string OpenAiChunk(std::string_view delta, std::string_view finish = "null") {
    return R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":)" +
           std::string(delta) + R"(,"logprobs":null,"finish_reason":)" + std::string(finish) +
           "}],\"usage\":null}";
}

TEST(TranslateStreamTest, OpenAiTextStreamWithUsageToAnthropicEvents) {
    OpenAiToAnthropicStream stream;
    std::string out;
    stream.Feed("", OpenAiChunk(R"({"role":"assistant","content":""})"), out);
    stream.Feed("", OpenAiChunk(R"({"content":"Hello"})"), out);
    stream.Feed("", OpenAiChunk(R"({"content":" world"})"), out);
    stream.Feed("", OpenAiChunk("{}", R"("stop")"), out);
    stream.Feed(
        "",
        R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":2,"total_tokens":14,"prompt_tokens_details":{"cached_tokens":4}}})",
        out);
    stream.Feed("", "[DONE]", out);
    const std::string expected =
        "event: message_start\n"
        R"(data: {"type":"message_start","message":{"id":"msg_chatcmpl-1","type":"message","role":"assistant","content":[],"model":"gpt-4o","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}})"
        "\n\n"
        "event: content_block_start\n"
        R"(data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"
        "\n\n"
        "event: content_block_delta\n"
        R"(data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}})"
        "\n\n"
        "event: content_block_delta\n"
        R"(data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" world"}})"
        "\n\n"
        "event: content_block_stop\n"
        R"(data: {"type":"content_block_stop","index":0})"
        "\n\n"
        "event: message_delta\n"
        R"(data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2,"input_tokens":8,"cache_read_input_tokens":4}})"
        "\n\n"
        "event: message_stop\n"
        R"(data: {"type":"message_stop"})"
        "\n\n";
    EXPECT_EQ(out, expected);
}

TEST(TranslateStreamTest, OpenAiToolCallStreamToAnthropicEvents) {
    OpenAiToAnthropicStream stream;
    std::string out;
    stream.Feed("", OpenAiChunk(R"({"role":"assistant","content":"Let me check."})"), out);
    stream.Feed(
        "",
        OpenAiChunk(
            R"({"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]})"),
        out);
    stream.Feed("", OpenAiChunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]})"),
                out);
    stream.Feed(
        "",
        OpenAiChunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"ty\":\"Paris\"}"}}]})"),
        out);
    stream.Feed(
        "",
        OpenAiChunk(
            R"({"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"now","arguments":"{}"}}]})"),
        out);
    stream.Feed("", OpenAiChunk("{}", R"("tool_calls")"), out);
    stream.Feed("", "[DONE]", out);
    std::vector<json::value> events;
    for (const auto& [name, data] : Events(out)) {
        json::value event = json::parse(data);
        EXPECT_EQ(event.at("type").as_string(), name);
        events.push_back(std::move(event));
    }
    const char* expected[] = {
        R"({"type":"message_start","message":{"id":"msg_chatcmpl-1","type":"message","role":"assistant","content":[],"model":"gpt-4o","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}})",
        R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})",
        R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me check."}})",
        R"({"type":"content_block_stop","index":0})",
        R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"call_a","name":"get_weather","input":{}}})",
        R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"ci"}})",
        R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"ty\":\"Paris\"}"}})",
        R"({"type":"content_block_stop","index":1})",
        R"({"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"call_b","name":"now","input":{}}})",
        R"({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{}"}})",
        R"({"type":"content_block_stop","index":2})",
        R"({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":0}})",
        R"({"type":"message_stop"})",
    };
    ASSERT_EQ(events.size(), std::size(expected));
    for (std::size_t i = 0; i < events.size(); ++i) {
        EXPECT_EQ(events[i], json::parse(expected[i])) << i;
    }
}

TEST(TranslateStreamTest, OpenAiFinishReasonsInStreams) {
    const std::pair<const char*, const char*> cases[] = {
        {R"("length")", "max_tokens"},
        {R"("content_filter")", "refusal"},
        {R"("stop")", "end_turn"},
    };
    for (const auto& [finish, stop_reason] : cases) {
        OpenAiToAnthropicStream stream;
        std::string out;
        stream.Feed("", OpenAiChunk(R"({"content":"x"})", finish), out);
        stream.Feed("", "[DONE]", out);
        const auto events = Events(out);
        ASSERT_EQ(events.size(), 6u);
        EXPECT_EQ(json::parse(events[4].second).at("delta").at("stop_reason"), stop_reason);
    }
}

TEST(TranslateStreamTest, OpenAiErrorChunkToAnthropicErrorEvent) {
    OpenAiToAnthropicStream stream;
    std::string out;
    stream.Feed("", OpenAiChunk(R"({"content":"Hi"})"), out);
    out.clear();
    stream.Feed(
        "",
        R"({"error":{"message":"Our servers are currently overloaded.","type":"service_unavailable_error","param":null,"code":"server_is_overloaded"}})",
        out);
    EXPECT_EQ(
        out,
        "event: error\n"
        R"(data: {"type":"error","error":{"type":"overloaded_error","message":"Our servers are currently overloaded."}})"
        "\n\n");
    out.clear();
    stream.Feed("", "[DONE]", out);
    EXPECT_EQ(out, "");
}

TEST(TranslateStreamTest, OpenAiMalformedChunksDoNotCrash) {
    const char* inputs[] = {"{nope",
                            "[]",
                            "{}",
                            R"({"choices":[7]})",
                            R"({"choices":[{"delta":{"tool_calls":[null,{"index":"x"}]}}]})",
                            R"({"choices":[{"delta":7,"finish_reason":3}],"usage":[]})",
                            R"({"error":"boom"})"};
    for (const char* data : inputs) {
        OpenAiToAnthropicStream stream;
        std::string out;
        stream.Feed("", data, out);
        stream.Feed("", "[DONE]", out);
        for (const auto& [name, event] : Events(out)) {
            const json::value parsed = json::parse(event);
            EXPECT_EQ(parsed.at("type").as_string(), name);
        }
    }
    OpenAiToAnthropicStream empty;
    std::string out;
    empty.Feed("", "[DONE]", out);
    const auto events = Events(out);
    ASSERT_EQ(events.size(), 3u);  // message_start, message_delta, message_stop
    EXPECT_EQ(events.back().first, "message_stop");
}

}  // namespace translate_test
}  // namespace switchyard::api
