#include "policy/classify.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace switchyard::policy {
namespace classify_test {

using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::system_clock;

// Tue, 14 Nov 2023 22:13:20 GMT.
const system_clock::time_point kNow{seconds(1'700'000'000)};

struct Headers {
    std::optional<std::string_view> retry_after;
    std::optional<std::string_view> retry_after_ms;
    std::optional<std::string_view> should_retry;
};

Outcome Http(unsigned status, std::string_view body = "", Headers headers = {}) {
    AttemptResult r;
    r.status = status;
    r.body = body;
    r.retry_after = headers.retry_after;
    r.retry_after_ms = headers.retry_after_ms;
    r.should_retry = headers.should_retry;
    return Classify(r, kNow);
}

Outcome Failed(Transport transport) {
    AttemptResult r;
    r.transport = transport;
    return Classify(r, kNow);
}

// Bodies as in docs/providers.md#anthropic-errors and docs/providers.md#openai-errors.
constexpr std::string_view kAnthropicSpendLimit =
    R"({"type":"error","error":{"type":"rate_limit_error","message":"You have reached your specified workspace API usage limits.","details":{"error_code":"enforced_spend_limit_reached"}},"request_id":"req_011"})";
constexpr std::string_view kAnthropicRateLimit =
    R"({"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"},"request_id":"req_012"})";
constexpr std::string_view kOpenAiInsufficientQuota =
    R"({"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}})";
constexpr std::string_view kOpenAiOrgSpendLimit =
    R"({"error":{"message":"You have reached your organization spend limit.","type":"insufficient_quota","param":null,"code":"organization_spend_limit_exceeded"}})";
constexpr std::string_view kOpenAiProjectSpendLimit =
    R"({"error":{"message":"You have reached your project spend limit.","type":"requests","param":null,"code":"project_spend_limit_exceeded"}})";
constexpr std::string_view kOpenAiCreditExhausted =
    R"({"error":{"message":"You have no credits remaining.","type":"insufficient_quota","param":null,"code":"credit_balance_exhausted"}})";
constexpr std::string_view kOpenAiRateLimit =
    R"({"error":{"message":"Rate limit reached for requests. Limit 3500 per min.","type":"requests","code":"rate_limit_exceeded"}})";
constexpr std::string_view kAnthropicOverloaded =
    R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})";
constexpr std::string_view kAnthropicApiError =
    R"({"type":"error","error":{"details":null,"type":"api_error","message":"Internal server error"},"request_id":"req_011CUG87Nouv5MoeFiViEwc3"})";
constexpr std::string_view kAnthropicTimeout =
    R"({"type":"error","error":{"type":"timeout_error","message":"The request timed out while processing"}})";
constexpr std::string_view kOpenAiOverloaded =
    R"({"error":{"message":"Our servers are currently overloaded. Please try again later.","type":"service_unavailable_error","param":null,"code":"server_is_overloaded"}})";
constexpr std::string_view kOpenAiContextLength =
    R"({"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})";
constexpr std::string_view kAnthropicPromptTooLong =
    R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 205351 tokens > 200000 maximum"},"request_id":"req_011CV5J4YZo4J3KLTDZgDN7S"})";
constexpr std::string_view kOpenAiContentPolicy =
    R"({"error":{"message":"Your request was rejected as a result of our safety system.","type":"invalid_request_error","param":null,"code":"content_policy_violation"}})";
constexpr std::string_view kAzureContentFilter =
    R"({"error":{"message":"The response was filtered due to the prompt triggering content management policy.","type":null,"param":"prompt","code":"content_filter","status":400}})";
constexpr std::string_view kOpenAiBadKey =
    R"({"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}})";
constexpr std::string_view kAnthropicInvalid =
    R"({"type":"error","error":{"type":"invalid_request_error","message":"messages: field required"}})";

void ExpectOutcome(const Outcome& o, Action action, ErrorClass error_class) {
    EXPECT_EQ(o.action, action) << Name(o.action) << " != " << Name(action);
    EXPECT_EQ(o.error_class, error_class) << Name(o.error_class) << " != " << Name(error_class);
}

TEST(ClassifyTest, SuccessIsSuccessWhateverTheHeaders) {
    for (unsigned status : {200u, 201u, 204u, 299u}) {
        const Outcome o = Http(status, "not json", {.retry_after = "5", .should_retry = "false"});
        ExpectOutcome(o, Action::kSuccess, ErrorClass::kNone);
        EXPECT_FALSE(o.retry_after) << status;
    }
}

TEST(ClassifyTest, RateLimitWithRetryAfterSeconds) {
    const Outcome o = Http(429, kOpenAiRateLimit, {.retry_after = "20"});
    ExpectOutcome(o, Action::kRetry, ErrorClass::kRateLimited);
    EXPECT_EQ(o.retry_after, milliseconds(20'000));
}

TEST(ClassifyTest, RateLimitWithFractionalRetryAfter) {
    const Outcome o = Http(429, kAnthropicRateLimit, {.retry_after = "1.5"});
    ExpectOutcome(o, Action::kRetry, ErrorClass::kRateLimited);
    EXPECT_EQ(o.retry_after, milliseconds(1'500));
}

TEST(ClassifyTest, RateLimitWithHttpDateRetryAfter) {
    const Outcome o =
        Http(429, kAnthropicRateLimit, {.retry_after = "Tue, 14 Nov 2023 22:14:05 GMT"});
    ExpectOutcome(o, Action::kRetry, ErrorClass::kRateLimited);
    EXPECT_EQ(o.retry_after, milliseconds(45'000));
}

TEST(ClassifyTest, RetryAfterMsIsPreferredOverRetryAfter) {
    const Outcome o = Http(429, kOpenAiRateLimit, {.retry_after = "30", .retry_after_ms = "250"});
    ExpectOutcome(o, Action::kRetry, ErrorClass::kRateLimited);
    EXPECT_EQ(o.retry_after, milliseconds(250));
}

TEST(ClassifyTest, RateLimitWithoutRetryAfter) {
    const Outcome o = Http(429, kOpenAiRateLimit);
    ExpectOutcome(o, Action::kRetry, ErrorClass::kRateLimited);
    EXPECT_FALSE(o.retry_after);
    ExpectOutcome(Http(429), Action::kRetry, ErrorClass::kRateLimited);
}

TEST(ClassifyTest, AnthropicSpendLimitFailsOver) {
    const Outcome o = Http(429, kAnthropicSpendLimit);
    ExpectOutcome(o, Action::kFailOver, ErrorClass::kQuotaExhausted);
    EXPECT_FALSE(o.retry_after);
}

TEST(ClassifyTest, OpenAiInsufficientQuotaFailsOver) {
    ExpectOutcome(Http(429, kOpenAiInsufficientQuota), Action::kFailOver,
                  ErrorClass::kQuotaExhausted);
}

TEST(ClassifyTest, OpenAiOrganizationSpendLimitFailsOver) {
    ExpectOutcome(Http(429, kOpenAiOrgSpendLimit), Action::kFailOver, ErrorClass::kQuotaExhausted);
}

TEST(ClassifyTest, OpenAiProjectSpendLimitFailsOver) {
    ExpectOutcome(Http(429, kOpenAiProjectSpendLimit), Action::kFailOver,
                  ErrorClass::kQuotaExhausted);
}

TEST(ClassifyTest, OpenAiCreditBalanceExhaustedFailsOver) {
    ExpectOutcome(Http(429, kOpenAiCreditExhausted), Action::kFailOver,
                  ErrorClass::kQuotaExhausted);
}

TEST(ClassifyTest, QuotaFailsOverEvenWithRetryAfter) {
    // A spend cap does not lift in retry-after seconds; the deployment is out until a human acts.
    const Outcome o = Http(429, kOpenAiInsufficientQuota, {.retry_after = "3"});
    ExpectOutcome(o, Action::kFailOver, ErrorClass::kQuotaExhausted);
}

TEST(ClassifyTest, PaymentRequiredIsQuota) {
    ExpectOutcome(
        Http(402, R"({"type":"error","error":{"type":"billing_error","message":"Billing issue"}})"),
        Action::kFailOver, ErrorClass::kQuotaExhausted);
    ExpectOutcome(Http(402), Action::kFailOver, ErrorClass::kQuotaExhausted);
}

TEST(ClassifyTest, InternalServerErrorRetries) {
    ExpectOutcome(Http(500, kAnthropicApiError), Action::kRetry, ErrorClass::kServerError);
    ExpectOutcome(Http(500), Action::kRetry, ErrorClass::kServerError);
}

TEST(ClassifyTest, BadGatewayRetries) {
    ExpectOutcome(Http(502, "<html>Bad Gateway</html>"), Action::kRetry, ErrorClass::kServerError);
}

TEST(ClassifyTest, ServiceUnavailableIsOverloaded) {
    ExpectOutcome(Http(503, kOpenAiOverloaded), Action::kRetry, ErrorClass::kOverloaded);
    ExpectOutcome(Http(503), Action::kRetry, ErrorClass::kOverloaded);
}

TEST(ClassifyTest, AnthropicOverloadedRetries) {
    ExpectOutcome(Http(529, kAnthropicOverloaded), Action::kRetry, ErrorClass::kOverloaded);
    ExpectOutcome(Http(529), Action::kRetry, ErrorClass::kOverloaded);
    // The type decides when a provider sends overloaded_error with a plain 5xx.
    ExpectOutcome(Http(500, kAnthropicOverloaded), Action::kRetry, ErrorClass::kOverloaded);
}

TEST(ClassifyTest, OtherServerErrorsRetry) {
    for (unsigned status : {501u, 505u, 520u, 599u}) {
        ExpectOutcome(Http(status), Action::kRetry, ErrorClass::kServerError);
    }
}

TEST(ClassifyTest, GatewayTimeoutRetriesAsTimeout) {
    ExpectOutcome(Http(504, kAnthropicTimeout), Action::kRetry, ErrorClass::kTimeout);
    ExpectOutcome(Http(504), Action::kRetry, ErrorClass::kTimeout);
}

TEST(ClassifyTest, RequestTimeoutAndConflictRetry) {
    ExpectOutcome(Http(408), Action::kRetry, ErrorClass::kRetryableClient);
    ExpectOutcome(Http(409, R"({"type":"error","error":{"type":"conflict_error","message":"x"}})"),
                  Action::kRetry, ErrorClass::kRetryableClient);
}

TEST(ClassifyTest, OpenAiContextLengthFallsBackByContext) {
    const Outcome o = Http(400, kOpenAiContextLength);
    ExpectOutcome(o, Action::kContextFallback, ErrorClass::kContextWindow);
}

TEST(ClassifyTest, AnthropicPromptTooLongFallsBackByContext) {
    ExpectOutcome(Http(400, kAnthropicPromptTooLong), Action::kContextFallback,
                  ErrorClass::kContextWindow);
}

TEST(ClassifyTest, ContentPolicyViolationFallsBackByContent) {
    ExpectOutcome(Http(400, kOpenAiContentPolicy), Action::kContentFallback,
                  ErrorClass::kContentPolicy);
}

TEST(ClassifyTest, ContentFilterFallsBackByContent) {
    ExpectOutcome(Http(400, kAzureContentFilter), Action::kContentFallback,
                  ErrorClass::kContentPolicy);
}

TEST(ClassifyTest, ContextAndContentCodesOnAServerErrorStillRetry) {
    // Only a client error says the prompt itself is the problem.
    ExpectOutcome(Http(500, kOpenAiContextLength), Action::kRetry, ErrorClass::kServerError);
    ExpectOutcome(Http(503, kOpenAiContentPolicy), Action::kRetry, ErrorClass::kOverloaded);
}

TEST(ClassifyTest, BadRequestGivesUp) {
    ExpectOutcome(Http(400, kAnthropicInvalid), Action::kGiveUp, ErrorClass::kBadRequest);
    ExpectOutcome(Http(400), Action::kGiveUp, ErrorClass::kBadRequest);
}

TEST(ClassifyTest, UnauthorizedGivesUp) {
    ExpectOutcome(Http(401, kOpenAiBadKey), Action::kGiveUp, ErrorClass::kAuth);
}

TEST(ClassifyTest, ForbiddenGivesUp) {
    ExpectOutcome(
        Http(403, R"({"type":"error","error":{"type":"permission_error","message":"no"}})"),
        Action::kGiveUp, ErrorClass::kAuth);
}

TEST(ClassifyTest, NotFoundGivesUp) {
    ExpectOutcome(
        Http(404, R"({"type":"error","error":{"type":"not_found_error","message":"model: x"}})"),
        Action::kGiveUp, ErrorClass::kNotFound);
}

TEST(ClassifyTest, PayloadTooLargeGivesUp) {
    ExpectOutcome(
        Http(413, R"({"type":"error","error":{"type":"request_too_large","message":"too big"}})"),
        Action::kGiveUp, ErrorClass::kBadRequest);
}

TEST(ClassifyTest, UnprocessableEntityGivesUp) {
    ExpectOutcome(Http(422, R"({"detail":[{"loc":["body","messages"],"msg":"field required"}]})"),
                  Action::kGiveUp, ErrorClass::kBadRequest);
}

TEST(ClassifyTest, ShouldRetryTrueMakesAClientErrorRetryable) {
    // Retried as a retryable client error, so class_retries has a budget for it.
    ExpectOutcome(Http(400, kAnthropicInvalid, {.should_retry = "true"}), Action::kRetry,
                  ErrorClass::kRetryableClient);
    ExpectOutcome(Http(404, "", {.should_retry = "true"}), Action::kRetry,
                  ErrorClass::kRetryableClient);
    EXPECT_EQ(Http(400, "", {.retry_after = "2", .should_retry = "true"}).retry_after,
              milliseconds(2'000));
}

TEST(ClassifyTest, ShouldRetryFalseStopsRetriesOfThisDeployment) {
    ExpectOutcome(Http(503, kOpenAiOverloaded, {.should_retry = "false"}), Action::kFailOver,
                  ErrorClass::kOverloaded);
    ExpectOutcome(Http(429, kOpenAiRateLimit, {.should_retry = "false"}), Action::kFailOver,
                  ErrorClass::kRateLimited);
}

TEST(ClassifyTest, ShouldRetryLeavesOtherActionsAlone) {
    ExpectOutcome(Http(400, kAnthropicInvalid, {.should_retry = "false"}), Action::kGiveUp,
                  ErrorClass::kBadRequest);
    ExpectOutcome(Http(503, "", {.should_retry = "true"}), Action::kRetry, ErrorClass::kOverloaded);
    ExpectOutcome(Http(400, kOpenAiContextLength, {.should_retry = "true"}),
                  Action::kContextFallback, ErrorClass::kContextWindow);
    // Only the exact values count.
    ExpectOutcome(Http(400, "", {.should_retry = "yes"}), Action::kGiveUp, ErrorClass::kBadRequest);
    ExpectOutcome(Http(503, "", {.should_retry = ""}), Action::kRetry, ErrorClass::kOverloaded);
}

TEST(ClassifyTest, RetryAfterIsReportedOnAnyFailure) {
    EXPECT_EQ(Http(503, kOpenAiOverloaded, {.retry_after = "2"}).retry_after, milliseconds(2'000));
    EXPECT_EQ(Http(529, "", {.retry_after_ms = "750"}).retry_after, milliseconds(750));
    EXPECT_FALSE(Http(503, "", {.retry_after = "soon"}).retry_after);
}

TEST(ClassifyTest, ConnectFailureFailsOver) {
    ExpectOutcome(Failed(Transport::kConnect), Action::kFailOver, ErrorClass::kConnection);
}

TEST(ClassifyTest, TlsFailureFailsOver) {
    ExpectOutcome(Failed(Transport::kTls), Action::kFailOver, ErrorClass::kTls);
}

TEST(ClassifyTest, ResetRetries) {
    ExpectOutcome(Failed(Transport::kReset), Action::kRetry, ErrorClass::kConnection);
}

TEST(ClassifyTest, TransportTimeoutRetries) {
    ExpectOutcome(Failed(Transport::kTimeout), Action::kRetry, ErrorClass::kTimeout);
}

TEST(ClassifyTest, ProtocolFailureFailsOver) {
    ExpectOutcome(Failed(Transport::kProtocol), Action::kFailOver, ErrorClass::kProtocol);
}

TEST(ClassifyTest, TransportDecidesBeforeStatusAndHeaders) {
    AttemptResult r;
    r.transport = Transport::kReset;
    r.status = 200;
    r.retry_after = "10";
    r.should_retry = "false";
    const Outcome o = Classify(r, kNow);
    ExpectOutcome(o, Action::kRetry, ErrorClass::kConnection);
    EXPECT_FALSE(o.retry_after);
}

TEST(ClassifyTest, GarbageBodiesFallBackToTheStatus) {
    const std::string deep(10'000, '[');
    const std::string binary("\x00\xff\xfe{\"error\"", 10);
    const std::string_view bodies[] = {
        "",
        "{",
        "null",
        "[]",
        "42",
        "\"error\"",
        "<html><body>502 Bad Gateway</body></html>",
        R"({"error":"insufficient_quota"})",
        R"({"error":null})",
        R"({"error":[{"code":"insufficient_quota"}]})",
        R"({"error":{"code":42,"type":["x"],"message":{"a":1}}})",
        R"({"error":{"details":"enforced_spend_limit_reached"}})",
        R"({"error":{"details":{"error_code":null}}})",
        R"({"error":{"code":"insufficient_quota"})",  // truncated
        deep,
        binary,
    };
    for (std::string_view body : bodies) {
        ExpectOutcome(Http(429, body), Action::kRetry, ErrorClass::kRateLimited);
        ExpectOutcome(Http(400, body), Action::kGiveUp, ErrorClass::kBadRequest);
        ExpectOutcome(Http(500, body), Action::kRetry, ErrorClass::kServerError);
    }
}

TEST(ClassifyTest, NamesAreDistinctAndStable) {
    EXPECT_EQ(Name(ErrorClass::kRateLimited), "rate_limited");
    EXPECT_EQ(Name(ErrorClass::kQuotaExhausted), "quota_exhausted");
    EXPECT_EQ(Name(Action::kFailOver), "fail_over");
    EXPECT_EQ(Name(Action::kContextFallback), "context_fallback");
    std::set<std::string_view> names;
    for (std::size_t i = 0; i < kErrorClassCount; ++i) {
        const auto c = static_cast<ErrorClass>(i);
        const std::string_view name = Name(c);
        EXPECT_NE(name, "unknown") << i;
        EXPECT_TRUE(names.insert(name).second) << name;
        EXPECT_EQ(ErrorClassNamed(name), c) << name;
    }
    // kErrorClassCount ends the enumeration: a class appended without raising it has a name here.
    EXPECT_EQ(Name(static_cast<ErrorClass>(kErrorClassCount)), "unknown");
}

}  // namespace classify_test
}  // namespace switchyard::policy
