#include "api/structured_output.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "api/translate.h"

namespace switchyard::api {
namespace structured_output_test {

namespace json = boost::json;

json::object Obj(std::string_view text) { return json::parse(text).as_object(); }

const char* kSchema = R"({"type":"object","required":["a"],"properties":{"a":{"type":"string"}}})";

TEST(StructuredOutputTest, EachApiNamesTheSchemaInItsOwnPlace) {
    const json::value schema = json::parse(kSchema);
    EXPECT_EQ(RequestedSchema(Obj(std::string(R"({"response_format":{"type":"json_schema",)") +
                                  R"("json_schema":{"name":"x","schema":)" + kSchema + "}}}"),
                              Wire::kOpenAi),
              schema);
    EXPECT_EQ(RequestedSchema(Obj(std::string(R"({"output_config":{"format":{"type":)") +
                                  R"("json_schema","schema":)" + kSchema + "}}}"),
                              Wire::kAnthropic),
              schema);
    EXPECT_EQ(RequestedSchema(Obj(std::string(R"({"text":{"format":{"type":"json_schema",)") +
                                  R"("name":"x","schema":)" + kSchema + "}}}"),
                              Wire::kResponses),
              schema);
    EXPECT_FALSE(
        RequestedSchema(Obj(R"({"response_format":{"type":"json_object"}})"), Wire::kOpenAi));
    EXPECT_FALSE(RequestedSchema(Obj(R"({"messages":[]})"), Wire::kOpenAi));
}

TEST(StructuredOutputTest, TheAnswerTextIsTheAssistantsTextAndNothingElse) {
    EXPECT_EQ(AnswerText(R"({"choices":[{"message":{"content":"{\"a\":\"b\"}"}}]})", Wire::kOpenAi),
              R"({"a":"b"})");
    EXPECT_FALSE(
        AnswerText(R"({"choices":[{"message":{"content":null,"refusal":"no"}}]})", Wire::kOpenAi));
    EXPECT_FALSE(AnswerText(R"({"choices":[{"message":{"content":null,"tool_calls":[{}]}}]})",
                            Wire::kOpenAi));
    EXPECT_EQ(AnswerText(R"({"content":[{"type":"text","text":"{\"a\""},)"
                         R"({"type":"text","text":":1}"}]})",
                         Wire::kAnthropic),
              R"({"a":1})");
    EXPECT_FALSE(AnswerText(R"({"content":[{"type":"tool_use","input":{}}]})", Wire::kAnthropic));
    EXPECT_EQ(AnswerText(R"({"output":[{"type":"message","content":[{"type":"output_text",)"
                         R"("text":"[1]"}]}]})",
                         Wire::kResponses),
              "[1]");
}

TEST(StructuredOutputTest, AStreamsTextIsCollectedFromItsDeltas) {
    StreamText openai(Wire::kOpenAi);
    openai.Feed("", R"({"choices":[{"delta":{"role":"assistant","content":""}}]})");
    openai.Feed("", R"({"choices":[{"delta":{"content":"{\"a\":"}}]})");
    openai.Feed("", R"({"choices":[{"delta":{"content":"1}"}}]})");
    openai.Feed("", "[DONE]");
    EXPECT_EQ(openai.Text(), R"({"a":1})");

    StreamText anthropic(Wire::kAnthropic);
    anthropic.Feed("content_block_delta",
                   R"({"type":"content_block_delta","delta":{"type":"text_delta","text":"[]"}})");
    EXPECT_EQ(anthropic.Text(), "[]");
    anthropic.Feed("content_block_start",
                   R"({"type":"content_block_start","content_block":{"type":"tool_use"}})");
    EXPECT_FALSE(anthropic.Text());
}

TEST(StructuredOutputTest, TranslationAsksTheOtherApiForTheSameSchema) {
    auto to_anthropic = OpenAiRequestToAnthropic(
        Obj(std::string(R"({"model":"m","messages":[{"role":"user","content":"hi"}],)") +
            R"("response_format":{"type":"json_schema","json_schema":{"name":"w","strict":true,)" +
            R"("schema":)" + kSchema + "}}}"),
        1024);
    ASSERT_TRUE(std::holds_alternative<json::object>(to_anthropic));
    EXPECT_EQ(
        std::get<json::object>(to_anthropic).at("output_config"),
        json::parse(std::string(R"({"format":{"type":"json_schema","schema":)") + kSchema + "}}"));

    auto to_openai = AnthropicRequestToOpenAi(
        Obj(std::string(R"({"model":"m","max_tokens":10,"messages":[{"role":"user",)") +
            R"("content":"hi"}],"output_config":{"format":{"type":"json_schema","schema":)" +
            kSchema + "}}}"));
    ASSERT_TRUE(std::holds_alternative<json::object>(to_openai));
    const json::object& format =
        std::get<json::object>(to_openai).at("response_format").as_object();
    EXPECT_EQ(format.at("type"), "json_schema");
    EXPECT_EQ(format.at("json_schema").at("schema"), json::parse(kSchema));
    EXPECT_EQ(format.at("json_schema").at("strict"), true);

    // Only a schema crosses: other output_config settings are refused, not dropped.
    auto effort = AnthropicRequestToOpenAi(
        Obj(R"({"model":"m","max_tokens":10,"messages":[],"output_config":{"effort":"low"}})"));
    ASSERT_TRUE(std::holds_alternative<core::LocalError>(effort));
    EXPECT_EQ(std::get<core::LocalError>(effort).param, "output_config");
}

}  // namespace structured_output_test
}  // namespace switchyard::api
