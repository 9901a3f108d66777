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

}  // namespace
}  // namespace switchyard::mock
