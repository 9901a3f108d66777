#include "openai_wire.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <string>
#include <vector>

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

ChatRequest ChatWithTools(std::string_view extra) {
    const auto parsed = ParseChatRequest(
        std::string(R"({"model":"m","messages":[],"tools":[)"
                    R"({"type":"function","function":{"name":"first","parameters":)"
                    R"({"type":"object","properties":{"city":{"type":"string"},)"
                    R"("unit":{"enum":["c","f"]},"days":{"type":"integer","minimum":3}},)"
                    R"("required":["city","days"]}}},)"
                    R"({"type":"custom","custom":{"name":"not_a_function"}},)"
                    R"({"type":"function","function":{"name":"second"}}])") +
        std::string(extra) + "}");
    EXPECT_EQ(parsed.status, 0) << parsed.error_body;
    return parsed.request;
}

TEST(ParseChatRequest, ToolsAndToolChoice) {
    // No tool_choice: the model decides, so only tool_use=1 makes the answer a call.
    ChatRequest request = ChatWithTools("");
    ASSERT_TRUE(request.tools.candidate);
    EXPECT_FALSE(request.tools.forced);
    EXPECT_EQ(request.tools.Call(false), nullptr);
    ASSERT_NE(request.tools.Call(true), nullptr);
    EXPECT_EQ(request.tools.Call(true)->name, "first");
    // Every required property, each of its type; `unit` is optional.
    EXPECT_EQ(request.tools.candidate->arguments, R"({"city":"value","days":3})");

    request = ChatWithTools(R"(,"tool_choice":"auto")");
    EXPECT_EQ(request.tools.Call(false), nullptr);
    request = ChatWithTools(R"(,"tool_choice":"required")");
    ASSERT_NE(request.tools.Call(false), nullptr);
    EXPECT_EQ(request.tools.Call(false)->name, "first");
    request = ChatWithTools(R"(,"tool_choice":{"type":"function","function":{"name":"second"}})");
    ASSERT_NE(request.tools.Call(false), nullptr);
    EXPECT_EQ(request.tools.Call(false)->name, "second");
    EXPECT_EQ(request.tools.Call(false)->arguments, "{}");  // A tool without parameters.
    // "none" wins over tool_use=1: the model may not call a tool.
    request = ChatWithTools(R"(,"tool_choice":"none")");
    EXPECT_EQ(request.tools.Call(true), nullptr);

    EXPECT_FALSE(
        ParseChatRequest(R"({"model":"m","messages":[],"tools":[]})").request.tools.candidate);
    EXPECT_FALSE(ParseChatRequest(R"({"model":"m","messages":[],"tool_choice":"required"})")
                     .request.tools.candidate);
}

TEST(AppendToolCallCompletion, MatchesTheChatCompletionObject) {
    const ToolCall call{"get_weather", R"({"city":"value"})"};
    std::string body;
    AppendToolCallCompletion(body, {"chatcmpl-1", 1700000000, "m"}, "call_abc", call,
                             {7, ToolCallTokens(call)});
    EXPECT_EQ(body,
              R"({"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"m",)"
              R"("choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[)"
              R"({"id":"call_abc","type":"function","function":{"name":"get_weather",)"
              R"("arguments":"{\"city\":\"value\"}"}}],"refusal":null,"annotations":[]},)"
              R"("logprobs":null,"finish_reason":"tool_calls"}],)"
              R"("usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10},)"
              R"("service_tier":"default","system_fingerprint":"fp_mock"})");
}

// Every event of `script` in stream order.
std::vector<std::string> AllEvents(const StreamScript& script) {
    std::vector<std::string> events;
    const auto add = [&events](auto append) {
        std::string event;
        append(event);
        events.push_back(std::move(event));
    };
    for (int i = 0; i < script.OpeningCount(); ++i) {
        add([&](std::string& out) { script.AppendOpening(out, i); });
    }
    for (int i = 0; i < script.DeltaCount(); ++i) {
        add([&](std::string& out) { script.AppendDelta(out, i); });
    }
    for (int i = 0; i < script.ClosingCount(); ++i) {
        add([&](std::string& out) { script.AppendClosing(out, i); });
    }
    return events;
}

json::value DataOf(const std::string& event) {
    EXPECT_TRUE(event.starts_with("data: ") && event.ends_with("\n\n")) << event;
    return json::parse(event.substr(6, event.size() - 8));
}

TEST(ChatStream, ToolCallEvents) {
    const ToolCall call{"get_weather", R"({"city":"value"})"};
    const ChatStream script({"chatcmpl-1", 5, "m"}, true, 7, "call_abc", call);
    const auto events = AllEvents(script);
    // Role, call start, three argument fragments, finish, usage, [DONE].
    ASSERT_EQ(events.size(), 8U);
    EXPECT_EQ(DataOf(events[0]).at("choices").at(0).at("delta"),
              json::parse(R"({"role":"assistant","content":null,"refusal":null})"));
    EXPECT_EQ(DataOf(events[1]).at("choices").at(0).at("delta"),
              json::parse(R"({"tool_calls":[{"index":0,"id":"call_abc","type":"function",)"
                          R"("function":{"name":"get_weather","arguments":""}}]})"));
    std::string arguments;
    for (std::size_t i = 2; i < 5; ++i) {
        const auto tool_call = DataOf(events[i]).at("choices").at(0).at("delta").at("tool_calls");
        ASSERT_EQ(tool_call.as_array().size(), 1U);
        EXPECT_EQ(tool_call.at(0).at("index"), 0);
        EXPECT_FALSE(tool_call.at(0).as_object().contains("id"));
        arguments += tool_call.at(0).at("function").at("arguments").as_string();
    }
    EXPECT_EQ(arguments, call.arguments);
    const auto finish = DataOf(events[5]).at("choices").at(0);
    EXPECT_EQ(finish.at("finish_reason"), "tool_calls");
    EXPECT_TRUE(finish.at("delta").as_object().empty());
    EXPECT_EQ(DataOf(events[6]).at("usage").at("completion_tokens"), 3);
    EXPECT_EQ(events[7], "data: [DONE]\n\n");
    for (std::size_t i = 0; i < 6; ++i) EXPECT_TRUE(DataOf(events[i]).at("usage").is_null());
}

TEST(ChatStream, TextEventsAreThoseOfChunkEvents) {
    const ReplyText reply("m", 2);
    const ChatStream script({"chatcmpl-1", 5, "m"}, false, 7, reply);
    const ChunkEvents chunks({"chatcmpl-1", 5, "m"}, false);
    std::string expected;
    chunks.AppendRole(expected);
    chunks.AppendWord(expected, reply, 0);
    chunks.AppendWord(expected, reply, 1);
    chunks.AppendFinish(expected);
    ChunkEvents::AppendDone(expected);
    std::string all;
    for (const std::string& event : AllEvents(script)) all += event;
    EXPECT_EQ(all, expected);

    std::string error;
    script.AppendError(error, 1, std::nullopt);
    EXPECT_EQ(DataOf(error).at("error").at("type"), "server_error");
    error.clear();
    script.AppendError(error, 1, NamedError::kInsufficientQuota);
    EXPECT_EQ(DataOf(error).at("error").at("code"), "insufficient_quota");
}

TEST(ReplyText, PaddingGoesAfterTheFirstWordOnce) {
    ReplyText reply("m", std::nullopt);
    reply.Pad(5);
    std::string text;
    reply.AppendText(text);
    EXPECT_EQ(text, "Mockxxxxx reply from m.");
    std::string word;
    reply.AppendWord(word, 1);
    EXPECT_EQ(word, " reply");
    std::string quoted;
    reply.AppendTextJson(quoted);
    EXPECT_EQ(quoted, R"("Mockxxxxx reply from m.")");
    quoted.clear();
    reply.AppendWordJson(quoted, 0);
    EXPECT_EQ(quoted, R"("Mockxxxxx")");

    // A JSON document is padded with blanks, which keep it valid JSON.
    ReplyText structured("m", std::nullopt, R"({"a":"\"q\""})");
    structured.Pad(3);
    text.clear();
    structured.AppendText(text);
    EXPECT_EQ(text, R"({"a":"\"q\""}   )");
    EXPECT_EQ(json::parse(text), json::parse(R"({"a":"\"q\""})"));
    quoted.clear();
    structured.AppendTextJson(quoted);
    EXPECT_EQ(json::parse(quoted).as_string(), text);

    ReplyText empty("m", 0);
    empty.Pad(10);
    quoted.clear();
    empty.AppendTextJson(quoted);
    EXPECT_EQ(quoted, R"("")");
}

TEST(ReplyText, JsonFormsMatchThePlainText) {
    for (const std::optional<int> chunks : {std::optional<int>(), std::optional<int>(0),
                                            std::optional<int>(1), std::optional<int>(3)}) {
        const ReplyText reply("m\"\\x", chunks);
        std::string text;
        reply.AppendText(text);
        std::string quoted;
        reply.AppendTextJson(quoted);
        EXPECT_EQ(json::parse(quoted).as_string(), text);
    }
    std::string text;
    ReplyText::Verbatim("Late reply from m.").AppendText(text);
    EXPECT_EQ(text, "Late reply from m.");
    EXPECT_EQ(ReplyText::Verbatim("x y").WordCount(), 1);
}

TEST(AppendCompletion, PaddingGrowsTheBodyByItsLength) {
    ReplyText reply("m", std::nullopt);
    std::string plain;
    AppendCompletion(plain, {"chatcmpl-1", 5, "m"}, reply, {1, 4});
    reply.Pad(1000);
    std::string padded;
    AppendCompletion(padded, {"chatcmpl-1", 5, "m"}, reply, {1, 4});
    EXPECT_EQ(padded.size(), plain.size() + 1000);
    EXPECT_EQ(json::parse(padded).at("choices").at(0).at("message").at("content").as_string(),
              "Mock" + std::string(1000, 'x') + " reply from m.");
}

}  // namespace
}  // namespace switchyard::mock::openai
