#include "policy/backoff.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

namespace switchyard::policy {
namespace backoff_test {

using std::chrono::milliseconds;

// The largest double below 1: what a [0, 1) source can return at most.
const double kAlmostOne = std::nextafter(1.0, 0.0);

TEST(BackoffTest, DefaultsMatchTheConfigDefaults) {
    const Backoff b;
    EXPECT_EQ(b.base, milliseconds(500));
    EXPECT_EQ(b.cap, milliseconds(20'000));
}

TEST(BackoffTest, ZeroDrawWaitsZero) {
    const Backoff b{milliseconds(500), milliseconds(20'000)};
    for (int n = 0; n <= 40; ++n) EXPECT_EQ(b.Jittered(n, 0.0), milliseconds(0)) << n;
}

TEST(BackoffTest, CeilingDoublesPerRetryUntilTheCap) {
    const Backoff b{milliseconds(500), milliseconds(20'000)};
    // A draw of 1 is the ceiling min(cap, base * 2^n) itself.
    EXPECT_EQ(b.Jittered(0, 1.0), milliseconds(500));
    EXPECT_EQ(b.Jittered(1, 1.0), milliseconds(1'000));
    EXPECT_EQ(b.Jittered(2, 1.0), milliseconds(2'000));
    EXPECT_EQ(b.Jittered(3, 1.0), milliseconds(4'000));
    EXPECT_EQ(b.Jittered(4, 1.0), milliseconds(8'000));
    EXPECT_EQ(b.Jittered(5, 1.0), milliseconds(16'000));
    EXPECT_EQ(b.Jittered(6, 1.0), milliseconds(20'000));
    EXPECT_EQ(b.Jittered(7, 1.0), milliseconds(20'000));
}

TEST(BackoffTest, DrawsNearOneApproachTheCeilingFromBelow) {
    const Backoff b{milliseconds(500), milliseconds(20'000)};
    EXPECT_EQ(b.Jittered(0, kAlmostOne), milliseconds(499));
    EXPECT_EQ(b.Jittered(3, kAlmostOne), milliseconds(3'999));
    EXPECT_EQ(b.Jittered(6, kAlmostOne), milliseconds(19'999));
    EXPECT_EQ(b.Jittered(0, 0.999), milliseconds(499));
    EXPECT_EQ(b.Jittered(2, 0.9999), milliseconds(1'999));
}

TEST(BackoffTest, ExactValuesForMidDraws) {
    const Backoff b{milliseconds(500), milliseconds(20'000)};
    EXPECT_EQ(b.Jittered(0, 0.5), milliseconds(250));
    EXPECT_EQ(b.Jittered(1, 0.5), milliseconds(500));
    EXPECT_EQ(b.Jittered(2, 0.25), milliseconds(500));
    EXPECT_EQ(b.Jittered(3, 0.75), milliseconds(3'000));
    EXPECT_EQ(b.Jittered(5, 0.5), milliseconds(8'000));
    EXPECT_EQ(b.Jittered(10, 0.5), milliseconds(10'000));

    const Backoff small{milliseconds(100), milliseconds(1'000)};
    EXPECT_EQ(small.Jittered(0, 0.5), milliseconds(50));
    EXPECT_EQ(small.Jittered(1, 0.5), milliseconds(100));
    EXPECT_EQ(small.Jittered(2, 0.5), milliseconds(200));
    EXPECT_EQ(small.Jittered(3, 0.5), milliseconds(400));
    EXPECT_EQ(small.Jittered(4, 0.5), milliseconds(500));  // 1600 capped at 1000
}

TEST(BackoffTest, CapHoldsForLargeRetryCounts) {
    const Backoff b{milliseconds(500), milliseconds(20'000)};
    for (int n : {8, 20, 29, 30, 31, 40, 62, 63, 64, 1'000, 1 << 30}) {
        EXPECT_EQ(b.Jittered(n, 1.0), milliseconds(20'000)) << n;
        EXPECT_EQ(b.Jittered(n, 0.5), milliseconds(10'000)) << n;
        EXPECT_LE(b.Jittered(n, kAlmostOne), milliseconds(20'000)) << n;
    }
    // The widest config allows: base 1 ms, cap 24 h.
    const Backoff wide{milliseconds(1), milliseconds(86'400'000)};
    EXPECT_EQ(wide.Jittered(26, 1.0), milliseconds(1LL << 26));
    EXPECT_EQ(wide.Jittered(27, 1.0), milliseconds(86'400'000));
    EXPECT_EQ(wide.Jittered(40, 1.0), milliseconds(86'400'000));
}

TEST(BackoffTest, OutOfRangeInputsAreClamped) {
    const Backoff b{milliseconds(500), milliseconds(20'000)};
    EXPECT_EQ(b.Jittered(-1, 1.0), milliseconds(500));
    EXPECT_EQ(b.Jittered(0, -0.5), milliseconds(0));
    EXPECT_EQ(b.Jittered(0, 2.0), milliseconds(500));
}

TEST(BackoffTest, RetryAfterRaisesTheDelay) {
    const Backoff b{milliseconds(500), milliseconds(20'000)};
    EXPECT_EQ(b.Delay(0, 0.5, milliseconds(3'000)), milliseconds(3'000));
    EXPECT_EQ(b.Delay(0, 0.0, milliseconds(1)), milliseconds(1));
    EXPECT_EQ(b.Delay(10, 1.0, milliseconds(60'000)), milliseconds(60'000))
        << "retry-after is a minimum even above the cap";
}

TEST(BackoffTest, RetryAfterNeverLowersTheDelay) {
    const Backoff b{milliseconds(500), milliseconds(20'000)};
    EXPECT_EQ(b.Delay(3, 0.75, milliseconds(100)), milliseconds(3'000));
    EXPECT_EQ(b.Delay(3, 0.75, milliseconds(0)), milliseconds(3'000));
    EXPECT_EQ(b.Delay(3, 0.75, std::nullopt), milliseconds(3'000));
}

TEST(BackoffTest, SweepStaysWithinZeroAndTheCeiling) {
    const Backoff b{milliseconds(500), milliseconds(20'000)};
    for (int n = 0; n <= 12; ++n) {
        const milliseconds ceiling = std::min(b.cap, milliseconds(b.base.count() << n));
        milliseconds previous{0};
        for (int i = 0; i < 1'000; ++i) {
            const double u = i / 1'000.0;
            const milliseconds d = b.Jittered(n, u);
            EXPECT_GE(d, milliseconds(0));
            EXPECT_LT(d, ceiling) << "n=" << n << " u=" << u;
            EXPECT_GE(d, previous) << "monotonic in the draw";
            previous = d;
            const milliseconds with_hint = b.Delay(n, u, milliseconds(700));
            EXPECT_EQ(with_hint, std::max(d, milliseconds(700)));
        }
        // The draws spread over the whole range: the last one is within 0.1% of the ceiling.
        EXPECT_GE(previous.count(), ceiling.count() * 999 / 1'000 - 1);
    }
}

}  // namespace backoff_test
}  // namespace switchyard::policy
