#include "policy/rate_limit_headers.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace switchyard::policy {
namespace rate_limit_headers_test {

using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::system_clock;

system_clock::time_point At(long long unix_seconds) {
    return system_clock::time_point(seconds(unix_seconds));
}

TEST(GoDurationTest, ParsesOpenAiResetValues) {
    EXPECT_EQ(ParseGoDuration("1s"), milliseconds(1'000));
    EXPECT_EQ(ParseGoDuration("6m0s"), milliseconds(360'000));
    EXPECT_EQ(ParseGoDuration("12ms"), milliseconds(12));
    EXPECT_EQ(ParseGoDuration("1h2m3.5s"), milliseconds(3'723'500));
    EXPECT_EQ(ParseGoDuration("250us"), milliseconds(1)) << "rounded up";
    EXPECT_EQ(ParseGoDuration("0s"), milliseconds(0));
    EXPECT_FALSE(ParseGoDuration(""));
    EXPECT_FALSE(ParseGoDuration("5"));
    EXPECT_FALSE(ParseGoDuration("5x"));
    EXPECT_FALSE(ParseGoDuration("s"));
}

TEST(Rfc3339Test, ParsesAnthropicResets) {
    // 2024-03-26T20:00:00Z is 1711483200.
    EXPECT_EQ(ParseRfc3339("2024-03-26T20:00:00Z"), At(1'711'483'200));
    EXPECT_EQ(ParseRfc3339("2024-03-26T20:00:00.5Z"), At(1'711'483'200) + milliseconds(500));
    EXPECT_EQ(ParseRfc3339("2024-03-26T22:00:00+02:00"), At(1'711'483'200));
    EXPECT_EQ(ParseRfc3339("2024-03-26T18:30:00-01:30"), At(1'711'483'200));
    EXPECT_FALSE(ParseRfc3339("2024-02-30T00:00:00Z"));
    EXPECT_FALSE(ParseRfc3339("2024-03-26 20:00"));
    EXPECT_FALSE(ParseRfc3339("2024-03-26T20:00:00"));
    EXPECT_FALSE(ParseRfc3339("2024-03-26T25:00:00Z"));
    EXPECT_FALSE(ParseRfc3339("2024-03-26T20:00:00Zjunk"));
    // Years the nanosecond clock cannot hold overflowed it (found by fuzz_rate_limit_headers).
    EXPECT_FALSE(ParseRfc3339("0000-01-01T00:00:00Z"));
    EXPECT_FALSE(ParseRfc3339("1500-01-01T00:00:00Z"));
    EXPECT_FALSE(ParseRfc3339("9999-12-31T23:59:59Z"));
}

TEST(RateLimitHeadersTest, ReadsBothProviders) {
    const std::map<std::string, std::string> anthropic = {
        {"anthropic-ratelimit-requests-limit", "1000"},
        {"anthropic-ratelimit-requests-remaining", "999"},
        {"anthropic-ratelimit-requests-reset", "2024-03-26T20:00:00Z"},
        {"anthropic-ratelimit-input-tokens-limit", "80000"},
        {"anthropic-ratelimit-input-tokens-remaining", "80000"},
        {"anthropic-ratelimit-output-tokens-limit", "16000"},
        {"anthropic-ratelimit-tokens-limit", "96000"},
        {"anthropic-ratelimit-tokens-remaining", "not a number"}};
    auto lookup = [](const std::map<std::string, std::string>& headers) {
        std::vector<HeaderField> fields;
        for (const auto& [name, value] : headers) fields.emplace_back(name, value);
        return fields;
    };
    RateLimitHeaders h = ParseRateLimitHeaders(lookup(anthropic), At(0));
    EXPECT_EQ(h.requests.limit, 1000);
    EXPECT_EQ(h.requests.remaining, 999);
    EXPECT_EQ(h.requests.reset, At(1'711'483'200));
    EXPECT_EQ(h.input_tokens.limit, 80000);
    EXPECT_EQ(h.output_tokens.limit, 16000);
    EXPECT_FALSE(h.output_tokens.remaining);
    EXPECT_EQ(h.tokens.limit, 96000);
    EXPECT_FALSE(h.tokens.remaining) << "malformed values are skipped";

    const std::map<std::string, std::string> openai = {
        {"X-RateLimit-Limit-Requests", "60"},       {"x-ratelimit-remaining-requests", "59"},
        {"x-ratelimit-reset-requests", "1s"},       {"x-ratelimit-limit-tokens", "150000"},
        {"x-ratelimit-remaining-tokens", "149984"}, {"x-ratelimit-reset-tokens", "6m0s"}};
    h = ParseRateLimitHeaders(lookup(openai), At(100));
    EXPECT_EQ(h.requests.limit, 60);
    EXPECT_EQ(h.requests.remaining, 59);
    EXPECT_EQ(h.requests.reset, At(101));
    EXPECT_EQ(h.tokens.remaining, 149984);
    EXPECT_EQ(h.tokens.reset, At(460));
    EXPECT_FALSE(h.input_tokens.Known());

    EXPECT_FALSE(ParseRateLimitHeaders(lookup({}), At(0)).Known());
}

TEST(RateLimitHeadersTest, NamesAreMatchedWholeInAnyCase) {
    const std::vector<HeaderField> fields = {
        {"ANTHROPIC-RATELIMIT-OUTPUT-TOKENS-REMAINING", "15000"},
        {"Anthropic-RateLimit-Input-Tokens-Reset", "2024-03-26T20:00:00Z"},
        // Dimensions and parts neither provider sends, and names that only begin like theirs.
        {"x-ratelimit-limit-input-tokens", "1"},
        {"x-ratelimit-limit-project-tokens", "2"},
        {"x-ratelimit-limit", "3"},
        {"x-ratelimit-reset-requests-extra", "1s"},
        {"anthropic-ratelimit-requests-used", "4"},
        {"anthropic-ratelimit-", "5"},
        {"anthropic-ratelimit-limit", "6"},
        {"x-ratelimit-reset-tokens", "."},
        {"x-ratelimit-reset-requests", "1.5s"},
    };
    const RateLimitHeaders h = ParseRateLimitHeaders(fields, At(0));
    EXPECT_EQ(h.output_tokens.remaining, 15000);
    EXPECT_EQ(h.input_tokens.reset, At(1'711'483'200));
    EXPECT_FALSE(h.input_tokens.limit);
    EXPECT_FALSE(h.requests.limit);
    EXPECT_FALSE(h.tokens.limit);
    EXPECT_FALSE(h.tokens.reset) << "a duration without digits is skipped";
    EXPECT_EQ(h.requests.reset, At(0) + milliseconds(1'500));
    EXPECT_FALSE(h.requests.remaining);
}

}  // namespace rate_limit_headers_test
}  // namespace switchyard::policy
