#include "policy/retry_after.h"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <set>
#include <string>

namespace switchyard::policy {
namespace retry_after_test {

using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::system_clock;

// Tue, 14 Nov 2023 22:13:20 GMT.
const system_clock::time_point kNow{seconds(1'700'000'000)};

std::optional<milliseconds> Seconds(std::string_view retry_after) {
    return ParseRetryAfter(std::nullopt, retry_after, kNow);
}

std::optional<milliseconds> Millis(std::string_view retry_after_ms) {
    return ParseRetryAfter(retry_after_ms, std::nullopt, kNow);
}

system_clock::time_point At(long long epoch_seconds) {
    return system_clock::time_point(seconds(epoch_seconds));
}

TEST(ParseHttpDateTest, ImfFixdate) {
    // RFC 9110 section 5.6.7's example: 784111777 seconds after the epoch.
    EXPECT_EQ(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT"), At(784'111'777));
    EXPECT_EQ(ParseHttpDate("Thu, 01 Jan 1970 00:00:00 GMT"), At(0));
    EXPECT_EQ(ParseHttpDate("Tue, 14 Nov 2023 22:13:20 GMT"), At(1'700'000'000));
    EXPECT_EQ(ParseHttpDate("Thu, 29 Feb 2024 23:59:59 GMT"), At(1'709'251'199));
    EXPECT_EQ(ParseHttpDate("Fri, 31 Dec 1999 23:59:59 GMT"), At(946'684'799));
    EXPECT_EQ(ParseHttpDate("Sat, 01 Jan 2000 00:00:00 GMT"), At(946'684'800));
}

TEST(ParseHttpDateTest, Rfc850) {
    EXPECT_EQ(ParseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT"), At(784'111'777));
    EXPECT_EQ(ParseHttpDate("Tuesday, 14-Nov-23 22:13:20 GMT"), At(1'700'000'000));
}

TEST(ParseHttpDateTest, Asctime) {
    EXPECT_EQ(ParseHttpDate("Sun Nov  6 08:49:37 1994"), At(784'111'777));
    EXPECT_EQ(ParseHttpDate("Tue Nov 14 22:13:20 2023"), At(1'700'000'000));
}

TEST(ParseHttpDateTest, SurroundingWhitespace) {
    EXPECT_EQ(ParseHttpDate("  Sun, 06 Nov 1994 08:49:37 GMT\t"), At(784'111'777));
    EXPECT_EQ(ParseHttpDate(" Sun Nov  6 08:49:37 1994 "), At(784'111'777));
}

TEST(ParseHttpDateTest, RejectsJunk) {
    const std::string_view junk[] = {
        "",
        "   ",
        "tomorrow",
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Nov 1994 08:49:37",
        "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 06 nov 1994 08:49:37 GMT",
        "Sun, 6x Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 8:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 1994 08:49:61 GMT",
        "Sun, 32 Nov 1994 08:49:37 GMT",
        "Sun, 00 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08-49-37 GMT",
        "Sun, 06 Nov 1994 -1:49:37 GMT",
        "Sun, 06 Nov 1994 08:-1:37 GMT",
        "Sun, 06 Nov 1994 08:49:-1 GMT",
        "Sun, 06 Nov -1994 08:49:37 GMT",
        "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Sunday, 06/Nov/94 08:49:37 GMT",
        "Sun Nov  6 08:49:37",
        "2023-11-14T22:13:20Z",
        "1700000000",
    };
    for (std::string_view text : junk) EXPECT_FALSE(ParseHttpDate(text)) << text;
}

TEST(ParseRetryAfterTest, IntegerAndFractionalSeconds) {
    EXPECT_EQ(Seconds("0"), milliseconds(0));
    EXPECT_EQ(Seconds("1"), milliseconds(1'000));
    EXPECT_EQ(Seconds("56"), milliseconds(56'000));
    EXPECT_EQ(Seconds("0.5"), milliseconds(500));
    EXPECT_EQ(Seconds("1.25"), milliseconds(1'250));
    EXPECT_EQ(Seconds("2."), milliseconds(2'000));
    EXPECT_EQ(Seconds(".5"), milliseconds(500));
}

TEST(ParseRetryAfterTest, FractionsRoundUpToTheNextMillisecond) {
    // retry-after is a minimum: never wait less than asked.
    EXPECT_EQ(Seconds("0.0015"), milliseconds(2));
    EXPECT_EQ(Seconds("0.0001"), milliseconds(1));
    EXPECT_EQ(Millis("1.2"), milliseconds(2));
    EXPECT_EQ(Millis("0.01"), milliseconds(1));
    EXPECT_EQ(Millis("999.5"), milliseconds(1'000));
    EXPECT_EQ(Millis("1500.0"), milliseconds(1'500));
    EXPECT_EQ(Millis("0"), milliseconds(0));
}

TEST(ParseRetryAfterTest, Whitespace) {
    EXPECT_EQ(Seconds(" 3 "), milliseconds(3'000));
    EXPECT_EQ(Seconds("\t7\r\n"), milliseconds(7'000));
    EXPECT_EQ(Millis("  20  "), milliseconds(20));
    EXPECT_FALSE(Seconds("1 2"));
    EXPECT_FALSE(Seconds(""));
    EXPECT_FALSE(Seconds("   "));
}

TEST(ParseRetryAfterTest, HttpDateRelativeToNow) {
    EXPECT_EQ(Seconds("Tue, 14 Nov 2023 22:13:50 GMT"), milliseconds(30'000));
    EXPECT_EQ(Seconds("Tuesday, 14-Nov-23 22:14:20 GMT"), milliseconds(60'000));
    EXPECT_EQ(Seconds("Tue Nov 14 23:13:20 2023"), milliseconds(3'600'000));
    EXPECT_EQ(Seconds("Wed, 15 Nov 2023 00:00:00 GMT"), milliseconds(6'400'000));
}

TEST(ParseRetryAfterTest, HttpDateAgainstAFractionalNowRoundsUp) {
    const auto now = kNow + milliseconds(250) + std::chrono::nanoseconds(1);
    EXPECT_EQ(ParseRetryAfter(std::nullopt, "Tue, 14 Nov 2023 22:13:50 GMT", now),
              milliseconds(29'750));
}

TEST(ParseRetryAfterTest, DatesInThePastAreZero) {
    EXPECT_EQ(Seconds("Tue, 14 Nov 2023 22:13:20 GMT"), milliseconds(0));  // exactly now
    EXPECT_EQ(Seconds("Tue, 14 Nov 2023 22:13:19 GMT"), milliseconds(0));
    EXPECT_EQ(Seconds("Sun, 06 Nov 1994 08:49:37 GMT"), milliseconds(0));
    EXPECT_EQ(Seconds("Thu, 01 Jan 1970 00:00:00 GMT"), milliseconds(0));
}

TEST(ParseRetryAfterTest, NegativeValuesAreIgnored) {
    EXPECT_FALSE(Seconds("-1"));
    EXPECT_FALSE(Seconds("-0.5"));
    EXPECT_FALSE(Millis("-100"));
    EXPECT_FALSE(Seconds("+5"));
}

TEST(ParseRetryAfterTest, JunkIsIgnored) {
    const std::string_view junk[] = {"soon", "5s", "1e3", "0x10",  "inf",      "nan",
                                     "1,5",  ".",  "..",  "1.2.3", "Infinity", "١"};
    for (std::string_view text : junk) {
        EXPECT_FALSE(Seconds(text)) << text;
        EXPECT_FALSE(Millis(text)) << text;
    }
}

TEST(ParseRetryAfterTest, HugeValuesAreIgnored) {
    EXPECT_FALSE(Seconds("1000000000"));
    EXPECT_FALSE(Seconds("99999999999999999999"));
    EXPECT_FALSE(Seconds(std::string(400, '9')));
    EXPECT_FALSE(Millis("1000000000000"));
    EXPECT_FALSE(Millis(std::string(400, '9')));
    // Just under the limits.
    EXPECT_EQ(Seconds("999999999"), milliseconds(999'999'999'000));
    EXPECT_EQ(Millis("999999999999"), milliseconds(999'999'999'999));
}

TEST(ParseRetryAfterTest, DatesOutsideTheClockRangeAreIgnored) {
    // system_clock counts nanoseconds on common platforms: about 1677..2262. A date past that must
    // not wrap around into the past (a 0 ms wait) or into a random wait.
    EXPECT_FALSE(Seconds("Fri, 31 Dec 9999 23:59:59 GMT"));
    EXPECT_FALSE(Seconds("Mon, 01 Jan 3000 00:00:00 GMT"));
    EXPECT_FALSE(Seconds("Mon, 01 Jan 2147483647 00:00:00 GMT"));
    // Long past: ignored or no wait, never a positive one.
    for (std::string_view past :
         {"Mon, 01 Jan 0001 00:00:00 GMT", "Mon, 01 Jan -2147483648 00:00:00 GMT",
          "Mon, 01 Jan 1600 00:00:00 GMT"}) {
        const auto wait = Seconds(past);
        EXPECT_TRUE(!wait || *wait == milliseconds(0)) << past << ": " << wait->count();
    }
    EXPECT_FALSE(ParseHttpDate("Fri, 31 Dec 9999 23:59:59 GMT"));
    // Far but representable dates are fine.
    const auto far = Seconds("Wed, 01 Jan 2200 00:00:00 GMT");
    ASSERT_TRUE(far);
    EXPECT_EQ(*far, seconds(7'258'118'400 - 1'700'000'000));
}

TEST(ParseRetryAfterTest, RetryAfterMsWinsAndFallsBackWhenUnusable) {
    EXPECT_EQ(ParseRetryAfter("100", "5", kNow), milliseconds(100));
    EXPECT_EQ(ParseRetryAfter("100", "Tue, 14 Nov 2023 22:13:50 GMT", kNow), milliseconds(100));
    EXPECT_EQ(ParseRetryAfter("junk", "5", kNow), milliseconds(5'000));
    EXPECT_EQ(ParseRetryAfter("-1", "5", kNow), milliseconds(5'000));
    EXPECT_EQ(ParseRetryAfter("1e15", "5", kNow), milliseconds(5'000));
    EXPECT_EQ(ParseRetryAfter("", "Tue, 14 Nov 2023 22:13:50 GMT", kNow), milliseconds(30'000));
    EXPECT_FALSE(ParseRetryAfter("junk", "junk", kNow));
    EXPECT_FALSE(ParseRetryAfter(std::nullopt, std::nullopt, kNow));
}

}  // namespace retry_after_test
}  // namespace switchyard::policy

namespace switchyard::policy {
namespace retry_after_test {

TEST(SpreadHintTest, NeverBeforeTheMinimumAndSpreadOverTheInterval) {
    using std::chrono::milliseconds;
    EXPECT_EQ(SpreadHint(milliseconds(500), milliseconds(200), 0.0), milliseconds(500));
    EXPECT_EQ(SpreadHint(milliseconds(500), milliseconds(200), 0.5), milliseconds(600));
    EXPECT_EQ(SpreadHint(milliseconds(500), milliseconds(200), 0.999), milliseconds(699));
    EXPECT_EQ(SpreadHint(milliseconds(500), milliseconds(-5), 0.7), milliseconds(500));
    // Twenty clients refused at once: twenty draws give (almost) twenty different hints.
    std::set<long long> hints;
    for (int i = 0; i < 20; ++i) {
        hints.insert(SpreadHint(milliseconds(500), milliseconds(526), (i + 0.5) / 20).count());
    }
    EXPECT_EQ(hints.size(), 20u);
    EXPECT_EQ(DefaultSpread(milliseconds(60'000)), milliseconds(5'000));
    EXPECT_EQ(DefaultSpread(milliseconds(1'000)), milliseconds(500));
    EXPECT_EQ(DefaultSpread(milliseconds(10)), milliseconds(100));
}

}  // namespace retry_after_test
}  // namespace switchyard::policy
