#include "api/openai_chat.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "api/usage.h"
#include "providers/openai_upstream.h"

namespace switchyard::api {
namespace {

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
    const providers::UpstreamRequest up = providers::BuildOpenAiChat(d, request, body);
    EXPECT_EQ(up.target, "/v1/chat/completions");
    const auto sent = boost::json::parse(up.Body()).as_object();
    EXPECT_EQ(sent.at("model").as_string(), "gpt-4.1");
    EXPECT_EQ(sent.at("messages").as_array().size(), 1u);
    bool has_auth = false;
    for (const auto& [name, value] : up.headers) {
        if (name == "authorization") {
            has_auth = true;
            EXPECT_EQ(value, "Bearer sk-test");
        }
    }
    EXPECT_TRUE(has_auth);

    d.model = "group";
    d.api_key = {};
    const providers::UpstreamRequest same = providers::BuildOpenAiChat(d, request, body);
    EXPECT_EQ(same.Body(), body) << "unchanged model: the client's bytes go upstream as they came";
    EXPECT_EQ(same.shared, &body);
    for (const auto& [name, value] : same.headers) EXPECT_NE(name, "authorization");
}

TEST(UsageTest, FindsTheLastUsageObject) {
    auto usage = FindOpenAiUsage(
        R"({"id":"x","choices":[],"usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18,"prompt_tokens_details":{"cached_tokens":0}}})");
    ASSERT_TRUE(usage);
    EXPECT_EQ(usage->input_tokens, 11);
    EXPECT_EQ(usage->output_tokens, 7);
    EXPECT_FALSE(FindOpenAiUsage(R"({"usage":null})"));
    EXPECT_FALSE(FindOpenAiUsage(R"({"choices":[]})"));
    EXPECT_FALSE(FindOpenAiUsage(R"({"usage":{"prompt_tokens":1)"));
}

}  // namespace
}  // namespace switchyard::api
