#include "api/local_reply.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>
#include <vector>

namespace switchyard::api {
namespace local_reply_test {

using core::ErrorKind;

struct Expected {
    ErrorKind kind;
    unsigned status;
    const char* type;
    const char* code;  // nullptr: JSON null
};

TEST(LocalReplyTest, MapsEveryKindToStatusAndOpenAiEnvelope) {
    const Expected cases[] = {
        {ErrorKind::kMalformedJson, 400, "invalid_request_error", nullptr},
        {ErrorKind::kInvalidRequest, 400, "invalid_request_error", nullptr},
        {ErrorKind::kUnauthorized, 401, "invalid_request_error", "invalid_api_key"},
        {ErrorKind::kModelNotFound, 404, "invalid_request_error", "model_not_found"},
        {ErrorKind::kRouteNotFound, 404, "invalid_request_error", nullptr},
        {ErrorKind::kMethodNotAllowed, 405, "invalid_request_error", "method_not_allowed"},
        {ErrorKind::kPayloadTooLarge, 413, "invalid_request_error", "request_too_large"},
        {ErrorKind::kUpstreamUnreachable, 502, "upstream_error", "upstream_unreachable"},
        {ErrorKind::kUpstreamProtocol, 502, "upstream_error", "upstream_protocol_error"},
        {ErrorKind::kUnavailable, 503, "service_unavailable_error", "gateway_draining"},
        {ErrorKind::kUpstreamTimeout, 504, "upstream_error", "upstream_timeout"},
        {ErrorKind::kInternal, 500, "server_error", nullptr},
    };
    for (const Expected& e : cases) {
        const LocalReply reply = RenderOpenAiError({e.kind, "msg \"quoted\"", ""});
        EXPECT_EQ(reply.status, e.status);
        const auto body = boost::json::parse(reply.body).as_object();
        ASSERT_EQ(body.size(), 1u);
        const auto& error = body.at("error").as_object();
        EXPECT_EQ(error.at("message").as_string(), "msg \"quoted\"");
        EXPECT_EQ(error.at("type").as_string(), e.type);
        EXPECT_TRUE(error.at("param").is_null());
        if (e.code == nullptr) {
            EXPECT_TRUE(error.at("code").is_null()) << e.status;
        } else {
            EXPECT_EQ(error.at("code").as_string(), e.code);
        }
    }
}

TEST(LocalReplyTest, CarriesTheParameter) {
    const LocalReply reply = RenderOpenAiError({ErrorKind::kModelNotFound, "no", "model"});
    EXPECT_EQ(boost::json::parse(reply.body).at("error").at("param").as_string(), "model");
}

TEST(LocalReplyTest, AllAttemptsFailedListsEachAttempt) {
    core::LocalError error{ErrorKind::kAllAttemptsFailed, "Every deployment failed.", ""};
    error.attempts = {
        {"smart", "gpt-4.1@api.openai.com", 429, "rate_limited", "req_abc", 0},
        {"smart", "backup", 0, "connection", "", 250},
        {"cheap", "mini", 503, "overloaded", "req_def", 1'200},
    };
    const LocalReply reply = RenderOpenAiError(error);
    EXPECT_EQ(reply.status, 502u) << "without an override: the kind's status";
    const auto body = boost::json::parse(reply.body).as_object();
    const auto& inner = body.at("error").as_object();
    EXPECT_EQ(inner.at("type").as_string(), "upstream_error");
    EXPECT_EQ(inner.at("code").as_string(), "all_attempts_failed");
    const auto& attempts = inner.at("attempts").as_array();
    ASSERT_EQ(attempts.size(), 3u);
    const auto& first = attempts[0].as_object();
    EXPECT_EQ(first.at("model_group").as_string(), "smart");
    EXPECT_EQ(first.at("deployment").as_string(), "gpt-4.1@api.openai.com");
    EXPECT_EQ(first.at("status").to_number<int>(), 429);
    EXPECT_EQ(first.at("error_class").as_string(), "rate_limited");
    EXPECT_EQ(first.at("upstream_request_id").as_string(), "req_abc");
    EXPECT_EQ(first.at("wait_ms").to_number<int>(), 0);
    const auto& second = attempts[1].as_object();
    EXPECT_TRUE(second.at("status").is_null()) << "no HTTP answer: status null";
    EXPECT_EQ(second.at("error_class").as_string(), "connection");
    EXPECT_EQ(second.at("upstream_request_id").as_string(), "");
    EXPECT_EQ(second.at("wait_ms").to_number<int>(), 250);
    EXPECT_EQ(attempts[2].at("model_group").as_string(), "cheap");
    EXPECT_EQ(attempts[2].at("status").to_number<int>(), 503);
    EXPECT_EQ(attempts[2].at("wait_ms").to_number<int>(), 1'200);
}

TEST(LocalReplyTest, StatusOverrideWins) {
    core::LocalError error{ErrorKind::kAllAttemptsFailed, "Rate limited everywhere.", ""};
    error.status = 429;
    error.attempts = {{"g", "d", 429, "rate_limited", "", 0}};
    EXPECT_EQ(RenderOpenAiError(error).status, 429u);
    error.status = 503;
    EXPECT_EQ(RenderOpenAiError(error).status, 503u);
    core::LocalError plain{ErrorKind::kInvalidRequest, "bad", ""};
    plain.status = 422;
    EXPECT_EQ(RenderOpenAiError(plain).status, 422u);
}

TEST(LocalReplyTest, NoAttemptsNoAttemptsField) {
    const LocalReply reply = RenderOpenAiError({ErrorKind::kAllAttemptsFailed, "none", ""});
    EXPECT_EQ(reply.status, 502u);
    EXPECT_FALSE(boost::json::parse(reply.body).at("error").as_object().contains("attempts"));
}

TEST(LocalReplyTest, StaticCompletionJson) {
    const std::string content = "Sorry, \"we\" are busy.\nTry again.";
    const auto body =
        boost::json::parse(RenderOpenAiStaticCompletion(content, 1'700'000'000, false)).as_object();
    EXPECT_EQ(body.at("object").as_string(), "chat.completion");
    EXPECT_FALSE(body.at("id").as_string().empty());
    EXPECT_FALSE(body.at("model").as_string().empty());
    EXPECT_EQ(body.at("created").to_number<long long>(), 1'700'000'000);
    const auto& choices = body.at("choices").as_array();
    ASSERT_EQ(choices.size(), 1u);
    EXPECT_EQ(choices[0].at("index").to_number<int>(), 0);
    EXPECT_EQ(choices[0].at("finish_reason").as_string(), "stop");
    EXPECT_EQ(choices[0].at("message").at("role").as_string(), "assistant");
    EXPECT_EQ(choices[0].at("message").at("content").as_string(), content);
    EXPECT_EQ(body.at("usage").at("total_tokens").to_number<int>(), 0);
}

TEST(LocalReplyTest, StaticCompletionStream) {
    const std::string content = "We are degraded \xe2\x9c\x93";
    const std::string sse = RenderOpenAiStaticCompletion(content, 42, true);
    ASSERT_GE(sse.size(), 14u);
    EXPECT_EQ(sse.substr(sse.size() - 14), "data: [DONE]\n\n");
    // Split into events.
    std::vector<std::string> events;
    for (std::size_t start = 0; start < sse.size();) {
        const std::size_t end = sse.find("\n\n", start);
        ASSERT_NE(end, std::string::npos);
        events.push_back(sse.substr(start, end - start));
        start = end + 2;
    }
    ASSERT_EQ(events.size(), 3u);
    for (const std::string& e : events) {
        ASSERT_EQ(e.rfind("data: ", 0), 0u) << e;
        EXPECT_EQ(e.find('\n'), std::string::npos) << "one data line per event";
    }
    EXPECT_EQ(events[2], "data: [DONE]");
    const auto first = boost::json::parse(events[0].substr(6)).as_object();
    const auto second = boost::json::parse(events[1].substr(6)).as_object();
    for (const auto* chunk : {&first, &second}) {
        EXPECT_EQ(chunk->at("object").as_string(), "chat.completion.chunk");
        EXPECT_EQ(chunk->at("created").to_number<int>(), 42);
        ASSERT_EQ(chunk->at("choices").as_array().size(), 1u);
    }
    EXPECT_EQ(first.at("id"), second.at("id"));
    const auto& c0 = first.at("choices").as_array()[0];
    EXPECT_EQ(c0.at("delta").at("role").as_string(), "assistant");
    EXPECT_EQ(c0.at("delta").at("content").as_string(), content);
    EXPECT_TRUE(c0.at("finish_reason").is_null());
    const auto& c1 = second.at("choices").as_array()[0];
    EXPECT_TRUE(c1.at("delta").as_object().empty());
    EXPECT_EQ(c1.at("finish_reason").as_string(), "stop");
}

TEST(LocalReplyTest, AnErrorTakesTheEnvelopeOfTheClientsApi) {
    const core::LocalError error{ErrorKind::kUpstreamTimeout, "too slow", ""};
    const LocalReply anthropic = RenderError(Wire::kAnthropic, error);
    EXPECT_EQ(anthropic.status, 504u);
    const auto a = boost::json::parse(anthropic.body).as_object();
    EXPECT_EQ(a.at("type").as_string(), "error");
    EXPECT_EQ(a.at("error").at("message").as_string(), "too slow");
    for (const Wire openai_shaped : {Wire::kOpenAi, Wire::kResponses}) {
        const LocalReply reply = RenderError(openai_shaped, error);
        EXPECT_EQ(reply.status, 504u);
        EXPECT_EQ(reply.body, RenderOpenAiError(error).body);
    }
}

TEST(LocalReplyTest, TheDegradationSpeaksTheClientsApi) {
    const boost::json::object request{{"model", "m"}, {"input", "hi"}};
    const std::string content = "Busy; try later.";
    // Whole.
    EXPECT_EQ(RenderDegradation(Wire::kOpenAi, content, 7, false, request),
              RenderOpenAiStaticCompletion(content, 7, false));
    const auto message =
        boost::json::parse(RenderDegradation(Wire::kAnthropic, content, 7, false, request))
            .as_object();
    EXPECT_EQ(message.at("type").as_string(), "message");
    EXPECT_EQ(message.at("content").at(0).at("text").as_string(), content);
    const auto response =
        boost::json::parse(RenderDegradation(Wire::kResponses, content, 7, false, request))
            .as_object();
    EXPECT_EQ(response.at("object").as_string(), "response");
    EXPECT_EQ(response.at("status").as_string(), "completed");
    EXPECT_NE(boost::json::serialize(response.at("output")).find(content), std::string::npos);
    // Streamed: each API's own end.
    EXPECT_EQ(RenderDegradation(Wire::kOpenAi, content, 7, true, request),
              RenderOpenAiStaticCompletion(content, 7, true));
    const std::string events = RenderDegradation(Wire::kAnthropic, content, 7, true, request);
    EXPECT_NE(events.find("event: message_start\n"), std::string::npos) << events;
    EXPECT_NE(events.find(content), std::string::npos) << events;
    EXPECT_NE(events.find("event: message_stop\n"), std::string::npos) << events;
    const std::string responses = RenderDegradation(Wire::kResponses, content, 7, true, request);
    EXPECT_NE(responses.find("event: response.created\n"), std::string::npos) << responses;
    EXPECT_NE(responses.find("event: response.completed\n"), std::string::npos) << responses;
}

TEST(LocalReplyTest, AStreamErrorEventIsEachApisErrorEvent) {
    const std::string openai = StreamErrorEvent(Wire::kOpenAi, "cut", 0);
    ASSERT_EQ(openai.rfind("data: ", 0), 0u);
    EXPECT_EQ(boost::json::parse(openai.substr(6)).at("error").at("code").as_string(),
              "stream_interrupted");
    const std::string anthropic = StreamErrorEvent(Wire::kAnthropic, "cut", 0);
    ASSERT_EQ(anthropic.rfind("event: error\ndata: ", 0), 0u);
    EXPECT_EQ(boost::json::parse(anthropic.substr(19)).at("error").at("type").as_string(),
              "api_error");
    const std::string responses = StreamErrorEvent(Wire::kResponses, "cut", 12);
    ASSERT_EQ(responses.rfind("event: error\ndata: ", 0), 0u);
    EXPECT_EQ(boost::json::parse(responses.substr(19)).at("sequence_number").to_number<int>(), 12);
}

}  // namespace local_reply_test
}  // namespace switchyard::api
