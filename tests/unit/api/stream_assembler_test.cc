#include "api/stream_assembler.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace switchyard::api {
namespace stream_assembler_test {

TEST(OpenAiStreamAssemblerTest, RebuildsTextToolCallsFinishAndUsage) {
    OpenAiStreamAssembler a;
    EXPECT_TRUE(a.Empty());
    a.Add(
        R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,"model":"m","system_fingerprint":"fp","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"finish_reason":null}],"usage":null})");
    a.Add(
        R"({"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]})");
    a.Add(
        R"({"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]})");
    a.Add(
        R"({"id":"chatcmpl-1","choices":[{"index":1,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}}]})");
    a.Add(
        R"({"id":"chatcmpl-1","choices":[{"index":1,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}}]})");
    a.Add(
        R"({"id":"chatcmpl-1","choices":[{"index":1,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Oslo\"}"}}]}}]})");
    a.Add(
        R"({"id":"chatcmpl-1","choices":[{"index":0,"delta":{},"finish_reason":"stop"},{"index":1,"delta":{},"finish_reason":"tool_calls"}]})");
    a.Add(
        R"({"id":"chatcmpl-1","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8}})");
    a.Add("[DONE]");
    const auto out = boost::json::parse(a.Json()).as_object();
    EXPECT_EQ(out.at("object").as_string(), "chat.completion");
    EXPECT_EQ(out.at("id").as_string(), "chatcmpl-1");
    EXPECT_EQ(out.at("created").as_int64(), 7);
    EXPECT_EQ(out.at("model").as_string(), "m");
    const auto& choices = out.at("choices").as_array();
    ASSERT_EQ(choices.size(), 2u);
    EXPECT_EQ(choices[0].at("message").at("content").as_string(), "Hello");
    EXPECT_EQ(choices[0].at("finish_reason").as_string(), "stop");
    EXPECT_TRUE(choices[0].at("message").at("refusal").is_null());
    const auto& tool = choices[1].at("message").at("tool_calls").as_array().at(0);
    EXPECT_EQ(tool.at("id").as_string(), "call_1");
    EXPECT_EQ(tool.at("function").at("name").as_string(), "get_weather");
    EXPECT_EQ(tool.at("function").at("arguments").as_string(), "{\"city\":\"Oslo\"}");
    EXPECT_TRUE(choices[1].at("message").at("content").is_null());
    EXPECT_EQ(choices[1].at("finish_reason").as_string(), "tool_calls");
    EXPECT_EQ(out.at("usage").at("total_tokens").as_int64(), 8);
}

TEST(OpenAiStreamAssemblerTest, IgnoresWhatIsNotAChunk) {
    OpenAiStreamAssembler a;
    a.Add("not json");
    a.Add("[DONE]");
    a.Add("[1,2]");
    EXPECT_TRUE(a.Empty());
}

}  // namespace stream_assembler_test
}  // namespace switchyard::api
