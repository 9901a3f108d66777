#include "openai_wire.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

namespace switchyard::mock::openai {
namespace {
namespace json = boost::json;

json::object ErrorOf(const std::string& body) { return json::parse(body).at("error").as_object(); }

TEST(ParseChatRequest, ReadsTheFieldsTheMockActsOn) {
    const auto parsed = ParseChatRequest(
        R"({"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},)"
        R"("messages":[{"role":"system","content":"12345678"},)"
        R"({"role":"user","content":[{"type":"text","text":"abcd"},{"type":"image_url"}]}]})");
    ASSERT_EQ(parsed.status, 0) << parsed.error_body;
    EXPECT_EQ(parsed.request.model, "gpt-4o");
    EXPECT_TRUE(parsed.request.stream);
    EXPECT_TRUE(parsed.request.include_usage);
    EXPECT_EQ(parsed.request.prompt_tokens, 3);  // 12 characters / 4.
}

TEST(ParseChatRequest, PromptTokensAreAtLeastOne) {
    const auto parsed = ParseChatRequest(R"({"model":"m","messages":[]})");
    ASSERT_EQ(parsed.status, 0);
    EXPECT_EQ(parsed.request.prompt_tokens, 1);
    EXPECT_FALSE(parsed.request.stream);
    EXPECT_FALSE(parsed.request.include_usage);
}

TEST(ParseChatRequest, ContentCharactersAndMaxTokensForTheRateLimiter) {
    auto parsed = ParseChatRequest(
        R"({"model":"m","max_tokens":50,"max_completion_tokens":70,)"
        R"("messages":[{"role":"user","content":"12345"},{"role":"user","content":"67"}]})");
    ASSERT_EQ(parsed.status, 0);
    EXPECT_EQ(parsed.request.content_chars, 7);
    EXPECT_EQ(parsed.request.max_tokens, 70);  // max_completion_tokens wins.
    parsed = ParseChatRequest(R"({"model":"m","max_tokens":50,"messages":[]})");
    EXPECT_EQ(parsed.request.max_tokens, 50);
    parsed = ParseChatRequest(R"({"model":"m","max_tokens":"50","messages":[]})");
    EXPECT_EQ(parsed.request.max_tokens, 0);  // Not an integer: as if absent.
}

TEST(ParseChatRequest, RejectsInvalidBodiesWithOpenAiEnvelopes) {
    const auto unparsable = ParseChatRequest("{\"model\":");
    EXPECT_EQ(unparsable.status, 400);
    EXPECT_TRUE(ErrorOf(unparsable.error_body)
                    .at("message")
                    .as_string()
                    .starts_with("We could not parse the JSON body of your request."));
    EXPECT_EQ(ErrorOf(unparsable.error_body).at("type"), "invalid_request_error");
    EXPECT_TRUE(ErrorOf(unparsable.error_body).at("code").is_null());

    EXPECT_EQ(ParseChatRequest("[]").status, 400);
    EXPECT_EQ(ErrorOf(ParseChatRequest(R"({"messages":[]})").error_body).at("message"),
              "you must provide a model parameter");
    EXPECT_EQ(ErrorOf(ParseChatRequest(R"({"model":1,"messages":[]})").error_body).at("code"),
              "invalid_type");
    const auto no_messages = ErrorOf(ParseChatRequest(R"({"model":"m"})").error_body);
    EXPECT_EQ(no_messages.at("param"), "messages");
    EXPECT_EQ(no_messages.at("code"), "missing_required_parameter");
    EXPECT_EQ(ErrorOf(ParseChatRequest(R"({"model":"m","messages":{}})").error_body).at("code"),
              "invalid_type");
}

TEST(ReplyText, DefaultAndNumberedWords) {
    std::string text;
    ReplyText("gpt-4o", std::nullopt).AppendText(text);
    EXPECT_EQ(text, "Mock reply from gpt-4o.");
    EXPECT_EQ(ReplyText("gpt-4o", std::nullopt).WordCount(), 4);

    const ReplyText numbered("m", 3);
    text.clear();
    numbered.AppendText(text);
    EXPECT_EQ(text, "word1 word2 word3");
    std::string word;
    numbered.AppendWord(word, 1);
    EXPECT_EQ(word, " word2");
    EXPECT_EQ(ReplyText("m", 0).WordCount(), 0);
}

TEST(AppendCompletion, MatchesTheChatCompletionObject) {
    std::string body;
    AppendCompletion(body, {"chatcmpl-1", 1700000000, "m\"x"}, ReplyText("m\"x", std::nullopt),
                     {7, 4});
    EXPECT_EQ(
        body,
        R"({"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"m\"x",)"
        R"("choices":[{"index":0,"message":{"role":"assistant","content":"Mock reply from )"
        R"(m\"x.","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],)"
        R"("usage":{"prompt_tokens":7,"completion_tokens":4,"total_tokens":11},)"
        R"("service_tier":"default","system_fingerprint":"fp_mock"})");
}

TEST(ChunkEvents, WithoutUsage) {
    const ChunkEvents events({"chatcmpl-1", 5, "m"}, false);
    std::string out;
    events.AppendRole(out);
    EXPECT_EQ(
        out, R"(data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":5,"model":"m",)"
             R"("system_fingerprint":"fp_mock","choices":[{"index":0,"delta":{"role":"assistant",)"
             R"("content":"","refusal":null},"logprobs":null,"finish_reason":null}]})"
             "\n\n");
    out.clear();
    events.AppendWord(out, ReplyText("m", 2), 1);
    EXPECT_NE(out.find(R"("choices":[{"index":0,"delta":{"content":" word2"},"logprobs":null,)"
                       R"("finish_reason":null}]})"),
              std::string::npos)
        << out;
    EXPECT_EQ(out.find("usage"), std::string::npos);
    out.clear();
    events.AppendFinish(out);
    EXPECT_NE(out.find(R"("delta":{},"logprobs":null,"finish_reason":"stop"}]})"),
              std::string::npos);
    out.clear();
    ChunkEvents::AppendDone(out);
    EXPECT_EQ(out, "data: [DONE]\n\n");
}

TEST(ChunkEvents, WithUsageEveryChunkCarriesNullUsageAndTheLastHasTotals) {
    const ChunkEvents events({"chatcmpl-1", 5, "m"}, true);
    std::string out;
    events.AppendRole(out);
    EXPECT_TRUE(out.ends_with(R"(],"usage":null})"
                              "\n\n"));
    out.clear();
    events.AppendUsage(out, {3, 4});
    EXPECT_TRUE(out.ends_with(
        R"("choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}})"
        "\n\n"))
        << out;
}

TEST(ChunkEvents, ErrorEvent) {
    std::string out;
    ChunkEvents::AppendError(out, ErrorBody(500, std::nullopt, "m"));
    EXPECT_TRUE(out.starts_with(R"(data: {"error":{"message":"The server had an error)"));
    EXPECT_TRUE(out.ends_with("}}\n\n"));
}

TEST(ErrorBody, StatusBodies) {
    EXPECT_EQ(ErrorBody(401, std::nullopt, "m"),
              R"({"error":{"message":"Incorrect API key provided.","type":"invalid_request_error",)"
              R"("param":null,"code":"invalid_api_key"}})");
    EXPECT_EQ(ErrorBody(429, std::nullopt, "m"),
              R"({"error":{"message":"Rate limit reached for requests. Limit 3500 per min.",)"
              R"("type":"requests","param":null,"code":"rate_limit_exceeded"}})");
    EXPECT_EQ(ErrorBody(503, std::nullopt, "m"),
              R"({"error":{"message":"Our servers are currently overloaded. Please try again )"
              R"(later.","type":"service_unavailable_error","param":null,)"
              R"("code":"server_is_overloaded"}})");
    EXPECT_EQ(ErrorBody(529, std::nullopt, "m"),
              R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})");
    EXPECT_EQ(ErrorOf(ErrorBody(404, std::nullopt, "gpt-9")).at("message"),
              "The model `gpt-9` does not exist or you do not have access to it.");
    EXPECT_EQ(ErrorOf(ErrorBody(403, std::nullopt, "m")).at("code"),
              "unsupported_country_region_territory");
    for (int status : {408, 409, 413, 422, 418}) {
        EXPECT_EQ(ErrorOf(ErrorBody(status, std::nullopt, "m")).at("type"), "invalid_request_error")
            << status;
    }
    for (int status : {500, 502, 504, 599}) {
        EXPECT_EQ(ErrorOf(ErrorBody(status, std::nullopt, "m")).at("type"), "server_error")
            << status;
    }
}

TEST(ErrorBody, NamedErrorsPickTheBody) {
    const auto quota = ErrorOf(ErrorBody(429, NamedError::kInsufficientQuota, "m"));
    EXPECT_EQ(quota.at("type"), "insufficient_quota");
    EXPECT_EQ(quota.at("code"), "insufficient_quota");
    const auto credit = ErrorOf(ErrorBody(429, NamedError::kCreditBalanceExhausted, "m"));
    EXPECT_EQ(credit.at("type"), "insufficient_quota");
    EXPECT_EQ(credit.at("code"), "credit_balance_exhausted");
    EXPECT_EQ(credit.at("message"), "You have no credits remaining.");
    EXPECT_EQ(ErrorOf(ErrorBody(429, NamedError::kOrganizationSpendLimit, "m")).at("code"),
              "organization_spend_limit_exceeded");
    EXPECT_EQ(ErrorOf(ErrorBody(429, NamedError::kProjectSpendLimit, "m")).at("code"),
              "project_spend_limit_exceeded");
    const auto context = ErrorOf(ErrorBody(400, NamedError::kContextLength, "m"));
    EXPECT_EQ(context.at("param"), "messages");
    EXPECT_EQ(context.at("code"), "context_length_exceeded");
    EXPECT_EQ(ErrorOf(ErrorBody(400, NamedError::kContentPolicy, "m")).at("code"),
              "content_policy_violation");
    EXPECT_EQ(ErrorBody(503, NamedError::kServerOverloaded, "m"),
              ErrorBody(503, std::nullopt, "m"));
    EXPECT_EQ(ErrorBody(500, NamedError::kServerError, "m"), ErrorBody(500, std::nullopt, "m"));
    EXPECT_EQ(ErrorBody(401, NamedError::kInvalidApiKey, "m"), InvalidApiKeyBody());
    EXPECT_EQ(ErrorBody(404, NamedError::kModelNotFound, "m"), ErrorBody(404, std::nullopt, "m"));
    EXPECT_EQ(ErrorBody(504, NamedError::kTimeout, "m"), ErrorBody(504, std::nullopt, "m"));
    EXPECT_EQ(ErrorBody(429, NamedError::kRateLimit, "m"), ErrorBody(429, std::nullopt, "m"));
    // A status from `status=` does not change the named body.
    EXPECT_EQ(ErrorBody(500, NamedError::kRateLimit, "m"), ErrorBody(429, std::nullopt, "m"));
    // Anthropic's overload error is the status=529 body here too.
    EXPECT_EQ(ErrorBody(529, NamedError::kOverloaded, "m"), ErrorBody(529, std::nullopt, "m"));
}

}  // namespace
}  // namespace switchyard::mock::openai
