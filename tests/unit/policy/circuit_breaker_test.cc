#include "policy/circuit_breaker.h"

#include <gtest/gtest.h>

#include <chrono>

namespace switchyard::policy {
namespace circuit_breaker_test {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;
using TimePoint = CircuitBreaker::TimePoint;
using State = CircuitBreaker::State;

// Every time is injected: an arbitrary steady-clock instant plus a duration. Nothing sleeps.
const TimePoint kT0 = TimePoint(std::chrono::hours(1'000));
TimePoint At(milliseconds offset) { return kT0 + offset; }

CircuitBreaker::Options StreakOnly(int consecutive) {
    CircuitBreaker::Options o;
    o.consecutive_failures = consecutive;
    o.minimum_calls = 1'000'000;  // the failure rate never trips
    o.open_duration = seconds(30);
    return o;
}

CircuitBreaker::Options RateOnly(double rate, int minimum_calls, milliseconds window) {
    CircuitBreaker::Options o;
    o.consecutive_failures = 1'000'000;  // the streak never trips
    o.failure_rate = rate;
    o.minimum_calls = minimum_calls;
    o.window = window;
    o.open_duration = seconds(30);
    return o;
}

// Opens `breaker` (a streak of `consecutive` failures at `when`).
void Trip(CircuitBreaker& breaker, int consecutive, TimePoint when) {
    for (int i = 0; i < consecutive; ++i) breaker.OnFailure(when);
    ASSERT_EQ(breaker.StateAt(when), State::kOpen);
}

TEST(CircuitBreakerTest, StartsClosedAndLetsEverythingThrough) {
    CircuitBreaker breaker(CircuitBreaker::Options{});
    EXPECT_EQ(breaker.StateAt(kT0), State::kClosed);
    EXPECT_EQ(breaker.StateAt(TimePoint{}), State::kClosed);
    for (int i = 0; i < 100; ++i) {
        EXPECT_TRUE(breaker.WouldAllow(kT0));
        EXPECT_TRUE(breaker.Allow(kT0));
    }
    EXPECT_EQ(breaker.StateAt(kT0), State::kClosed);
}

TEST(CircuitBreakerTest, OpensAfterConsecutiveFailures) {
    CircuitBreaker breaker(StreakOnly(3));
    breaker.OnFailure(At(milliseconds(0)));
    breaker.OnFailure(At(milliseconds(1)));
    EXPECT_EQ(breaker.StateAt(At(milliseconds(1))), State::kClosed);
    EXPECT_TRUE(breaker.Allow(At(milliseconds(1))));
    breaker.OnFailure(At(milliseconds(2)));
    EXPECT_EQ(breaker.StateAt(At(milliseconds(2))), State::kOpen);
    EXPECT_EQ(breaker.OpenUntil(), At(milliseconds(2)) + seconds(30));
    EXPECT_FALSE(breaker.WouldAllow(At(milliseconds(2))));
    EXPECT_FALSE(breaker.Allow(At(milliseconds(2))));
}

TEST(CircuitBreakerTest, ASuccessBreaksTheStreak) {
    CircuitBreaker breaker(StreakOnly(3));
    for (int round = 0; round < 50; ++round) {
        breaker.OnFailure(kT0);
        breaker.OnFailure(kT0);
        breaker.OnSuccess(kT0);
        EXPECT_EQ(breaker.StateAt(kT0), State::kClosed) << round;
    }
    breaker.OnFailure(kT0);
    breaker.OnFailure(kT0);
    breaker.OnFailure(kT0);
    EXPECT_EQ(breaker.StateAt(kT0), State::kOpen);
}

TEST(CircuitBreakerTest, NeutralOutcomesNeitherCountNorBreakTheStreakWhenClosed) {
    CircuitBreaker breaker(StreakOnly(3));
    breaker.OnFailure(kT0);
    breaker.OnFailure(kT0);
    for (int i = 0; i < 100; ++i) breaker.OnNeutral(kT0);
    EXPECT_EQ(breaker.StateAt(kT0), State::kClosed);
    breaker.OnFailure(kT0);
    EXPECT_EQ(breaker.StateAt(kT0), State::kOpen);
}

TEST(CircuitBreakerTest, FailureRateNeedsMinimumCalls) {
    // 10 calls minimum, half of them failing opens it.
    CircuitBreaker breaker(RateOnly(0.5, 10, seconds(60)));
    // S F S F S F S F S: 9 calls, 4 failures; then F: 10 calls, 5 failures.
    for (int i = 0; i < 9; ++i) {
        const TimePoint t = At(milliseconds(i));
        if (i % 2 == 0) {
            breaker.OnSuccess(t);
        } else {
            breaker.OnFailure(t);
        }
        EXPECT_EQ(breaker.StateAt(t), State::kClosed) << i;
    }
    breaker.OnFailure(At(milliseconds(9)));
    EXPECT_EQ(breaker.StateAt(At(milliseconds(9))), State::kOpen);
    EXPECT_EQ(breaker.OpenUntil(), At(milliseconds(9)) + seconds(30));
}

TEST(CircuitBreakerTest, AllFailuresBelowMinimumCallsDoNotOpenByRate) {
    CircuitBreaker breaker(RateOnly(0.5, 10, seconds(60)));
    for (int i = 0; i < 9; ++i) breaker.OnFailure(At(milliseconds(i)));
    EXPECT_EQ(breaker.StateAt(At(milliseconds(9))), State::kClosed) << "9 of 9 failed, below 10";
    breaker.OnFailure(At(milliseconds(9)));
    EXPECT_EQ(breaker.StateAt(At(milliseconds(9))), State::kOpen);
}

TEST(CircuitBreakerTest, FailureRateBelowTheThresholdKeepsItClosed) {
    CircuitBreaker breaker(RateOnly(0.5, 10, seconds(60)));
    // S S S F F, over and over: 40 % failures (never more in any prefix), so it never opens.
    for (int i = 0; i < 1'000; ++i) {
        const TimePoint t = At(milliseconds(i));
        if (i % 5 >= 3) {
            breaker.OnFailure(t);
        } else {
            breaker.OnSuccess(t);
        }
        ASSERT_EQ(breaker.StateAt(t), State::kClosed) << i;
    }
}

TEST(CircuitBreakerTest, ANewWindowStartsTheCountsAfresh) {
    CircuitBreaker breaker(RateOnly(0.5, 10, seconds(60)));
    // First window starts at the first call (kT0): 9 failures, one short of the minimum.
    for (int i = 0; i < 9; ++i) breaker.OnFailure(At(milliseconds(i)));
    EXPECT_EQ(breaker.StateAt(At(seconds(59))), State::kClosed);
    // 60 s after the window began a new one begins: this failure is call 1 of 10, not 10 of 10.
    breaker.OnFailure(At(seconds(60)));
    EXPECT_EQ(breaker.StateAt(At(seconds(60))), State::kClosed);
    for (int i = 1; i < 9; ++i) breaker.OnFailure(At(seconds(60) + milliseconds(i)));
    EXPECT_EQ(breaker.StateAt(At(seconds(61))), State::kClosed) << "9 calls in the new window";
    breaker.OnFailure(At(seconds(61)));
    EXPECT_EQ(breaker.StateAt(At(seconds(61))), State::kOpen) << "10 calls in the new window";
}

TEST(CircuitBreakerTest, SuccessesFromAnOldWindowDoNotDiluteTheNewOne) {
    CircuitBreaker breaker(RateOnly(0.5, 4, seconds(10)));
    for (int i = 0; i < 100; ++i) breaker.OnSuccess(At(milliseconds(i)));
    // New window: 4 calls, 2 failures = 50 %.
    breaker.OnSuccess(At(seconds(10)));
    breaker.OnSuccess(At(seconds(10)));
    breaker.OnFailure(At(seconds(10)));
    EXPECT_EQ(breaker.StateAt(At(seconds(10))), State::kClosed);
    breaker.OnFailure(At(seconds(10)));
    EXPECT_EQ(breaker.StateAt(At(seconds(10))), State::kOpen);
}

TEST(CircuitBreakerTest, OpenRefusesUntilOpenDurationThenTurnsHalfOpen) {
    CircuitBreaker breaker(StreakOnly(2));
    Trip(breaker, 2, kT0);
    const TimePoint until = kT0 + seconds(30);
    for (const TimePoint t : {kT0, kT0 + seconds(1), until - nanoseconds(1)}) {
        EXPECT_EQ(breaker.StateAt(t), State::kOpen);
        EXPECT_FALSE(breaker.WouldAllow(t));
        EXPECT_FALSE(breaker.Allow(t));
    }
    EXPECT_EQ(breaker.StateAt(until), State::kHalfOpen);
    EXPECT_TRUE(breaker.WouldAllow(until));
    EXPECT_TRUE(breaker.Allow(until));
    EXPECT_EQ(breaker.StateAt(until), State::kHalfOpen);
}

TEST(CircuitBreakerTest, OutcomesOfCallsAdmittedBeforeItOpenedAreIgnored) {
    CircuitBreaker breaker(StreakOnly(2));
    Trip(breaker, 2, kT0);
    const TimePoint until = breaker.OpenUntil();
    breaker.OnFailure(kT0 + seconds(5));
    EXPECT_EQ(breaker.OpenUntil(), until) << "a late failure does not extend the open time";
    breaker.OnSuccess(kT0 + seconds(5));
    breaker.OnSuccess(kT0 + seconds(5));
    EXPECT_EQ(breaker.StateAt(kT0 + seconds(5)), State::kOpen) << "late successes do not close it";
}

TEST(CircuitBreakerTest, HalfOpenAdmitsAtMostTheProbeCount) {
    CircuitBreaker::Options o = StreakOnly(1);
    o.half_open_probes = 3;
    o.success_threshold = 10;
    CircuitBreaker breaker(o);
    Trip(breaker, 1, kT0);
    const TimePoint t = kT0 + seconds(30);
    EXPECT_TRUE(breaker.Allow(t));
    EXPECT_TRUE(breaker.Allow(t));
    EXPECT_TRUE(breaker.WouldAllow(t));
    EXPECT_TRUE(breaker.Allow(t));
    for (int i = 0; i < 10; ++i) {
        EXPECT_FALSE(breaker.WouldAllow(t));
        EXPECT_FALSE(breaker.Allow(t));
    }
    // A finished probe frees its slot for exactly one more.
    breaker.OnSuccess(t);
    EXPECT_EQ(breaker.StateAt(t), State::kHalfOpen);
    EXPECT_TRUE(breaker.WouldAllow(t));
    EXPECT_TRUE(breaker.Allow(t));
    EXPECT_FALSE(breaker.Allow(t));
}

TEST(CircuitBreakerTest, SuccessThresholdProbeSuccessesCloseIt) {
    CircuitBreaker::Options o = StreakOnly(3);
    o.half_open_probes = 1;
    o.success_threshold = 3;
    CircuitBreaker breaker(o);
    Trip(breaker, 3, kT0);
    TimePoint t = kT0 + seconds(30);
    for (int i = 0; i < 2; ++i) {
        ASSERT_TRUE(breaker.Allow(t)) << i;
        breaker.OnSuccess(t);
        EXPECT_EQ(breaker.StateAt(t), State::kHalfOpen) << i;
        t += milliseconds(10);
    }
    ASSERT_TRUE(breaker.Allow(t));
    breaker.OnSuccess(t);
    EXPECT_EQ(breaker.StateAt(t), State::kClosed);
    // Closed again with clean counters: it takes a full streak to open it once more.
    breaker.OnFailure(t);
    breaker.OnFailure(t);
    EXPECT_EQ(breaker.StateAt(t), State::kClosed);
    breaker.OnFailure(t);
    EXPECT_EQ(breaker.StateAt(t), State::kOpen);
}

TEST(CircuitBreakerTest, OneFailedProbeReopensWithAFreshOpenDuration) {
    CircuitBreaker::Options o = StreakOnly(2);
    o.half_open_probes = 2;
    o.success_threshold = 2;
    CircuitBreaker breaker(o);
    Trip(breaker, 2, kT0);
    const TimePoint probe = kT0 + seconds(31);
    ASSERT_TRUE(breaker.Allow(probe));
    ASSERT_TRUE(breaker.Allow(probe));
    breaker.OnSuccess(probe);  // one success of the two needed
    breaker.OnFailure(probe + milliseconds(500));
    EXPECT_EQ(breaker.StateAt(probe + milliseconds(500)), State::kOpen);
    EXPECT_EQ(breaker.OpenUntil(), probe + milliseconds(500) + seconds(30));
    EXPECT_EQ(breaker.StateAt(kT0 + seconds(60)), State::kOpen)
        << "the first open time would have been up; the new one is not";
    EXPECT_FALSE(breaker.Allow(kT0 + seconds(60)));
    // The next half-open starts over: the earlier probe success does not count.
    const TimePoint again = breaker.OpenUntil();
    ASSERT_TRUE(breaker.Allow(again));
    breaker.OnSuccess(again);
    EXPECT_EQ(breaker.StateAt(again), State::kHalfOpen);
    ASSERT_TRUE(breaker.Allow(again));
    breaker.OnSuccess(again);
    EXPECT_EQ(breaker.StateAt(again), State::kClosed);
}

TEST(CircuitBreakerTest, OnNeutralFreesAProbeSlotWithoutDecidingAnything) {
    CircuitBreaker::Options o = StreakOnly(1);
    o.half_open_probes = 1;
    o.success_threshold = 1;
    CircuitBreaker breaker(o);
    Trip(breaker, 1, kT0);
    const TimePoint t = kT0 + seconds(30);
    for (int i = 0; i < 20; ++i) {
        ASSERT_TRUE(breaker.Allow(t)) << i;
        EXPECT_FALSE(breaker.Allow(t)) << i;
        breaker.OnNeutral(t);
        EXPECT_EQ(breaker.StateAt(t), State::kHalfOpen) << i;
        EXPECT_EQ(breaker.OpenUntil(), kT0 + seconds(30)) << i;
    }
    ASSERT_TRUE(breaker.Allow(t));
    breaker.OnSuccess(t);
    EXPECT_EQ(breaker.StateAt(t), State::kClosed);
}

TEST(CircuitBreakerTest, ResetClosesItWithCleanCounters) {
    CircuitBreaker breaker(StreakOnly(3));
    Trip(breaker, 3, kT0);
    breaker.Reset();
    EXPECT_EQ(breaker.StateAt(kT0), State::kClosed);
    EXPECT_EQ(breaker.OpenUntil(), TimePoint{});
    EXPECT_TRUE(breaker.WouldAllow(kT0));
    EXPECT_TRUE(breaker.Allow(kT0));
    breaker.OnFailure(kT0);
    breaker.OnFailure(kT0);
    EXPECT_EQ(breaker.StateAt(kT0), State::kClosed);

    // From half-open with every probe out, too.
    CircuitBreaker probing(StreakOnly(1));
    Trip(probing, 1, kT0);
    ASSERT_TRUE(probing.Allow(kT0 + seconds(30)));
    ASSERT_FALSE(probing.Allow(kT0 + seconds(30)));
    probing.Reset();
    EXPECT_EQ(probing.StateAt(kT0 + seconds(30)), State::kClosed);
    EXPECT_TRUE(probing.Allow(kT0 + seconds(30)));
}

TEST(CircuitBreakerTest, ResetAlsoForgetsTheFailureRateWindow) {
    CircuitBreaker breaker(RateOnly(0.5, 4, seconds(60)));
    breaker.OnFailure(kT0);
    breaker.OnFailure(kT0);
    breaker.OnFailure(kT0);
    breaker.Reset();
    breaker.OnFailure(kT0 + seconds(1));
    EXPECT_EQ(breaker.StateAt(kT0 + seconds(1)), State::kClosed) << "1 call, not 4";
}

TEST(CircuitBreakerTest, WouldAllowAndStateAtHaveNoSideEffects) {
    CircuitBreaker::Options o = StreakOnly(1);
    o.half_open_probes = 1;
    CircuitBreaker breaker(o);
    Trip(breaker, 1, kT0);
    const TimePoint late = kT0 + seconds(45);
    for (int i = 0; i < 100; ++i) {
        EXPECT_TRUE(breaker.WouldAllow(late));
        EXPECT_EQ(breaker.StateAt(late), State::kHalfOpen);
    }
    // Still open underneath: an earlier time reads as open, and the open time is unchanged.
    EXPECT_EQ(breaker.StateAt(kT0 + seconds(10)), State::kOpen);
    EXPECT_EQ(breaker.OpenUntil(), kT0 + seconds(30));
    // No probe slot was taken by asking.
    EXPECT_TRUE(breaker.Allow(late));
    for (int i = 0; i < 100; ++i) EXPECT_FALSE(breaker.WouldAllow(late));
    EXPECT_FALSE(breaker.Allow(late));

    // Closed: asking does not count as a call (the rate needs 4 recorded calls).
    CircuitBreaker closed(RateOnly(0.5, 4, seconds(60)));
    for (int i = 0; i < 100; ++i) EXPECT_TRUE(closed.WouldAllow(kT0));
    closed.OnFailure(kT0);
    closed.OnFailure(kT0);
    closed.OnFailure(kT0);
    EXPECT_EQ(closed.StateAt(kT0), State::kClosed);
}

TEST(CircuitBreakerTest, Names) {
    EXPECT_EQ(Name(State::kClosed), "closed");
    EXPECT_EQ(Name(State::kOpen), "open");
    EXPECT_EQ(Name(State::kHalfOpen), "half_open");
}

// --- Cooldown ---

Cooldown::Options CooldownOptions() {
    Cooldown::Options o;
    o.allowed_fails = 3;
    o.window = seconds(60);
    o.cooldown = seconds(30);
    o.consecutive_failures = 1'000'000;  // the window's rules alone
    return o;
}

TEST(CooldownTest, StartsNotCooling) {
    const Cooldown cooldown(CooldownOptions());
    EXPECT_FALSE(cooldown.Cooling(kT0));
    EXPECT_FALSE(cooldown.Cooling(TimePoint{}));
    EXPECT_EQ(cooldown.CoolingUntil(), TimePoint{});
}

TEST(CooldownTest, MoreThanAllowedFailsInTheWindowCools) {
    Cooldown cooldown(CooldownOptions());
    cooldown.OnFailure(At(milliseconds(0)));
    cooldown.OnFailure(At(seconds(20)));
    cooldown.OnFailure(At(seconds(40)));
    EXPECT_FALSE(cooldown.Cooling(At(seconds(40)))) << "exactly allowed_fails is allowed";
    cooldown.OnFailure(At(seconds(59)));
    EXPECT_TRUE(cooldown.Cooling(At(seconds(59))));
    EXPECT_EQ(cooldown.CoolingUntil(), At(seconds(59)) + seconds(30));
    EXPECT_TRUE(cooldown.Cooling(At(seconds(89)) - nanoseconds(1)));
    EXPECT_FALSE(cooldown.Cooling(At(seconds(89))));
}

TEST(CooldownTest, ZeroAllowedFailsCoolsOnTheFirst) {
    Cooldown::Options o = CooldownOptions();
    o.allowed_fails = 0;
    Cooldown cooldown(o);
    cooldown.OnFailure(kT0);
    EXPECT_TRUE(cooldown.Cooling(kT0));
    EXPECT_EQ(cooldown.CoolingUntil(), kT0 + seconds(30));
}

TEST(CooldownTest, FailuresSpreadOverWindowsDoNotCool) {
    Cooldown cooldown(CooldownOptions());
    // Three failures in each 60 s window, for an hour: 180 failures, never more than 3 per window.
    for (int window = 0; window < 60; ++window) {
        for (int i = 0; i < 3; ++i) {
            const TimePoint t = At(seconds(60 * window + 10 * i));
            cooldown.OnFailure(t);
            ASSERT_FALSE(cooldown.Cooling(t)) << window << " " << i;
        }
    }
}

TEST(CooldownTest, TheWindowStartsAtTheFirstFailureAfterTheOldOneEnded) {
    Cooldown cooldown(CooldownOptions());
    cooldown.OnFailure(At(seconds(0)));
    cooldown.OnFailure(At(seconds(1)));
    cooldown.OnFailure(At(seconds(2)));
    // 60 s after the first: a new window with one failure.
    cooldown.OnFailure(At(seconds(60)));
    cooldown.OnFailure(At(seconds(61)));
    cooldown.OnFailure(At(seconds(62)));
    EXPECT_FALSE(cooldown.Cooling(At(seconds(62))));
    cooldown.OnFailure(At(seconds(63)));
    EXPECT_TRUE(cooldown.Cooling(At(seconds(63))));
    EXPECT_EQ(cooldown.CoolingUntil(), At(seconds(93)));
}

TEST(CooldownTest, RecoolingExtendsButNeverShortens) {
    Cooldown cooldown(CooldownOptions());
    for (int i = 0; i < 4; ++i) cooldown.OnFailure(At(seconds(0)));
    ASSERT_EQ(cooldown.CoolingUntil(), At(seconds(30)));
    // Four more failures 10 s later: extends to 40 s.
    for (int i = 0; i < 4; ++i) cooldown.OnFailure(At(seconds(10)));
    EXPECT_EQ(cooldown.CoolingUntil(), At(seconds(40)));
    // Four failures reported late, stamped 5 s (a worker that read the clock earlier): would end
    // at 35 s, which does not shorten the running cooldown.
    for (int i = 0; i < 4; ++i) cooldown.OnFailure(At(seconds(5)));
    EXPECT_EQ(cooldown.CoolingUntil(), At(seconds(40)));
    EXPECT_TRUE(cooldown.Cooling(At(seconds(39))));
}

TEST(CooldownTest, TheCountStartsOverAfterCooling) {
    Cooldown cooldown(CooldownOptions());
    for (int i = 0; i < 4; ++i) cooldown.OnFailure(At(seconds(0)));
    ASSERT_EQ(cooldown.CoolingUntil(), At(seconds(30)));
    // Three more in the same minute are within the allowance again.
    for (int i = 0; i < 3; ++i) cooldown.OnFailure(At(seconds(31)));
    EXPECT_FALSE(cooldown.Cooling(At(seconds(31))));
    EXPECT_EQ(cooldown.CoolingUntil(), At(seconds(30)));
}

TEST(CooldownTest, ResetEndsTheCooldownAndTheCount) {
    Cooldown cooldown(CooldownOptions());
    for (int i = 0; i < 4; ++i) cooldown.OnFailure(kT0);
    cooldown.OnFailure(kT0);
    cooldown.OnFailure(kT0);
    cooldown.Reset();
    EXPECT_FALSE(cooldown.Cooling(kT0));
    EXPECT_EQ(cooldown.CoolingUntil(), TimePoint{});
    cooldown.OnFailure(kT0);
    cooldown.OnFailure(kT0);
    cooldown.OnFailure(kT0);
    EXPECT_FALSE(cooldown.Cooling(kT0)) << "the two failures before Reset are forgotten";
}

TEST(CooldownTest, ABusyDeploymentsBackgroundErrorRateDoesNotCoolIt) {
    // 0.5 % of 1,000 attempts in a minute fail: five failures, more than allowed_fails, but a
    // fifth of the attempts (the default allowed_failure_rate) is far away.
    Cooldown cooldown(CooldownOptions());
    for (int i = 0; i < 1000; ++i) {
        const TimePoint at = At(milliseconds(i * 50));
        if (i % 200 == 199) {
            cooldown.OnFailure(at);
        } else {
            cooldown.OnSuccess(at);
        }
        ASSERT_FALSE(cooldown.Cooling(at)) << "attempt " << i;
    }
}

TEST(CooldownTest, CoolsWhenTheFailuresAreBothManyAndAFifthOfTheAttempts) {
    Cooldown cooldown(CooldownOptions());
    for (int i = 0; i < 12; ++i) cooldown.OnSuccess(At(milliseconds(i)));
    // 4 of 16 (25 %) and more than 3: cools on the fourth failure, not before.
    for (int i = 0; i < 3; ++i) cooldown.OnFailure(At(milliseconds(100 + i)));
    EXPECT_FALSE(cooldown.Cooling(At(milliseconds(102))));
    cooldown.OnFailure(At(milliseconds(103)));
    EXPECT_TRUE(cooldown.Cooling(At(milliseconds(103))));
}

TEST(CooldownTest, FailuresThatAreTooFewOfTheAttemptsWaitForMore) {
    Cooldown cooldown(CooldownOptions());
    for (int i = 0; i < 36; ++i) cooldown.OnSuccess(At(milliseconds(i)));
    // 4 of 40 is 10 %: not yet; 9 of 45 is exactly 20 %: cools.
    for (int i = 0; i < 8; ++i) {
        cooldown.OnFailure(At(milliseconds(100 + i)));
        ASSERT_FALSE(cooldown.Cooling(At(milliseconds(100 + i)))) << "failure " << i + 1;
    }
    cooldown.OnFailure(At(milliseconds(200)));
    EXPECT_TRUE(cooldown.Cooling(At(milliseconds(200))));
}

TEST(CooldownTest, SuccessesOfAnEarlierWindowDoNotCount) {
    Cooldown cooldown(CooldownOptions());
    for (int i = 0; i < 100; ++i) cooldown.OnSuccess(At(milliseconds(i)));
    // A minute later the window starts over: four failures in a row are all its attempts.
    for (int i = 0; i < 4; ++i) cooldown.OnFailure(At(seconds(61) + milliseconds(i)));
    EXPECT_TRUE(cooldown.Cooling(At(seconds(61) + milliseconds(3))));
}

TEST(CooldownTest, AZeroRateCountsFailuresOnly) {
    Cooldown::Options o = CooldownOptions();
    o.allowed_failure_rate = 0;
    Cooldown cooldown(o);
    for (int i = 0; i < 1000; ++i) cooldown.OnSuccess(At(milliseconds(i)));
    for (int i = 0; i < 4; ++i) cooldown.OnFailure(At(milliseconds(1000 + i)));
    EXPECT_TRUE(cooldown.Cooling(At(milliseconds(1003))));
}

TEST(CooldownTest, FailuresInARowCoolWhateverSuccessesTheWindowHolds) {
    Cooldown::Options o = CooldownOptions();
    o.consecutive_failures = 3;
    Cooldown cooldown(o);
    for (int i = 0; i < 30; ++i) cooldown.OnSuccess(At(milliseconds(i)));
    cooldown.OnFailure(At(milliseconds(100)));
    cooldown.OnFailure(At(milliseconds(101)));
    EXPECT_FALSE(cooldown.Cooling(At(milliseconds(101))));  // 2 of 32: under the rate, under 3
    cooldown.OnFailure(At(milliseconds(102)));
    EXPECT_TRUE(cooldown.Cooling(At(milliseconds(102))));
    EXPECT_EQ(cooldown.CoolingUntil(), At(milliseconds(102) + seconds(30)));
}

TEST(CooldownTest, ASuccessBreaksTheRow) {
    Cooldown::Options o = CooldownOptions();
    o.consecutive_failures = 3;
    Cooldown cooldown(o);
    // Enough successes that ten failures stay under the window's failure rate.
    for (int i = 0; i < 95; ++i) cooldown.OnSuccess(At(milliseconds(i)));
    for (int round = 0; round < 5; ++round) {  // fail, fail, succeed: never three in a row
        cooldown.OnFailure(At(milliseconds(100 + 3 * round)));
        cooldown.OnFailure(At(milliseconds(101 + 3 * round)));
        cooldown.OnSuccess(At(milliseconds(102 + 3 * round)));
    }
    EXPECT_FALSE(cooldown.Cooling(At(milliseconds(120))));
}

}  // namespace circuit_breaker_test
}  // namespace switchyard::policy
