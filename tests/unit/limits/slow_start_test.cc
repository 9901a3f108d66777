#include "limits/slow_start.h"

#include <gtest/gtest.h>

#include <chrono>

namespace switchyard::limits {
namespace slow_start_test {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

// Every time is injected: an arbitrary steady-clock instant plus a duration. Nothing sleeps.
const TimePoint kT0 = TimePoint(std::chrono::hours(1'000));
TimePoint At(milliseconds offset) { return kT0 + offset; }

TEST(SlowStartTest, RampsLinearlyFromInitialToFull) {
    SlowStart start(seconds(10), 0.1, minutes(1));
    EXPECT_DOUBLE_EQ(start.Fraction(kT0), 0.1);  // the first activity starts a ramp
    EXPECT_DOUBLE_EQ(start.Peek(At(seconds(5))), 0.55);
    EXPECT_DOUBLE_EQ(start.Fraction(At(seconds(5))), 0.55);
    EXPECT_DOUBLE_EQ(start.Fraction(At(milliseconds(7'500))), 0.775);
    EXPECT_DOUBLE_EQ(start.Fraction(At(seconds(10))), 1.0);
    EXPECT_DOUBLE_EQ(start.Fraction(At(seconds(50))), 1.0);
}

TEST(SlowStartTest, ActivityDuringTheRampDoesNotRestartIt) {
    SlowStart start(seconds(10), 0.1, minutes(1));
    for (int i = 0; i <= 10; ++i) {
        EXPECT_DOUBLE_EQ(start.Fraction(At(seconds(i))), 0.1 + 0.09 * i) << i;
    }
    EXPECT_DOUBLE_EQ(start.Fraction(At(seconds(11))), 1.0);
}

TEST(SlowStartTest, PeekDoesNotRecordActivity) {
    SlowStart start(seconds(10), 0.2, minutes(1));
    // Before any activity the next one would start a ramp, whenever it comes.
    EXPECT_DOUBLE_EQ(start.Peek(kT0), 0.2);
    EXPECT_DOUBLE_EQ(start.Peek(At(seconds(5))), 0.2);
    EXPECT_DOUBLE_EQ(start.Fraction(At(seconds(5))), 0.2);  // the ramp starts at 5 s, not 0
    EXPECT_DOUBLE_EQ(start.Peek(At(seconds(10))), 0.6);
    EXPECT_DOUBLE_EQ(start.Peek(At(seconds(15))), 1.0);
    // Peeking far ahead neither ends the ramp nor counts as activity.
    EXPECT_DOUBLE_EQ(start.Peek(At(minutes(5))), 0.2);
    EXPECT_DOUBLE_EQ(start.Fraction(At(seconds(10))), 0.6);
}

TEST(SlowStartTest, RestartsAfterIdle) {
    SlowStart start(seconds(10), 0.1, minutes(1));
    start.Fraction(kT0);
    EXPECT_DOUBLE_EQ(start.Fraction(At(seconds(10))), 1.0);  // last activity at 10 s
    EXPECT_DOUBLE_EQ(start.Peek(At(milliseconds(69'999))), 1.0);
    EXPECT_DOUBLE_EQ(start.Peek(At(seconds(70))), 0.1);  // a full minute idle
    EXPECT_DOUBLE_EQ(start.Fraction(At(seconds(70))), 0.1);
    EXPECT_DOUBLE_EQ(start.Fraction(At(milliseconds(72'500))), 0.325);
    EXPECT_DOUBLE_EQ(start.Fraction(At(seconds(80))), 1.0);
    // Steady activity just inside the idle time keeps the full rate.
    EXPECT_DOUBLE_EQ(start.Fraction(At(milliseconds(139'999))), 1.0);
    EXPECT_DOUBLE_EQ(start.Fraction(At(milliseconds(199'998))), 1.0);
}

TEST(SlowStartTest, OffWhenRampIsZero) {
    SlowStart start(milliseconds(0));
    EXPECT_DOUBLE_EQ(start.Peek(kT0), 1.0);
    EXPECT_DOUBLE_EQ(start.Fraction(kT0), 1.0);
    EXPECT_DOUBLE_EQ(start.Fraction(At(milliseconds(1))), 1.0);
    EXPECT_DOUBLE_EQ(start.Fraction(At(minutes(10))), 1.0);
}

TEST(SlowStartTest, InitialIsClampedToTheUnitInterval) {
    SlowStart above(seconds(10), 1.5);
    EXPECT_DOUBLE_EQ(above.Fraction(kT0), 1.0);
    SlowStart below(seconds(10), -1.0);
    EXPECT_DOUBLE_EQ(below.Fraction(kT0), 0.0);
    EXPECT_DOUBLE_EQ(below.Fraction(At(seconds(5))), 0.5);
}

TEST(SlowStartTest, TimeRunningBackwardsCountsAsTheLatestTimeSeen) {
    SlowStart start(seconds(10), 0.1, minutes(1));
    start.Fraction(kT0);
    EXPECT_DOUBLE_EQ(start.Fraction(At(seconds(5))), 0.55);
    EXPECT_DOUBLE_EQ(start.Fraction(At(seconds(1))), 0.55);
    EXPECT_DOUBLE_EQ(start.Peek(At(seconds(1))), 0.55);
}

}  // namespace slow_start_test
}  // namespace switchyard::limits
