#include "limits/token_bucket.h"

#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <optional>

namespace switchyard::limits {
namespace token_bucket_test {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

// Every time is injected: an arbitrary steady-clock instant plus a duration. Nothing sleeps.
const TimePoint kT0 = TimePoint(std::chrono::hours(1'000));
TimePoint At(milliseconds offset) { return kT0 + offset; }

constexpr double kInfinity = std::numeric_limits<double>::infinity();

TEST(TokenBucketTest, DefaultConstructedIsUnlimited) {
    TokenBucket bucket;
    EXPECT_FALSE(bucket.Limited());
    EXPECT_EQ(bucket.Capacity(), kInfinity);
    EXPECT_EQ(bucket.Level(kT0), kInfinity);
    for (int i = 0; i < 1'000; ++i) EXPECT_TRUE(bucket.TryTake(1e12, kT0, 1e12));
    bucket.Take(1e15, kT0);
    bucket.Give(5, kT0);
    EXPECT_EQ(bucket.TimeUntil(1e15, kT0, 1e15), milliseconds(0));
    EXPECT_EQ(bucket.Level(kT0), kInfinity);
}

TEST(TokenBucketTest, StartsFullRejectsPastCapacityAndRefillsOnePerSecond) {
    TokenBucket bucket(60, minutes(1), kT0);  // 60 per minute: one token a second
    EXPECT_TRUE(bucket.Limited());
    EXPECT_DOUBLE_EQ(bucket.Capacity(), 60);
    EXPECT_DOUBLE_EQ(bucket.Level(kT0), 60);
    EXPECT_EQ(bucket.TimeUntil(1, kT0), milliseconds(0));
    for (int i = 0; i < 60; ++i) EXPECT_TRUE(bucket.TryTake(1, kT0)) << i;
    EXPECT_FALSE(bucket.TryTake(1, kT0));
    EXPECT_DOUBLE_EQ(bucket.Level(kT0), 0);
    EXPECT_EQ(bucket.TimeUntil(1, kT0), milliseconds(1'000));
    EXPECT_EQ(bucket.TimeUntil(5, kT0), milliseconds(5'000));
    EXPECT_EQ(bucket.TimeUntil(1, At(milliseconds(400))), milliseconds(600));

    EXPECT_FALSE(bucket.TryTake(1, At(milliseconds(999))));
    EXPECT_TRUE(bucket.TryTake(1, At(milliseconds(1'000))));
    EXPECT_FALSE(bucket.TryTake(1, At(milliseconds(1'000))));
    EXPECT_EQ(bucket.TimeUntil(1, At(milliseconds(1'000))), milliseconds(1'000));
}

TEST(TokenBucketTest, RefillIsContinuousAndCappedAtCapacity) {
    TokenBucket bucket(60, minutes(1), kT0);
    ASSERT_TRUE(bucket.TryTake(30, kT0));
    EXPECT_DOUBLE_EQ(bucket.Level(At(milliseconds(500))), 30.5);
    EXPECT_DOUBLE_EQ(bucket.Level(At(seconds(15))), 45);
    EXPECT_DOUBLE_EQ(bucket.Level(At(seconds(30))), 60);
    EXPECT_DOUBLE_EQ(bucket.Level(At(minutes(10))), 60);
    // Idle time past full does not bank extra tokens.
    ASSERT_TRUE(bucket.TryTake(60, At(minutes(10))));
    EXPECT_FALSE(bucket.TryTake(1, At(minutes(10))));
}

TEST(TokenBucketTest, ManySmallRefillsStayExact) {
    // One take a second for an hour, each exactly when its token is due: rounding in the repeated
    // refill arithmetic must neither refuse a due token nor admit an early one.
    TokenBucket bucket(60, minutes(1), kT0);
    ASSERT_TRUE(bucket.TryTake(60, kT0));
    for (int i = 1; i <= 3'600; ++i) {
        EXPECT_FALSE(bucket.TryTake(1, At(milliseconds(i * 1'000 - 1)))) << i;
        EXPECT_EQ(bucket.TimeUntil(1, At(milliseconds(i * 1'000 - 1))), milliseconds(1)) << i;
        EXPECT_TRUE(bucket.TryTake(1, At(seconds(i)))) << i;
    }
}

TEST(TokenBucketTest, TimeUntilRoundsUpToWholeMilliseconds) {
    TokenBucket bucket(7, seconds(1), kT0);  // a token every 142.857... ms
    ASSERT_TRUE(bucket.TryTake(7, kT0));
    EXPECT_EQ(bucket.TimeUntil(1, kT0), milliseconds(143));
    EXPECT_FALSE(bucket.TryTake(1, At(milliseconds(142))));
    EXPECT_TRUE(bucket.TryTake(1, At(milliseconds(143))));

    TokenBucket half(60, minutes(1), kT0);
    ASSERT_TRUE(half.TryTake(60, kT0));
    EXPECT_EQ(half.TimeUntil(0.5, kT0), milliseconds(500));
    EXPECT_EQ(half.TimeUntil(1.0001, kT0), milliseconds(1'001));  // 1000.1 ms rounds up
}

TEST(TokenBucketTest, FloorLeavesAReserveForOthers) {
    TokenBucket bucket(10, seconds(10), kT0);  // one token a second
    // A low-priority user keeps 4 tokens in reserve: it gets 6.
    for (int i = 0; i < 6; ++i) EXPECT_TRUE(bucket.TryTake(1, kT0, 4)) << i;
    EXPECT_FALSE(bucket.TryTake(1, kT0, 4));
    EXPECT_DOUBLE_EQ(bucket.Level(kT0), 4);
    // Level 4 - 1 would leave 3 < 4: the low-priority user waits for one more token.
    EXPECT_EQ(bucket.TimeUntil(1, kT0, 4), milliseconds(1'000));
    // A high-priority user (no floor) can spend the reserve.
    EXPECT_EQ(bucket.TimeUntil(3, kT0), milliseconds(0));
    EXPECT_TRUE(bucket.TryTake(3, kT0));
    EXPECT_DOUBLE_EQ(bucket.Level(kT0), 1);
    // Now the low-priority user needs level 5 for a cost of 1: four more tokens.
    EXPECT_EQ(bucket.TimeUntil(1, kT0, 4), milliseconds(4'000));
    EXPECT_FALSE(bucket.TryTake(1, At(milliseconds(3'999)), 4));
    EXPECT_TRUE(bucket.TryTake(1, At(milliseconds(4'000)), 4));
    EXPECT_DOUBLE_EQ(bucket.Level(At(milliseconds(4'000))), 4);
}

TEST(TokenBucketTest, TakeGoesIntoDebtAndDebtDelaysLaterTakes) {
    TokenBucket bucket(60, minutes(1), kT0);
    bucket.Take(90, kT0);  // a request already sent, bigger than what was left
    EXPECT_DOUBLE_EQ(bucket.Level(kT0), -30);
    EXPECT_FALSE(bucket.TryTake(1, kT0));
    // 30 tokens of debt plus the one wanted, at one a second.
    EXPECT_EQ(bucket.TimeUntil(1, kT0), milliseconds(31'000));
    EXPECT_EQ(bucket.TimeUntil(1, kT0, 10), milliseconds(41'000));
    EXPECT_DOUBLE_EQ(bucket.Level(At(seconds(30))), 0);
    EXPECT_FALSE(bucket.TryTake(1, At(milliseconds(30'999))));
    EXPECT_TRUE(bucket.TryTake(1, At(milliseconds(31'000))));
    EXPECT_DOUBLE_EQ(bucket.Level(At(milliseconds(31'000))), 0);
}

TEST(TokenBucketTest, CostAboveCapacityIsAdmittedOnlyWhenFull) {
    TokenBucket bucket(10, seconds(10), kT0);  // one token a second
    ASSERT_TRUE(bucket.TryTake(1, kT0));
    // 25 can never fit in a bucket of 10; it must wait for a full bucket, not forever.
    EXPECT_FALSE(bucket.TryTake(25, kT0));
    EXPECT_EQ(bucket.TimeUntil(25, kT0), milliseconds(1'000));
    EXPECT_FALSE(bucket.TryTake(25, At(milliseconds(999))));
    EXPECT_TRUE(bucket.TryTake(25, At(milliseconds(1'000))));
    EXPECT_DOUBLE_EQ(bucket.Level(At(milliseconds(1'000))), -15);
    // The debt is paid back before anything else: 16 s until a token of 1 fits.
    EXPECT_EQ(bucket.TimeUntil(1, At(milliseconds(1'000))), milliseconds(16'000));
    // The next huge request waits for full again: 25 s.
    EXPECT_EQ(bucket.TimeUntil(25, At(milliseconds(1'000))), milliseconds(25'000));
    EXPECT_FALSE(bucket.TryTake(25, At(milliseconds(25'999))));
    EXPECT_TRUE(bucket.TryTake(25, At(milliseconds(26'000))));
}

TEST(TokenBucketTest, CostAboveCapacityMinusFloorIsAdmittedOnlyWhenFull) {
    TokenBucket bucket(10, seconds(10), kT0);
    ASSERT_TRUE(bucket.TryTake(1, kT0));
    // With a floor of 4 at most 6 fit; 7 waits for a full bucket and then goes below the floor.
    EXPECT_FALSE(bucket.TryTake(7, kT0, 4));
    EXPECT_EQ(bucket.TimeUntil(7, kT0, 4), milliseconds(1'000));
    EXPECT_TRUE(bucket.TryTake(7, At(seconds(1)), 4));
    EXPECT_DOUBLE_EQ(bucket.Level(At(seconds(1))), 3);
}

TEST(TokenBucketTest, GiveReturnsTokensCappedAtCapacity) {
    TokenBucket bucket(60, minutes(1), kT0);
    ASSERT_TRUE(bucket.TryTake(50, kT0));
    bucket.Give(20, kT0);  // the request used 30 of the 50 it reserved
    EXPECT_DOUBLE_EQ(bucket.Level(kT0), 30);
    bucket.Give(100, At(seconds(1)));
    EXPECT_DOUBLE_EQ(bucket.Level(At(seconds(1))), 60);
    bucket.Take(70, At(seconds(1)));
    bucket.Give(5, At(seconds(1)));
    EXPECT_DOUBLE_EQ(bucket.Level(At(seconds(1))), -5);
}

TEST(TokenBucketTest, CorrectLowersCapacityAndClampsTheLevel) {
    TokenBucket bucket(60, minutes(1), kT0);
    bucket.Correct(30.0, std::nullopt, kT0);
    EXPECT_DOUBLE_EQ(bucket.Capacity(), 30);
    EXPECT_DOUBLE_EQ(bucket.Level(kT0), 30);
    ASSERT_TRUE(bucket.TryTake(30, kT0));
    EXPECT_FALSE(bucket.TryTake(1, kT0));
    // The period is kept: 30 per minute refills one token every 2 s.
    EXPECT_EQ(bucket.TimeUntil(1, kT0), milliseconds(2'000));
    EXPECT_DOUBLE_EQ(bucket.Level(At(seconds(10))), 5);
    EXPECT_DOUBLE_EQ(bucket.Level(At(minutes(5))), 30);
    // A level below the new capacity is kept.
    bucket.Correct(20.0, std::nullopt, At(seconds(10)));
    EXPECT_DOUBLE_EQ(bucket.Level(At(seconds(10))), 5);
}

TEST(TokenBucketTest, CorrectRaisesCapacityAndTheRefillRateButNotTheLevel) {
    TokenBucket bucket(60, minutes(1), kT0);
    ASSERT_TRUE(bucket.TryTake(60, kT0));
    bucket.Correct(120.0, std::nullopt, kT0);
    EXPECT_DOUBLE_EQ(bucket.Capacity(), 120);
    EXPECT_DOUBLE_EQ(bucket.Level(kT0), 0);
    EXPECT_EQ(bucket.TimeUntil(1, kT0), milliseconds(500));
    EXPECT_DOUBLE_EQ(bucket.Level(At(seconds(30))), 60);
    EXPECT_DOUBLE_EQ(bucket.Level(At(seconds(60))), 120);
    EXPECT_DOUBLE_EQ(bucket.Level(At(seconds(90))), 120);
}

TEST(TokenBucketTest, CorrectRemainingReplacesTheLevel) {
    TokenBucket bucket(60, minutes(1), kT0);
    bucket.Correct(std::nullopt, 10.0, kT0);
    EXPECT_DOUBLE_EQ(bucket.Capacity(), 60);
    EXPECT_DOUBLE_EQ(bucket.Level(kT0), 10);
    EXPECT_DOUBLE_EQ(bucket.Level(At(seconds(5))), 15);
    bucket.Correct(std::nullopt, 500.0, At(seconds(5)));  // clamped to the capacity
    EXPECT_DOUBLE_EQ(bucket.Level(At(seconds(5))), 60);
    bucket.Correct(std::nullopt, -5.0, At(seconds(5)));  // the provider says we are in debt
    EXPECT_DOUBLE_EQ(bucket.Level(At(seconds(5))), -5);
    EXPECT_EQ(bucket.TimeUntil(1, At(seconds(5))), milliseconds(6'000));
    // Both at once: the new capacity first, then the level within it.
    bucket.Correct(100.0, 80.0, At(seconds(5)));
    EXPECT_DOUBLE_EQ(bucket.Capacity(), 100);
    EXPECT_DOUBLE_EQ(bucket.Level(At(seconds(5))), 80);
    bucket.Correct(20.0, 80.0, At(seconds(5)));
    EXPECT_DOUBLE_EQ(bucket.Level(At(seconds(5))), 20);
}

TEST(TokenBucketTest, CorrectMakesAnUnlimitedBucketLimited) {
    TokenBucket bucket;
    bucket.Correct(std::nullopt, 5.0, kT0);  // no limit: nothing to size the bucket by
    EXPECT_FALSE(bucket.Limited());
    bucket.Correct(100.0, 40.0, kT0, seconds(10));
    EXPECT_TRUE(bucket.Limited());
    EXPECT_DOUBLE_EQ(bucket.Capacity(), 100);
    EXPECT_DOUBLE_EQ(bucket.Level(kT0), 40);
    // 100 per 10 s: 10 a second, so 10 more tokens for a cost of 50 take 1 s.
    EXPECT_EQ(bucket.TimeUntil(50, kT0), milliseconds(1'000));

    TokenBucket full;
    full.Correct(100.0, std::nullopt, kT0);  // the default period: per minute
    EXPECT_DOUBLE_EQ(full.Level(kT0), 100);
    ASSERT_TRUE(full.TryTake(100, kT0));
    EXPECT_EQ(full.TimeUntil(1, kT0), milliseconds(600));
}

TEST(TokenBucketTest, CorrectIgnoresANonPositiveLimit) {
    TokenBucket bucket(60, minutes(1), kT0);
    bucket.Correct(0.0, std::nullopt, kT0);
    bucket.Correct(-3.0, std::nullopt, kT0);
    EXPECT_DOUBLE_EQ(bucket.Capacity(), 60);
    EXPECT_DOUBLE_EQ(bucket.Level(kT0), 60);
    TokenBucket unlimited;
    unlimited.Correct(0.0, 0.0, kT0);
    EXPECT_FALSE(unlimited.Limited());
}

TEST(TokenBucketTest, TimeRunningBackwardsRefillsNothing) {
    TokenBucket bucket(60, minutes(1), kT0);
    ASSERT_TRUE(bucket.TryTake(60, At(seconds(10))));
    EXPECT_DOUBLE_EQ(bucket.Level(At(seconds(5))), 0);
    EXPECT_FALSE(bucket.TryTake(1, At(seconds(5))));
    // Refilling resumes at the latest time seen (10 s), so from 5 s the wait is 5 s + 1 s.
    EXPECT_EQ(bucket.TimeUntil(1, At(seconds(5))), milliseconds(6'000));
    EXPECT_TRUE(bucket.TryTake(1, At(seconds(11))));
}

TEST(TokenBucketTest, ATakeFromAFullBucketHoldsTheRefillBackForTheTransit) {
    TokenBucket bucket(2, seconds(1), kT0);  // 2 per second
    bucket.Take(1, kT0, milliseconds(100));
    // Taken from full: nothing refills for 100 ms.
    EXPECT_DOUBLE_EQ(bucket.Level(At(milliseconds(100))), 1);
    EXPECT_EQ(bucket.TimeUntil(2, kT0), milliseconds(600));
    // A second take, from a bucket no longer full, does not move the refill's start.
    bucket.Take(1, At(milliseconds(50)), milliseconds(100));
    EXPECT_DOUBLE_EQ(bucket.Level(At(milliseconds(600))), 1);
    // Without a transit a take from full refills at once, as before.
    TokenBucket plain(2, seconds(1), kT0);
    plain.Take(1, kT0);
    EXPECT_DOUBLE_EQ(plain.Level(At(milliseconds(100))), 1.2);
}

}  // namespace token_bucket_test
}  // namespace switchyard::limits
