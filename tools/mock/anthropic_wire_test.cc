#include "anthropic_wire.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

namespace switchyard::mock::anthropic {
namespace {
namespace json = boost::json;

json::object ErrorOf(const std::string& body) { return json::parse(body).at("error").as_object(); }

std::string ReplaceOnce(std::string text, std::string_view from, std::string_view to) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
}

// anthropic-sdk-python tests/lib/streaming/fixtures/basic_response.txt (docs/providers.md#streams).
constexpr std::string_view kBasicResponseFixture =
    "event: message_start\n"
    R"(data: {"type":"message_start","message":{"id":"msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK",)"
    R"("type":"message","role":"assistant","content":[],"model":"claude-3-opus-latest",)"
    R"("stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":11,"output_tokens":1}}})"
    "\n\n"
    "event: content_block_start\n"
    R"(data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"
    "\n\n"
    "event: ping\n"
    R"(data: {"type": "ping"})"
    "\n\n"
    "event: content_block_delta\n"
    R"(data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}})"
    "\n\n"
    "event: content_block_stop\n"
    R"(data: {"type":"content_block_stop","index":0})"
    "\n\n"
    "event: message_delta\n"
    R"(data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},)"
    R"("usage":{"output_tokens":6}})"
    "\n\n"
    "event: message_stop\n"
    R"(data: {"type":"message_stop"})"
    "\n\n";

TEST(ParseMessagesRequest, ReadsTheFieldsTheMockActsOn) {
    const auto parsed = ParseMessagesRequest(
        R"({"model":"claude-x","max_tokens":1024,"stream":true,"system":"1234",)"
        R"("messages":[{"role":"user","content":"12345678"},)"
        R"({"role":"user","content":[{"type":"text","text":"abcd"},{"type":"image"}]}],)"
        R"("tools":[{"name":"get_weather","input_schema":{}},{"name":"other"}]})",
        "req_1");
    ASSERT_EQ(parsed.status, 0) << parsed.error_body;
    EXPECT_EQ(parsed.request.model, "claude-x");
    EXPECT_TRUE(parsed.request.stream);
    EXPECT_EQ(parsed.request.input_tokens, 4);  // 16 characters / 4.
    ASSERT_TRUE(parsed.request.tools.candidate);
    EXPECT_EQ(parsed.request.tools.candidate->name, "get_weather");
    EXPECT_EQ(parsed.request.tools.candidate->arguments, "{}");
    EXPECT_FALSE(parsed.request.tools.forced);
}

TEST(ParseMessagesRequest, Defaults) {
    const auto parsed = ParseMessagesRequest(R"({"model":"m","messages":[],"max_tokens":1})", "r");
    ASSERT_EQ(parsed.status, 0);
    EXPECT_EQ(parsed.request.input_tokens, 1);
    EXPECT_FALSE(parsed.request.stream);
    EXPECT_FALSE(parsed.request.tools.candidate);
    EXPECT_FALSE(
        ParseMessagesRequest(R"({"model":"m","messages":[],"max_tokens":1,"tools":[]})", "r")
            .request.tools.candidate);
}

TEST(ParseMessagesRequest, ToolChoiceForcesACall) {
    const auto tools_with = [](std::string_view choice) {
        const auto parsed = ParseMessagesRequest(
            std::string(
                R"({"model":"m","messages":[],"max_tokens":1,"tools":[)"
                R"({"name":"a","input_schema":{"type":"object","properties":)"
                R"({"city":{"type":"string"},"n":{"type":"integer"}},"required":["city"]}},)"
                R"({"name":"b","input_schema":{"type":"object"}}])") +
                std::string(choice) + "}",
            "r");
        EXPECT_EQ(parsed.status, 0) << parsed.error_body;
        return parsed.request.tools;
    };
    EXPECT_EQ(tools_with("").Call(false), nullptr);
    EXPECT_EQ(tools_with(R"(,"tool_choice":{"type":"auto"})").Call(false), nullptr);
    const ToolChoice any = tools_with(R"(,"tool_choice":{"type":"any"})");
    ASSERT_NE(any.Call(false), nullptr);
    EXPECT_EQ(any.Call(false)->name, "a");
    EXPECT_EQ(any.Call(false)->arguments, R"({"city":"value"})");
    const ToolChoice named = tools_with(R"(,"tool_choice":{"type":"tool","name":"b"})");
    ASSERT_NE(named.Call(false), nullptr);
    EXPECT_EQ(named.Call(false)->name, "b");
    EXPECT_EQ(named.Call(false)->arguments, "{}");
    EXPECT_EQ(tools_with(R"(,"tool_choice":{"type":"none"})").Call(true), nullptr);
}

TEST(ParseMessagesRequest, RejectsInvalidBodiesWithAnthropicEnvelopes) {
    const auto message_of = [](std::string_view body) {
        const auto parsed = ParseMessagesRequest(body, "req_abc");
        EXPECT_EQ(parsed.status, 400) << body;
        const auto root = json::parse(parsed.error_body).as_object();
        EXPECT_EQ(root.at("type"), "error");
        EXPECT_EQ(root.at("request_id"), "req_abc");
        EXPECT_EQ(root.at("error").at("type"), "invalid_request_error");
        return std::string(root.at("error").at("message").as_string());
    };
    EXPECT_EQ(message_of("{\"model\":"), "The request body is not valid JSON.");
    EXPECT_EQ(message_of("[]"), "Input should be a valid dictionary");
    EXPECT_EQ(message_of(R"({"messages":[],"max_tokens":1})"), "model: Field required");
    EXPECT_EQ(message_of(R"({"model":1,"messages":[],"max_tokens":1})"),
              "model: Input should be a valid string");
    EXPECT_EQ(message_of(R"({"model":"m","max_tokens":1})"), "messages: Field required");
    EXPECT_EQ(message_of(R"({"model":"m","messages":{},"max_tokens":1})"),
              "messages: Input should be a valid list");
    EXPECT_EQ(message_of(R"({"model":"m","messages":[]})"), "max_tokens: Field required");
    EXPECT_EQ(message_of(R"({"model":"m","messages":[],"max_tokens":"9"})"),
              "max_tokens: Input should be a valid integer");
    EXPECT_EQ(message_of(R"({"model":"m","messages":[],"max_tokens":1.5})"),
              "max_tokens: Input should be a valid integer");
    EXPECT_EQ(message_of(R"({"model":"m","messages":[],"max_tokens":0})"),
              "max_tokens: Input should be greater than or equal to 1");
}

TEST(AppendMessage, MatchesTheMessageObject) {
    std::string body;
    AppendMessage(body, {"msg_1", "claude\"x"}, ReplyText("claude\"x", std::nullopt), {7, 4});
    EXPECT_EQ(body, R"({"id":"msg_1","type":"message","role":"assistant","model":"claude\"x",)"
                    R"("content":[{"type":"text","text":"Mock reply from claude\"x."}],)"
                    R"("stop_reason":"end_turn","stop_sequence":null,)"
                    R"("usage":{"input_tokens":7,"output_tokens":4}})");
    body.clear();
    AppendMessage(body, {"msg_1", "m"}, ReplyText("m", 2), {1, 2});
    EXPECT_NE(body.find(R"("text":"word1 word2")"), std::string::npos) << body;
}

TEST(AppendToolUseMessage, MatchesTheMessageObject) {
    const ToolCall call{"get_weather", R"({"city":"value"})"};
    std::string body;
    AppendToolUseMessage(body, {"msg_1", "m"}, {"toolu_1", call}, {7, ToolUseOutputTokens(call)});
    EXPECT_EQ(body, R"({"id":"msg_1","type":"message","role":"assistant","model":"m",)"
                    R"("content":[{"type":"tool_use","id":"toolu_1","name":"get_weather",)"
                    R"("input":{"city":"value"}}],"stop_reason":"tool_use","stop_sequence":null,)"
                    R"("usage":{"input_tokens":7,"output_tokens":4}})");
}

TEST(StreamEvents, OneWordReplyHasTheFixtureBytes) {
    const MessageIdentity identity{"msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK",
                                   "claude-3-opus-latest"};
    const ReplyText reply(identity.model, 1);
    std::string out;
    AppendMessageStart(out, identity, 11);
    AppendTextBlockStart(out);
    AppendPing(out);
    AppendTextDelta(out, reply, 0);
    AppendBlockStop(out);
    AppendMessageDelta(out, "end_turn", reply.WordCount());
    AppendMessageStop(out);
    // Only the text and the output token count differ from the recorded response.
    std::string expected =
        ReplaceOnce(std::string(kBasicResponseFixture), R"("text":"Hello")", R"("text":"word1")");
    expected = ReplaceOnce(expected, R"({"output_tokens":6})", R"({"output_tokens":1})");
    EXPECT_EQ(out, expected);
}

TEST(StreamEvents, LaterWordsHaveALeadingSpace) {
    std::string out;
    AppendTextDelta(out, ReplyText("m", 3), 2);
    EXPECT_EQ(out,
              "event: content_block_delta\n"
              R"(data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta",)"
              R"("text":" word3"}})"
              "\n\n");
}

TEST(StreamEvents, ToolUse) {
    const ToolCall call{"get_weather", R"({"query":"value"})"};
    std::string out;
    AppendToolUseBlockStart(out, {"toolu_1", call});
    EXPECT_EQ(out,
              "event: content_block_start\n"
              R"(data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use",)"
              R"("id":"toolu_1","name":"get_weather","input":{}}})"
              "\n\n");
    const auto fragments = ToolInputFragments(call.arguments);
    ASSERT_EQ(fragments.size(), 4U);
    EXPECT_EQ(ToolUseOutputTokens(call), 4);
    std::string json;
    for (const auto fragment : fragments) json += fragment;
    EXPECT_EQ(json, call.arguments);
    EXPECT_EQ(fragments.front(), "");
    out.clear();
    AppendInputJsonDelta(out, R"({"query":)");
    EXPECT_EQ(out,
              "event: content_block_delta\n"
              R"(data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta",)"
              R"("partial_json":"{\"query\":"}})"
              "\n\n");
    out.clear();
    AppendMessageDelta(out, "tool_use", 3);
    EXPECT_NE(out.find(R"("delta":{"stop_reason":"tool_use","stop_sequence":null})"),
              std::string::npos);
}

TEST(MessageStream, TextIsTheFixtureSequence) {
    const MessageIdentity identity{"msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK",
                                   "claude-3-opus-latest"};
    const ReplyText reply(identity.model, 1);
    const MessageStream script(identity, 11, reply);
    std::string out;
    for (int i = 0; i < script.OpeningCount(); ++i) script.AppendOpening(out, i);
    for (int i = 0; i < script.DeltaCount(); ++i) script.AppendDelta(out, i);
    for (int i = 0; i < script.ClosingCount(); ++i) script.AppendClosing(out, i);
    std::string expected =
        ReplaceOnce(std::string(kBasicResponseFixture), R"("text":"Hello")", R"("text":"word1")");
    expected = ReplaceOnce(expected, R"({"output_tokens":6})", R"({"output_tokens":1})");
    EXPECT_EQ(out, expected);
}

TEST(MessageStream, ToolUseStreamsTheInputInFragments) {
    const ToolCall call{"get_weather", R"({"city":"value"})"};
    const MessageStream script({"msg_1", "m"}, 3, ToolUse{"toolu_1", call});
    ASSERT_EQ(script.DeltaCount(), 4);
    std::string out;
    script.AppendOpening(out, 1);
    EXPECT_NE(out.find(R"("content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather",)"
                       R"("input":{}})"),
              std::string::npos)
        << out;
    std::string input;
    for (int i = 0; i < script.DeltaCount(); ++i) {
        out.clear();
        script.AppendDelta(out, i);
        const auto data = json::parse(out.substr(out.find("data: ") + 6));
        EXPECT_EQ(data.at("delta").at("type"), "input_json_delta");
        input += data.at("delta").at("partial_json").as_string();
    }
    EXPECT_EQ(input, call.arguments);
    out.clear();
    script.AppendClosing(out, 1);
    EXPECT_NE(out.find(R"({"stop_reason":"tool_use","stop_sequence":null},)"
                       R"("usage":{"output_tokens":4})"),
              std::string::npos)
        << out;
    out.clear();
    script.AppendError(out, 2, std::nullopt);  // The overload error, as the SDK fixture has it.
    EXPECT_EQ(out,
              "event: error\n"
              R"(data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"
              "\n\n");
}

TEST(StreamEvents, ErrorEventHasTheSdkFixtureBytes) {
    std::string out;
    AppendErrorEvent(out, ErrorBody(529, std::nullopt, "m", {}));
    EXPECT_EQ(out,
              "event: error\n"
              R"(data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"
              "\n\n");
}

TEST(ErrorBody, StatusBodies) {
    EXPECT_EQ(ErrorBody(529, std::nullopt, "m", "req_1"),
              R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},)"
              R"("request_id":"req_1"})");
    EXPECT_EQ(ErrorBody(401, std::nullopt, "m", "req_1"),
              R"({"type":"error","error":{"type":"authentication_error",)"
              R"("message":"invalid x-api-key"},"request_id":"req_1"})");
    EXPECT_EQ(ErrorBody(429, std::nullopt, "m", "req_1"),
              R"({"type":"error","error":{"type":"rate_limit_error","message":"Number of request )"
              R"(tokens has exceeded your per-minute rate limit"},"request_id":"req_1"})");
    EXPECT_EQ(ErrorBody(500, std::nullopt, "m", "req_1"),
              R"({"type":"error","error":{"type":"api_error","message":"Internal server error"},)"
              R"("request_id":"req_1"})");
    EXPECT_EQ(ErrorOf(ErrorBody(404, std::nullopt, "claude-9", "r")).at("message"),
              "model: claude-9");
    const std::pair<int, const char*> types[] = {
        {400, "invalid_request_error"},
        {401, "authentication_error"},
        {402, "billing_error"},
        {403, "permission_error"},
        {404, "not_found_error"},
        {409, "conflict_error"},
        {413, "request_too_large"},
        {429, "rate_limit_error"},
        {500, "api_error"},
        {504, "timeout_error"},
        {529, "overloaded_error"},
        {418, "invalid_request_error"},
        {422, "invalid_request_error"},
        {502, "api_error"},
        {503, "api_error"},
        {599, "api_error"},
    };
    for (const auto& [status, type] : types) {
        const std::string body = ErrorBody(status, std::nullopt, "m", "req_x");
        const auto root = json::parse(body).as_object();
        EXPECT_EQ(root.at("type"), "error") << status;
        EXPECT_EQ(root.at("request_id"), "req_x") << status;
        EXPECT_EQ(root.at("error").at("type"), type) << status;
        EXPECT_FALSE(root.at("error").at("message").as_string().empty()) << status;
        EXPECT_EQ(ErrorTypeForStatus(status), type) << status;
    }
}

TEST(ErrorBody, EmptyRequestIdIsLeftOut) {
    EXPECT_EQ(ErrorBody(529, std::nullopt, "m", {}),
              R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})");
}

TEST(ErrorBody, EnforcedSpendLimitCarriesTheErrorCode) {
    const std::string body = ErrorBody(429, NamedError::kEnforcedSpendLimit, "m", "req_1");
    EXPECT_TRUE(body.starts_with(R"({"type":"error","error":{"type":"rate_limit_error",)")) << body;
    EXPECT_TRUE(body.ends_with(R"(,"details":{"error_code":"enforced_spend_limit_reached"}},)"
                               R"("request_id":"req_1"})"))
        << body;
    EXPECT_EQ(NamedErrorStatus(NamedError::kEnforcedSpendLimit), 429);

    FaultSpec spec;
    spec.error = NamedError::kEnforcedSpendLimit;
    EXPECT_TRUE(SuppressesRetryAfter(spec));
    spec.error = NamedError::kRateLimit;
    EXPECT_FALSE(SuppressesRetryAfter(spec));
    EXPECT_FALSE(SuppressesRetryAfter(FaultSpec{}));
}

TEST(ErrorBody, NamedErrors) {
    EXPECT_EQ(
        ErrorBody(400, NamedError::kPromptTooLong, "m", "req_011CV5J4YZo4J3KLTDZgDN7S"),
        R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is )"
        R"(too long: 205351 tokens > 200000 maximum"},"request_id":"req_011CV5J4YZo4J3KLTDZgDN7S"})");
    EXPECT_EQ(ErrorBody(400, NamedError::kContextLength, "m", "r"),
              ErrorBody(400, NamedError::kPromptTooLong, "m", "r"));
    EXPECT_EQ(ErrorBody(529, NamedError::kOverloaded, "m", "r"),
              ErrorBody(529, std::nullopt, "m", "r"));
    EXPECT_EQ(NamedErrorStatus(NamedError::kOverloaded), 529);
    EXPECT_EQ(ErrorOf(ErrorBody(402, NamedError::kBilling, "m", "r")).at("type"), "billing_error");
    EXPECT_EQ(NamedErrorStatus(NamedError::kBilling), 402);
    EXPECT_EQ(ErrorBody(429, NamedError::kRateLimit, "m", "r"),
              ErrorBody(429, std::nullopt, "m", "r"));
    EXPECT_EQ(ErrorBody(500, NamedError::kServerError, "m", "r"),
              ErrorBody(500, std::nullopt, "m", "r"));
    EXPECT_EQ(ErrorBody(401, NamedError::kInvalidApiKey, "m", "r"), InvalidApiKeyBody("r"));
    EXPECT_EQ(ErrorBody(404, NamedError::kModelNotFound, "m", "r"),
              ErrorBody(404, std::nullopt, "m", "r"));
    EXPECT_EQ(ErrorBody(504, NamedError::kTimeout, "m", "r"),
              ErrorBody(504, std::nullopt, "m", "r"));
    // A status from `status=` does not change the named body.
    EXPECT_EQ(ErrorBody(500, NamedError::kOverloaded, "m", "r"),
              ErrorBody(529, std::nullopt, "m", "r"));
}

TEST(HasNamedError, OpenAiOnlyErrorsAreNotAvailable) {
    for (const auto error : {NamedError::kInsufficientQuota, NamedError::kCreditBalanceExhausted,
                             NamedError::kOrganizationSpendLimit, NamedError::kProjectSpendLimit,
                             NamedError::kContentPolicy, NamedError::kServerOverloaded}) {
        EXPECT_FALSE(HasNamedError(error)) << NamedErrorName(error);
        EXPECT_TRUE(openai::HasNamedError(error)) << NamedErrorName(error);
    }
    for (const auto error :
         {NamedError::kEnforcedSpendLimit, NamedError::kPromptTooLong, NamedError::kBilling}) {
        EXPECT_TRUE(HasNamedError(error)) << NamedErrorName(error);
        EXPECT_FALSE(openai::HasNamedError(error)) << NamedErrorName(error);
    }
    for (const auto error :
         {NamedError::kRateLimit, NamedError::kContextLength, NamedError::kServerError,
          NamedError::kInvalidApiKey, NamedError::kModelNotFound, NamedError::kTimeout,
          NamedError::kOverloaded}) {
        EXPECT_TRUE(HasNamedError(error)) << NamedErrorName(error);
        EXPECT_TRUE(openai::HasNamedError(error)) << NamedErrorName(error);
    }
}

TEST(InvalidMethodBody, NamesTheMethod) {
    EXPECT_EQ(ErrorOf(InvalidMethodBody("GET", "/v1/messages", "r")).at("message"),
              "Method not allowed: GET /v1/messages");
}

}  // namespace
}  // namespace switchyard::mock::anthropic
