#include "api/openai_chat.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/usage.h"
#include "providers/upstream_request.h"

namespace switchyard::api {
namespace openai_chat_test {

TEST(OpenAiChatTest, ReadsWhatRoutingNeeds) {
    auto parsed = ParseOpenAiChat(
        R"({"model":"smart","stream":true,"stream_options":{"include_usage":true},"messages":[]})");
    ASSERT_TRUE(std::holds_alternative<ChatRequest>(parsed));
    const auto& r = std::get<ChatRequest>(parsed);
    EXPECT_EQ(r.model, "smart");
    EXPECT_TRUE(r.stream);
    EXPECT_TRUE(r.include_usage);
}

TEST(OpenAiChatTest, RejectsBadBodies) {
    auto kind = [](std::string_view body) {
        auto parsed = ParseOpenAiChat(body);
        EXPECT_TRUE(std::holds_alternative<core::LocalError>(parsed)) << body;
        return std::get<core::LocalError>(parsed).kind;
    };
    EXPECT_EQ(kind("{"), core::ErrorKind::kMalformedJson);
    EXPECT_EQ(kind("[1,2]"), core::ErrorKind::kMalformedJson);
    EXPECT_EQ(kind(""), core::ErrorKind::kMalformedJson);
    EXPECT_EQ(kind(R"({"messages":[]})"), core::ErrorKind::kModelNotFound);
    EXPECT_EQ(kind(R"({"model":7})"), core::ErrorKind::kModelNotFound);
    EXPECT_EQ(kind(R"({"model":"m","stream":"yes"})"), core::ErrorKind::kInvalidRequest);
}

TEST(OpenAiChatTest, UpstreamRequestRewritesModelOnlyWhenItDiffers) {
    const std::string body = R"({"model":"group","messages":[{"role":"user","content":"hi"}]})";
    auto request = std::get<ChatRequest>(ParseOpenAiChat(body));
    config::Deployment d;
    d.model = "gpt-4.1";
    d.base_url.path_prefix = "/v1";
    d.api_key = config::Secret("sk-test", "inline");
    const providers::UpstreamRequest up =
        std::get<providers::UpstreamRequest>(providers::BuildUpstreamRequest(d, request, body));
    EXPECT_EQ(up.target, "/v1/chat/completions");
    const auto sent = boost::json::parse(up.Body()).as_object();
    EXPECT_EQ(sent.at("model").as_string(), "gpt-4.1");
    EXPECT_EQ(sent.at("messages").as_array().size(), 1u);
    EXPECT_EQ(up.authorization, "Bearer sk-test");
    for (const auto& [name, value] : up.headers) EXPECT_NE(name, "authorization");

    d.model = "group";
    d.api_key = {};
    const providers::UpstreamRequest same =
        std::get<providers::UpstreamRequest>(providers::BuildUpstreamRequest(d, request, body));
    EXPECT_EQ(same.Body(), body) << "unchanged model: the client's bytes go upstream as they came";
    EXPECT_EQ(same.shared, &body);
    EXPECT_TRUE(same.authorization.empty());
}

ChatRequest Parse(std::string_view body) {
    auto parsed = ParseOpenAiChat(body);
    if (auto* error = std::get_if<core::LocalError>(&parsed)) {
        ADD_FAILURE() << "unexpected error: " << error->message << " for " << body;
        return {};
    }
    return std::get<ChatRequest>(std::move(parsed));
}

core::LocalError ParseError(std::string_view body) {
    auto parsed = ParseOpenAiChat(body);
    if (!std::holds_alternative<core::LocalError>(parsed)) {
        ADD_FAILURE() << "expected an error for " << body;
        return {};
    }
    return std::get<core::LocalError>(std::move(parsed));
}

TEST(OpenAiChatTest, ModelsWithoutModelUsesTheFirst) {
    const ChatRequest r = Parse(R"({"models":["fast","smart"],"messages":[]})");
    EXPECT_EQ(r.model, "fast");
    EXPECT_EQ(r.models, (std::vector<std::string>{"fast", "smart"}));
    EXPECT_FALSE(r.fallbacks);
    EXPECT_TRUE(r.has_gateway_fields);
}

TEST(OpenAiChatTest, ModelWinsOverModels) {
    const ChatRequest r = Parse(R"({"model":"smart","models":["fast"]})");
    EXPECT_EQ(r.model, "smart");
    EXPECT_EQ(r.models, (std::vector<std::string>{"fast"}));
    // An empty model string falls back to the list.
    EXPECT_EQ(Parse(R"({"model":"","models":["fast"]})").model, "fast");
}

TEST(OpenAiChatTest, ReadsFallbacks) {
    ChatRequest r = Parse(R"({"model":"a","fallbacks":["b","c"]})");
    ASSERT_TRUE(r.fallbacks);
    EXPECT_EQ(*r.fallbacks, (std::vector<std::string>{"b", "c"}));
    EXPECT_TRUE(r.has_gateway_fields);
    EXPECT_TRUE(r.models.empty());

    r = Parse(R"({"model":"a","fallbacks":[]})");
    ASSERT_TRUE(r.fallbacks) << "an empty list is an override: no fallbacks";
    EXPECT_TRUE(r.fallbacks->empty());

    r = Parse(R"({"model":"a"})");
    EXPECT_FALSE(r.fallbacks);
    EXPECT_FALSE(r.has_gateway_fields);
}

TEST(OpenAiChatTest, RejectsBadGatewayFields) {
    for (std::string_view field : {"models", "fallbacks"}) {
        for (std::string_view value : {R"("a")", "7", "null", "{}", R"(["a",1])", R"([["a"]])",
                                       R"([null])", R"(["a",{"model":"b"}])", "true"}) {
            const std::string body =
                R"({"model":"m",")" + std::string(field) + R"(":)" + std::string(value) + "}";
            const core::LocalError e = ParseError(body);
            EXPECT_EQ(e.kind, core::ErrorKind::kInvalidRequest) << body;
            EXPECT_EQ(e.param, field) << body;
            EXPECT_NE(e.message.find(field), std::string::npos) << e.message;
        }
    }
}

TEST(OpenAiChatTest, EmptyModelsWithoutModelIsModelNotFound) {
    const core::LocalError e = ParseError(R"({"models":[]})");
    EXPECT_EQ(e.kind, core::ErrorKind::kModelNotFound);
    EXPECT_EQ(e.param, "model");
}

const std::optional<std::string> kSystem = "You are terse.";

TEST(OpenAiChatTest, UpstreamBodyDropsGatewayFieldsAndReplacesTheModel) {
    const ChatRequest r = Parse(
        R"({"model":"group","models":["group","other"],"fallbacks":["x"],"stream":true,"n":2,"messages":[{"role":"user","content":"hi"}]})");
    const auto sent = boost::json::parse(RenderUpstreamBody(r, "gpt-4.1", {})).as_object();
    EXPECT_EQ(sent.at("model").as_string(), "gpt-4.1");
    EXPECT_FALSE(sent.contains("models"));
    EXPECT_FALSE(sent.contains("fallbacks"));
    EXPECT_EQ(sent.at("stream").as_bool(), true);
    EXPECT_EQ(sent.at("n").as_int64(), 2);
    EXPECT_EQ(sent.at("messages"), r.body.at("messages"));
}

TEST(OpenAiChatTest, UpstreamBodyReplacesSystemAndDeveloperMessages) {
    const ChatRequest r = Parse(R"({"model":"g","messages":[
        {"role":"system","content":"old system"},
        {"role":"user","content":"one"},
        {"role":"developer","content":[{"type":"text","text":"old developer"}]},
        {"role":"assistant","content":"two"},
        {"role":"system","content":"late system"},
        {"role":"user","content":"three"}]})");
    const RequestOverrides overrides{&kSystem, nullptr};
    const auto sent = boost::json::parse(RenderUpstreamBody(r, "m", overrides)).as_object();
    const auto& messages = sent.at("messages").as_array();
    ASSERT_EQ(messages.size(), 4u);
    EXPECT_EQ(messages[0].at("role").as_string(), "system");
    EXPECT_EQ(messages[0].at("content").as_string(), "You are terse.");
    EXPECT_EQ(messages[1].at("content").as_string(), "one");
    EXPECT_EQ(messages[2].at("role").as_string(), "assistant");
    EXPECT_EQ(messages[2].at("content").as_string(), "two");
    EXPECT_EQ(messages[3].at("content").as_string(), "three");
}

TEST(OpenAiChatTest, UpstreamBodyAddsTheSystemPromptWithoutOne) {
    const ChatRequest r = Parse(R"({"model":"g","messages":[{"role":"user","content":"hi"}]})");
    const RequestOverrides overrides{&kSystem, nullptr};
    const auto sent = boost::json::parse(RenderUpstreamBody(r, "m", overrides)).as_object();
    const auto& messages = sent.at("messages").as_array();
    ASSERT_EQ(messages.size(), 2u);
    EXPECT_EQ(messages[0].at("role").as_string(), "system");
    EXPECT_EQ(messages[1].at("content").as_string(), "hi");
}

TEST(OpenAiChatTest, UpstreamBodyKeepsMessagesWithoutASystemPrompt) {
    constexpr std::string_view kBody =
        R"({"model":"g","messages":[{"role":"system","content":"keep"},{"role":"user","content":"hi"}]})";
    const ChatRequest r = Parse(kBody);
    const std::optional<std::string> none;
    for (const RequestOverrides& overrides :
         {RequestOverrides{}, RequestOverrides{&none, nullptr}}) {
        const auto sent = boost::json::parse(RenderUpstreamBody(r, "m", overrides)).as_object();
        EXPECT_EQ(sent.at("messages"), boost::json::parse(kBody).at("messages"));
    }
}

TEST(OpenAiChatTest, UpstreamBodySetsParamsWithTheirJsonTypes) {
    const ChatRequest r = Parse(
        R"({"model":"g","temperature":1.0,"top_p":0.5,"messages":[{"role":"user","content":"hi"}]})");
    const std::vector<std::pair<std::string, std::string>> params = {
        {"temperature", "0.2"},
        {"max_tokens", "256"},
        {"logprobs", "true"},
        {"parallel_tool_calls", "false"},
        {"user", R"("fallback \"entry\"")"},
        {"seed", "-7"},
    };
    const RequestOverrides overrides{nullptr, &params};
    const auto sent = boost::json::parse(RenderUpstreamBody(r, "m", overrides)).as_object();
    ASSERT_TRUE(sent.at("temperature").is_double());
    EXPECT_DOUBLE_EQ(sent.at("temperature").as_double(), 0.2);
    ASSERT_TRUE(sent.at("max_tokens").is_int64());
    EXPECT_EQ(sent.at("max_tokens").as_int64(), 256);
    EXPECT_EQ(sent.at("logprobs"), boost::json::value(true));
    EXPECT_EQ(sent.at("parallel_tool_calls"), boost::json::value(false));
    EXPECT_EQ(sent.at("user").as_string(), R"(fallback "entry")");
    EXPECT_EQ(sent.at("seed").as_int64(), -7);
    EXPECT_DOUBLE_EQ(sent.at("top_p").as_double(), 0.5) << "params not named stay as they were";
    EXPECT_EQ(sent.at("model").as_string(), "m");
    EXPECT_EQ(sent.at("messages").as_array().size(), 1u);
}

TEST(OpenAiChatTest, UpstreamBodyAppliesPromptAndParamsTogether) {
    const ChatRequest r = Parse(
        R"({"models":["a","b"],"messages":[{"role":"developer","content":"x"},{"role":"user","content":"hi"}]})");
    const std::vector<std::pair<std::string, std::string>> params = {{"temperature", "0"}};
    const RequestOverrides overrides{&kSystem, &params};
    const auto sent = boost::json::parse(RenderUpstreamBody(r, "fb-model", overrides)).as_object();
    EXPECT_EQ(sent.at("model").as_string(), "fb-model");
    EXPECT_FALSE(sent.contains("models"));
    EXPECT_EQ(sent.at("temperature").as_int64(), 0);
    ASSERT_EQ(sent.at("messages").as_array().size(), 2u);
    EXPECT_EQ(sent.at("messages").as_array()[0].at("content").as_string(), "You are terse.");
    // The parsed request itself is not modified.
    EXPECT_TRUE(r.body.as_object().contains("models"));
    EXPECT_EQ(r.body.at("messages").as_array().size(), 2u);
}

TEST(UsageTest, FindsTheLastUsageObject) {
    auto usage = FindUsage(
        R"({"id":"x","choices":[],"usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18,"prompt_tokens_details":{"cached_tokens":0}}})");
    ASSERT_TRUE(usage);
    EXPECT_EQ(usage->input_tokens, 11);
    EXPECT_EQ(usage->output_tokens, 7);
    EXPECT_FALSE(FindUsage(R"({"usage":null})"));
    EXPECT_FALSE(FindUsage(R"({"choices":[]})"));
    EXPECT_FALSE(FindUsage(R"({"usage":{"prompt_tokens":1)"));
}

TEST(UsageTest, AStreamEventHoldsAUsageObjectOnlyWhenItsNameOpensOne) {
    EXPECT_TRUE(HasUsageObject(R"({"choices":[],"usage":{"prompt_tokens":1}})"));
    EXPECT_TRUE(HasUsageObject(R"({"type":"message_delta","usage":{"output_tokens":15}})"));
    EXPECT_TRUE(HasUsageObject(R"("usage":{)"));
    EXPECT_FALSE(HasUsageObject(R"({"choices":[{"delta":{"content":"x"}}],"usage":null})"));
    EXPECT_FALSE(HasUsageObject(R"({"content":"the usage of {braces}"})"));
    EXPECT_FALSE(HasUsageObject(R"({"content":"\"usage\":{"})")) << "an escaped name in a string";
    EXPECT_FALSE(HasUsageObject(R"(usage":{)")) << "the name's opening quote is missing";
    EXPECT_FALSE(HasUsageObject(""));
    EXPECT_FALSE(HasUsageObject("{"));
}

TEST(UsageTest, ReadsOnlyTheUsageObjectsOwnIntegerMembers) {
    // Anthropic's shape, with nested objects, strings holding braces and names, and spaces.
    auto usage =
        FindUsage(R"({"usage": {"input_tokens" : 25, "cache_creation": {"input_tokens": 999},)"
                  R"( "service_tier": "{\"output_tokens\": 5}", "cache_read_input_tokens": 3,)"
                  R"( "output_tokens": 40}})");
    ASSERT_TRUE(usage);
    EXPECT_EQ(usage->input_tokens, 25);
    EXPECT_EQ(usage->output_tokens, 40);
    // A count that is no integer is not reported; the other one still is.
    usage = FindUsage(R"({"usage":{"prompt_tokens":1.5,"completion_tokens":2}})");
    ASSERT_TRUE(usage);
    EXPECT_EQ(usage->input_tokens, -1);
    EXPECT_EQ(usage->output_tokens, 2);
    // The last usage object counts (a stream's final chunk repeats it).
    usage = FindUsage(R"({"usage":{"output_tokens":1}} {"usage":{"output_tokens":9}})");
    ASSERT_TRUE(usage);
    EXPECT_EQ(usage->output_tokens, 9);
    usage = FindUsage(R"({"usage":{"output_tokens":"{}"}})");
    ASSERT_TRUE(usage);
    EXPECT_EQ(usage->output_tokens, -1);
}

}  // namespace openai_chat_test
}  // namespace switchyard::api
