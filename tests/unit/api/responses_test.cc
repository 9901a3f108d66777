#include "api/responses.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "core/sse_parser.h"

namespace switchyard::api {
namespace responses_test {

namespace json = boost::json;

json::object Obj(std::string_view text) { return json::parse(text).as_object(); }

json::object Chat(std::string_view request) {
    auto chat = ResponsesRequestToChat(Obj(request));
    EXPECT_TRUE(std::holds_alternative<json::object>(chat))
        << std::get<core::LocalError>(chat).message;
    return std::get<json::object>(chat);
}

std::string RefusedParam(std::string_view request) {
    auto chat = ResponsesRequestToChat(Obj(request));
    const auto* error = std::get_if<core::LocalError>(&chat);
    return error != nullptr ? error->param : "(not refused)";
}

TEST(ResponsesRequestTest, TheStatelessSubsetBecomesChatCompletions) {
    const json::object chat = Chat(R"({
        "model": "m", "instructions": "Be brief.", "stream": true, "max_output_tokens": 64,
        "temperature": 0.2, "store": false, "metadata": {"x": "y"},
        "input": [
          {"role": "developer", "content": "Rules."},
          {"role": "user", "content": [{"type": "input_text", "text": "Look:"},
                                       {"type": "input_image", "image_url": "https://x/i.png"}]},
          {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{\"a\":1}"},
          {"type": "function_call", "call_id": "c2", "name": "g", "arguments": "{}"},
          {"type": "function_call_output", "call_id": "c1", "output": "one"},
          {"type": "reasoning", "id": "rs_1", "summary": []}],
        "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}],
        "tool_choice": {"type": "function", "name": "f"},
        "text": {"format": {"type": "json_schema", "name": "r", "schema": {"type": "object"}}}})");
    EXPECT_EQ(chat.at("model"), "m");
    EXPECT_EQ(chat.at("max_completion_tokens"), 64);
    EXPECT_EQ(chat.at("stream_options"), json::parse(R"({"include_usage": true})"));
    EXPECT_FALSE(chat.contains("metadata")) << "informational: dropped";
    const json::array& messages = chat.at("messages").as_array();
    ASSERT_EQ(messages.size(), 5u);
    EXPECT_EQ(messages[0], json::parse(R"({"role": "system", "content": "Be brief."})"));
    EXPECT_EQ(messages[1].at("role"), "system") << "developer turns are system turns";
    EXPECT_EQ(messages[2].at("content").at(1).at("image_url").at("url"), "https://x/i.png");
    EXPECT_EQ(messages[3].at("tool_calls").as_array().size(), 2u) << "calls in a row: one turn";
    EXPECT_EQ(messages[4],
              json::parse(R"({"role": "tool", "tool_call_id": "c1", "content": "one"})"));
    EXPECT_EQ(chat.at("tools").at(0).at("function").at("name"), "f");
    EXPECT_EQ(chat.at("tool_choice").at("function").at("name"), "f");
    EXPECT_EQ(chat.at("response_format").at("type"), "json_schema");
    EXPECT_EQ(chat.at("response_format").at("json_schema").at("name"), "r");
}

TEST(ResponsesRequestTest, AStringInputIsOneUserTurn) {
    const json::object chat = Chat(R"({"model": "m", "input": "Hi"})");
    EXPECT_EQ(chat.at("messages"), json::parse(R"([{"role": "user", "content": "Hi"}])"));
    EXPECT_FALSE(chat.contains("stream_options"));
}

TEST(ResponsesRequestTest, WhatNeedsTheResponsesApiIsRefusedNamingTheField) {
    EXPECT_EQ(RefusedParam(R"({"model":"m","input":"x","previous_response_id":"r"})"),
              "previous_response_id");
    EXPECT_EQ(RefusedParam(R"({"model":"m","input":"x","store":true})"), "store");
    EXPECT_EQ(RefusedParam(R"({"model":"m","input":"x","background":true})"), "background");
    EXPECT_EQ(RefusedParam(R"({"model":"m","input":"x","include":["file_search_call.results"]})"),
              "include");
    EXPECT_EQ(RefusedParam(R"({"model":"m","input":"x","tools":[{"type":"web_search"}]})"),
              "tools[0].type");
    EXPECT_EQ(RefusedParam(R"({"model":"m","input":"x","tool_choice":{"type":"file_search"}})"),
              "tool_choice");
    EXPECT_EQ(
        RefusedParam(
            R"({"model":"m","input":[{"role":"user","content":[{"type":"input_file","file_id":"f"}]}]})"),
        "input[0].content[0]");
    EXPECT_EQ(RefusedParam(R"({"model":"m","input":[{"type":"item_reference","id":"x"}]})"),
              "input[0].type");
    EXPECT_EQ(RefusedParam(R"({"model":"m","input":"x","reasoning":{"summary":"auto"}})"),
              "reasoning.summary");
    EXPECT_EQ(RefusedParam(R"({"model":"m","input":"x","brand_new_field":1})"), "brand_new_field");
}

TEST(ResponsesAnswerTest, AChatCompletionBecomesAResponse) {
    const json::object response =
        ChatAnswerToResponse(Obj(R"({
        "id": "chatcmpl-abc", "object": "chat.completion", "created": 1, "model": "gpt-4o",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "Checking.",
            "tool_calls": [{"id": "call_1", "type": "function",
                            "function": {"name": "f", "arguments": "{\"a\":1}"}}]}}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10,
                  "prompt_tokens_details": {"cached_tokens": 2}}})"),
                             Obj(R"({"instructions": "Be brief."})"), 1700000000);
    EXPECT_EQ(response.at("object"), "response");
    EXPECT_EQ(response.at("id"), "resp_abc");
    EXPECT_EQ(response.at("status"), "completed");
    EXPECT_EQ(response.at("instructions"), "Be brief.");
    EXPECT_EQ(response.at("created_at"), 1700000000);
    const json::array& output = response.at("output").as_array();
    ASSERT_EQ(output.size(), 2u);
    EXPECT_EQ(output[0].at("content").at(0).at("text"), "Checking.");
    EXPECT_EQ(output[1].at("type"), "function_call");
    EXPECT_EQ(output[1].at("call_id"), "call_1");
    EXPECT_EQ(output[1].at("arguments"), "{\"a\":1}");
    EXPECT_EQ(response.at("usage").at("input_tokens"), 7);
    EXPECT_EQ(response.at("usage").at("input_tokens_details").at("cached_tokens"), 2);
    EXPECT_EQ(response.at("usage").at("total_tokens"), 10);
}

TEST(ResponsesAnswerTest, ALengthFinishIsIncomplete) {
    const json::object response = ChatAnswerToResponse(
        Obj(R"({"id":"c","model":"m","choices":[{"finish_reason":"length","message":{"content":"x"}}]})"),
        json::object(), 1);
    EXPECT_EQ(response.at("status"), "incomplete");
    EXPECT_EQ(response.at("incomplete_details").at("reason"), "max_output_tokens");
}

// The events of a translated stream, in order: (type, data).
std::vector<std::pair<std::string, json::object>> Translate(
    const std::vector<std::string>& chunks) {
    ChatToResponsesStream stream(Obj(R"({"instructions": "Be brief."})"), 1700000000);
    std::string out;
    for (const std::string& chunk : chunks) stream.Feed("", chunk, out);
    core::SseParser parser;
    parser.Feed(out);
    core::SseEvent e;
    std::vector<std::pair<std::string, json::object>> events;
    while (parser.Next(e)) events.emplace_back(std::string(e.name), Obj(e.data));
    return events;
}

TEST(ResponsesStreamTest, TextChunksBecomeTheResponsesEventSequence) {
    const auto events = Translate(
        {R"({"id":"chatcmpl-9","model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})",
         R"({"id":"chatcmpl-9","choices":[{"index":0,"delta":{"content":"Hel"}}]})",
         R"({"id":"chatcmpl-9","choices":[{"index":0,"delta":{"content":"lo"}}]})",
         R"({"id":"chatcmpl-9","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})",
         R"({"id":"chatcmpl-9","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}})",
         "[DONE]"});
    std::vector<std::string> types;
    for (const auto& [type, data] : events) types.push_back(type);
    EXPECT_EQ(types,
              (std::vector<std::string>{"response.created", "response.in_progress",
                                        "response.output_item.added", "response.content_part.added",
                                        "response.output_text.delta", "response.output_text.delta",
                                        "response.output_text.done", "response.content_part.done",
                                        "response.output_item.done", "response.completed"}));
    for (std::size_t i = 0; i < events.size(); ++i) {
        EXPECT_EQ(events[i].second.at("sequence_number"), static_cast<std::int64_t>(i));
        EXPECT_EQ(events[i].second.at("type").as_string(), types[i]);
    }
    const json::object& done = events.back().second.at("response").as_object();
    EXPECT_EQ(done.at("output").at(0).at("content").at(0).at("text"), "Hello");
    EXPECT_EQ(done.at("usage").at("output_tokens"), 2) << "the usage chunk after the finish";
    EXPECT_EQ(done.at("instructions"), "Be brief.");
}

TEST(ResponsesStreamTest, ToolCallChunksBecomeFunctionCallEvents) {
    const auto events = Translate(
        {R"({"id":"c","model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}}]})",
         R"({"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\""}}]}}]})",
         R"({"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}}]})",
         R"({"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})",
         "[DONE]"});
    std::string arguments;
    for (const auto& [type, data] : events) {
        if (type == "response.function_call_arguments.delta") {
            arguments += data.at("delta").as_string();
        }
    }
    EXPECT_EQ(arguments, "{\"a\":1}");
    const json::object& done = events.back().second.at("response").as_object();
    EXPECT_EQ(events.back().first, "response.completed");
    EXPECT_EQ(done.at("output").at(0).at("type"), "function_call");
    EXPECT_EQ(done.at("output").at(0).at("name"), "f");
    EXPECT_EQ(done.at("output").at(0).at("arguments"), "{\"a\":1}");
}

TEST(ResponsesStreamTest, AnErrorChunkBecomesTheErrorEvent) {
    const auto events = Translate(
        {R"({"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"Hi"}}]})",
         R"({"error":{"message":"Overloaded.","type":"server_error","code":"server_is_overloaded"}})"});
    EXPECT_EQ(events.back().first, "error");
    EXPECT_EQ(events.back().second.at("code"), "server_is_overloaded");
    EXPECT_EQ(events.back().second.at("message"), "Overloaded.");
}

}  // namespace responses_test
}  // namespace switchyard::api
