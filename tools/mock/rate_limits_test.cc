#include "rate_limits.h"

#include <gtest/gtest.h>

namespace switchyard::mock {
namespace {

using std::chrono::milliseconds;

TEST(FormatGoDuration, MatchesGoDurationString) {
    EXPECT_EQ(FormatGoDuration(milliseconds(0)), "0s");
    EXPECT_EQ(FormatGoDuration(milliseconds(6)), "6ms");
    EXPECT_EQ(FormatGoDuration(milliseconds(999)), "999ms");
    EXPECT_EQ(FormatGoDuration(milliseconds(1000)), "1s");
    EXPECT_EQ(FormatGoDuration(milliseconds(1500)), "1.5s");
    EXPECT_EQ(FormatGoDuration(milliseconds(1020)), "1.02s");
    EXPECT_EQ(FormatGoDuration(milliseconds(360'000)), "6m0s");
    EXPECT_EQ(FormatGoDuration(milliseconds(3'723'500)), "1h2m3.5s");
    EXPECT_EQ(FormatGoDuration(milliseconds(3'600'000)), "1h0m0s");
}

TEST(RateLimits, HeadersOfTheStaticSnapshot) {
    std::string out;
    AppendRateLimitHeaders(out, RateLimits().Observe(1000));
    EXPECT_EQ(out,
              "x-ratelimit-limit-requests: 10000\r\nx-ratelimit-remaining-requests: 9999\r\n"
              "x-ratelimit-reset-requests: 6ms\r\nx-ratelimit-limit-tokens: 30000000\r\n"
              "x-ratelimit-remaining-tokens: 29999000\r\nx-ratelimit-reset-tokens: 2ms\r\n");
}

TEST(FormatRfc3339, WholeSecondsInUtc) {
    // 2015-10-21T07:28:00Z plus 999 ms: the fraction is dropped.
    const auto time = std::chrono::system_clock::from_time_t(1445412480) + milliseconds(999);
    EXPECT_EQ(FormatRfc3339(time), "2015-10-21T07:28:00Z");
}

TEST(RateLimits, AnthropicHeadersOfTheStaticSnapshot) {
    const auto now = std::chrono::system_clock::from_time_t(1445412480) + milliseconds(250);
    std::string out;
    AppendAnthropicRateLimitHeaders(out, RateLimits().ObserveAnthropic(1400, now));
    EXPECT_EQ(out,
              "anthropic-ratelimit-requests-limit: 4000\r\n"
              "anthropic-ratelimit-requests-remaining: 3999\r\n"
              "anthropic-ratelimit-requests-reset: 2015-10-21T07:28:01Z\r\n"
              "anthropic-ratelimit-input-tokens-limit: 2000000\r\n"
              "anthropic-ratelimit-input-tokens-remaining: 1999000\r\n"
              "anthropic-ratelimit-input-tokens-reset: 2015-10-21T07:28:01Z\r\n"
              "anthropic-ratelimit-output-tokens-limit: 400000\r\n"
              "anthropic-ratelimit-output-tokens-remaining: 400000\r\n"
              "anthropic-ratelimit-output-tokens-reset: 2015-10-21T07:28:01Z\r\n"
              "anthropic-ratelimit-tokens-limit: 2400000\r\n"
              "anthropic-ratelimit-tokens-remaining: 2399000\r\n"
              "anthropic-ratelimit-tokens-reset: 2015-10-21T07:28:01Z\r\n");
}

}  // namespace
}  // namespace switchyard::mock
