#include "policy/spend_cap.h"

#include <gtest/gtest.h>

#include <chrono>

namespace switchyard::policy {
namespace spend_cap_test {

using namespace std::chrono;
using WallTime = system_clock::time_point;

WallTime Utc(year_month_day date, hours h = hours(0), minutes m = minutes(0),
             seconds s = seconds(0)) {
    return sys_days{date} + h + m + s;
}

TEST(SpendCapTest, MidMonthLiftsOnTheFirstOfNextMonth) {
    EXPECT_EQ(SpendCapResetAfter(Utc(2025y / March / 15, hours(12), minutes(34), seconds(56))),
              Utc(2025y / April / 1));
}

TEST(SpendCapTest, DecemberRollsOverToJanuaryOfNextYear) {
    EXPECT_EQ(SpendCapResetAfter(Utc(2025y / December / 1)), Utc(2026y / January / 1));
    EXPECT_EQ(SpendCapResetAfter(Utc(2025y / December / 15, hours(8))), Utc(2026y / January / 1));
    EXPECT_EQ(SpendCapResetAfter(Utc(2025y / December / 31, hours(23), minutes(59), seconds(59))),
              Utc(2026y / January / 1));
    EXPECT_EQ(SpendCapResetAfter(Utc(1999y / December / 31, hours(23))), Utc(2000y / January / 1));
}

TEST(SpendCapTest, TheLastInstantOfAMonthStillBelongsToIt) {
    const WallTime end_of_april = Utc(2025y / May / 1) - nanoseconds(1);
    EXPECT_EQ(SpendCapResetAfter(end_of_april), Utc(2025y / May / 1));
    EXPECT_EQ(SpendCapResetAfter(Utc(2025y / April / 30, hours(23), minutes(59), seconds(59))),
              Utc(2025y / May / 1));
    EXPECT_EQ(SpendCapResetAfter(Utc(2025y / January / 31, hours(23), minutes(59), seconds(59))),
              Utc(2025y / February / 1));
}

TEST(SpendCapTest, ExactlyMidnightOnTheFirstWaitsForTheNextMonth) {
    // The cap was hit in the new month's first instant: it holds for that whole month.
    EXPECT_EQ(SpendCapResetAfter(Utc(2025y / May / 1)), Utc(2025y / June / 1));
    EXPECT_EQ(SpendCapResetAfter(Utc(2026y / January / 1)), Utc(2026y / February / 1));
    EXPECT_EQ(SpendCapResetAfter(Utc(2025y / May / 1) + nanoseconds(1)), Utc(2025y / June / 1));
}

TEST(SpendCapTest, FebruaryInLeapAndCommonYears) {
    EXPECT_EQ(SpendCapResetAfter(Utc(2024y / February / 28, hours(23))), Utc(2024y / March / 1));
    EXPECT_EQ(SpendCapResetAfter(Utc(2024y / February / 29, hours(23), minutes(59), seconds(59))),
              Utc(2024y / March / 1));
    EXPECT_EQ(SpendCapResetAfter(Utc(2025y / February / 28, hours(23), minutes(59), seconds(59))),
              Utc(2025y / March / 1));
    EXPECT_EQ(SpendCapResetAfter(Utc(2000y / February / 29, hours(12))), Utc(2000y / March / 1));
    // January 31 plus a month is not "February 31": the reset is February 1.
    EXPECT_EQ(SpendCapResetAfter(Utc(2024y / January / 31, hours(12))), Utc(2024y / February / 1));
    EXPECT_EQ(SpendCapResetAfter(Utc(2024y / January / 30)), Utc(2024y / February / 1));
}

TEST(SpendCapTest, BeforeTheEpoch) {
    EXPECT_EQ(SpendCapResetAfter(Utc(1969y / December / 31, hours(23))), Utc(1970y / January / 1));
    EXPECT_EQ(SpendCapResetAfter(Utc(1969y / July / 4)), Utc(1969y / August / 1));
}

TEST(SpendCapTest, EveryHourOfFourYearsLiftsAtTheNextMonthsFirstMidnight) {
    for (sys_days date = sys_days{2023y / January / 1}; date < sys_days{2027y / January / 1};
         date += days(1)) {
        const year_month_day ymd{date};
        const year_month_day next = year_month_day{ymd.year() / ymd.month() / 1} + months(1);
        for (int h = 0; h < 24; h += 5) {
            const WallTime now = date + hours(h) + minutes(17);
            const WallTime reset = SpendCapResetAfter(now);
            ASSERT_EQ(reset, sys_days{next})
                << static_cast<int>(ymd.year()) << "-" << static_cast<unsigned>(ymd.month()) << "-"
                << static_cast<unsigned>(ymd.day()) << " " << h;
            ASSERT_GT(reset, now);
            ASSERT_LE(reset - now, days(31));
            const year_month_day reset_day{floor<days>(reset)};
            ASSERT_EQ(reset_day.day(), day(1));
            ASSERT_EQ(reset - floor<days>(reset), nanoseconds(0)) << "midnight";
        }
    }
}

}  // namespace spend_cap_test
}  // namespace switchyard::policy
