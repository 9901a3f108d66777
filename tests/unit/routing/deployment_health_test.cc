#include "routing/deployment_health.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "policy/spend_cap.h"

namespace switchyard::routing {
namespace deployment_health_test {

using namespace std::chrono;
using policy::ErrorClass;
using BreakerState = policy::CircuitBreaker::State;
using TimePoint = DeploymentHealth::TimePoint;
using WallTime = DeploymentHealth::WallTime;

// Injected clocks: an arbitrary steady instant and a wall-clock instant read at the same moment.
const TimePoint kT0 = TimePoint(hours(1'000));
const WallTime kWall0 = sys_days{2025y / March / 15} + hours(12);  // 16.5 days before April 1

HealthOptions Options() {
    HealthOptions o;
    o.cooldown.allowed_fails = 3;
    o.cooldown.window = seconds(60);
    o.cooldown.cooldown = seconds(30);
    o.cooldown.consecutive_failures = 1'000'000;
    o.breaker.consecutive_failures = 5;
    o.breaker.failure_rate = 0.5;
    o.breaker.minimum_calls = 20;
    o.breaker.window = seconds(60);
    o.breaker.open_duration = seconds(30);
    o.breaker.half_open_probes = 1;
    o.breaker.success_threshold = 2;
    o.budget_max_tokens = 10;
    o.budget_token_ratio = 0.5;
    o.latency_alpha = 0.3;
    return o;
}

// Only the cooldown reacts to failures (the breaker needs a million in a row).
HealthOptions CooldownOnly(int allowed_fails) {
    HealthOptions o = Options();
    o.cooldown.allowed_fails = allowed_fails;
    o.breaker.consecutive_failures = 1'000'000;
    o.breaker.minimum_calls = 1'000'000;
    return o;
}

// Only the breaker reacts to failures.
HealthOptions BreakerOnly(int consecutive_failures) {
    HealthOptions o = Options();
    o.cooldown.allowed_fails = 1'000'000;
    o.breaker.consecutive_failures = consecutive_failures;
    return o;
}

// The most sensitive settings: any single failure would cool it and open the breaker.
HealthOptions Twitchy() {
    HealthOptions o = Options();
    o.cooldown.allowed_fails = 0;
    o.breaker.consecutive_failures = 1;
    o.breaker.minimum_calls = 1;
    return o;
}

bool Report(DeploymentHealth& health, std::size_t i, TimePoint now, ErrorClass error,
            std::optional<milliseconds> retry_after = std::nullopt,
            std::optional<milliseconds> ttft = std::nullopt, WallTime wall = kWall0) {
    return health.OnOutcome(i, now, wall, error, retry_after, ttft);
}

void ExpectHealthy(const DeploymentHealth& health, std::size_t i, TimePoint now) {
    const DeploymentSnapshot s = health.Snapshot(i, now);
    EXPECT_TRUE(s.available);
    EXPECT_EQ(s.state, DeploymentState::kHealthy);
    EXPECT_EQ(s.breaker, BreakerState::kClosed);
    EXPECT_FALSE(s.rate_limited_until);
    EXPECT_FALSE(s.cooling_until);
    EXPECT_FALSE(s.disabled_until);
    EXPECT_EQ(s.disabled_reason, "");
    EXPECT_FALSE(s.breaker_open_until);
    EXPECT_TRUE(health.Available(i, now));
    EXPECT_LE(health.AvailableAt(i, now), now);
}

const ErrorClass kSickClasses[] = {ErrorClass::kServerError, ErrorClass::kOverloaded,
                                   ErrorClass::kTimeout, ErrorClass::kConnection};
const ErrorClass kClientClasses[] = {ErrorClass::kBadRequest,    ErrorClass::kAuth,
                                     ErrorClass::kNotFound,      ErrorClass::kContextWindow,
                                     ErrorClass::kContentPolicy, ErrorClass::kRetryableClient};

// A config reload: the same deployment under a new index keeps what the old runtime knew.
TEST(DeploymentHealthTest, CarryOverKeepsCooldownRateLimitDisableAndBudget) {
    DeploymentHealth old(2, CooldownOnly(0));
    Report(old, 1, kT0, ErrorClass::kServerError);  // cools for 30 s
    Report(old, 1, kT0, ErrorClass::kRateLimited, milliseconds(2'000));
    old.Disable(0, kT0 + hours(1), "operator", kT0);
    for (int i = 0; i < 3; ++i) old.Budget(1).OnFailure();
    DeploymentHealth fresh(3, CooldownOnly(0));
    fresh.CarryOver(old, 1, 2);
    fresh.CarryOver(old, 0, 0);
    EXPECT_EQ(fresh.AvailabilityAt(2, kT0).state, DeploymentState::kCooling);
    EXPECT_EQ(fresh.AvailabilityAt(2, kT0).until, kT0 + seconds(30));
    EXPECT_EQ(fresh.Snapshot(2, kT0).rate_limited_until, kT0 + milliseconds(2'000));
    EXPECT_DOUBLE_EQ(fresh.Budget(2).Tokens(), old.Budget(1).Tokens());
    EXPECT_DOUBLE_EQ(fresh.Budget(2).Tokens(), 7) << "three failures spent three tokens";
    EXPECT_EQ(fresh.AvailabilityAt(0, kT0).state, DeploymentState::kDisabled);
    EXPECT_EQ(fresh.AvailabilityAt(1, kT0).state, DeploymentState::kHealthy) << "untouched";
}

// A reload during a half-open probe: the probe reports to the old health, so the new one must not
// count it, or the deployment would stay blocked for good.
TEST(DeploymentHealthTest, CarryOverDuringAProbeLeavesNoSlotTaken) {
    DeploymentHealth old(1, BreakerOnly(1));
    ASSERT_TRUE(old.Admit(0, kT0));
    Report(old, 0, kT0, ErrorClass::kServerError);  // opens for 30 s
    const TimePoint later = kT0 + seconds(31);
    ASSERT_TRUE(old.Admit(0, later)) << "the half-open probe";
    ASSERT_FALSE(old.Available(0, later)) << "its only slot is taken";
    DeploymentHealth fresh(1, BreakerOnly(1));
    fresh.CarryOver(old, 0, 0);
    EXPECT_TRUE(fresh.Available(0, later));
    EXPECT_TRUE(fresh.Admit(0, later)) << "a probe of its own";
}

// What the attempt engine reads: the state and the instant it lifts, read together. A cooldown on
// top of a rate limit reads as cooling (sick), not as a rate limit worth waiting for.
TEST(DeploymentHealthTest, AvailabilityNamesTheBlockerAndWhenItLifts) {
    DeploymentHealth health(1, CooldownOnly(1));
    Availability a = health.AvailabilityAt(0, kT0);
    EXPECT_EQ(a.state, DeploymentState::kHealthy);
    EXPECT_LE(a.until, kT0);

    Report(health, 0, kT0, ErrorClass::kRateLimited, milliseconds(2'000));
    a = health.AvailabilityAt(0, kT0);
    EXPECT_EQ(a.state, DeploymentState::kRateLimited);
    EXPECT_EQ(a.until, kT0 + milliseconds(2'000));

    Report(health, 0, kT0, ErrorClass::kServerError);
    Report(health, 0, kT0, ErrorClass::kServerError);  // over allowed_fails: a 30 s cooldown
    a = health.AvailabilityAt(0, kT0);
    EXPECT_EQ(a.state, DeploymentState::kCooling);
    EXPECT_EQ(a.until, kT0 + seconds(30));
    EXPECT_EQ(health.AvailabilityAt(0, kT0 + seconds(30)).state, DeploymentState::kHealthy);
}

TEST(DeploymentHealthTest, EveryDeploymentStartsAvailable) {
    const DeploymentHealth health(3, Options());
    for (std::size_t i = 0; i < 3; ++i) {
        SCOPED_TRACE(i);
        EXPECT_TRUE(health.Available(i, TimePoint{}));
        ExpectHealthy(health, i, kT0);
        const DeploymentSnapshot s = health.Snapshot(i, kT0);
        EXPECT_EQ(s.in_flight, 0);
        EXPECT_EQ(s.ewma_ttft_ms, -1);
        EXPECT_EQ(s.last_error_class, "");
        EXPECT_FALSE(s.last_error_at);
        EXPECT_DOUBLE_EQ(s.retry_budget_tokens, 10.0);
        EXPECT_EQ(health.InFlight(i), 0);
        EXPECT_EQ(health.EwmaTtftMs(i), -1);
    }
}

TEST(DeploymentHealthTest, RateLimitedUntilHoldsTheDeploymentBack) {
    DeploymentHealth health(3, Options());
    health.RateLimitedUntil(1, kT0 + milliseconds(5'000), kT0);
    EXPECT_EQ(health.AvailableAt(1, kT0), kT0 + milliseconds(5'000));
    EXPECT_FALSE(health.Available(1, kT0));
    EXPECT_FALSE(health.Available(1, kT0 + milliseconds(4'999)));
    EXPECT_FALSE(health.Admit(1, kT0 + milliseconds(4'999)));
    EXPECT_TRUE(health.Available(1, kT0 + milliseconds(5'000)));
    EXPECT_TRUE(health.Available(1, kT0 + milliseconds(6'000)));
    EXPECT_TRUE(health.Admit(1, kT0 + milliseconds(5'000)));
    const DeploymentSnapshot s = health.Snapshot(1, kT0);
    EXPECT_EQ(s.state, DeploymentState::kRateLimited);
    EXPECT_FALSE(s.available);
    EXPECT_EQ(s.rate_limited_until, kT0 + milliseconds(5'000));
    EXPECT_EQ(health.Snapshot(1, kT0 + milliseconds(5'000)).state, DeploymentState::kHealthy);
    // The others are not affected.
    ExpectHealthy(health, 0, kT0);
    ExpectHealthy(health, 2, kT0);
}

TEST(DeploymentHealthTest, ExtendsButNeverShortens) {
    DeploymentHealth health(1, Options());
    health.RateLimitedUntil(0, kT0 + milliseconds(5'000), kT0);
    health.RateLimitedUntil(0, kT0 + milliseconds(10'000), kT0);
    EXPECT_EQ(health.AvailableAt(0, kT0), kT0 + milliseconds(10'000));
    health.RateLimitedUntil(0, kT0 + milliseconds(2'000), kT0);
    EXPECT_EQ(health.AvailableAt(0, kT0), kT0 + milliseconds(10'000));
    health.RateLimitedUntil(0, kT0, kT0);
    EXPECT_EQ(health.AvailableAt(0, kT0), kT0 + milliseconds(10'000));
    EXPECT_FALSE(health.Available(0, kT0 + milliseconds(9'999)));
    // A 429's retry-after does the same: a shorter one does not shorten the hold.
    Report(health, 0, kT0 + milliseconds(1'000), ErrorClass::kRateLimited, milliseconds(2'000));
    EXPECT_EQ(health.AvailableAt(0, kT0), kT0 + milliseconds(10'000));
    Report(health, 0, kT0 + milliseconds(1'000), ErrorClass::kRateLimited, milliseconds(20'000));
    EXPECT_EQ(health.AvailableAt(0, kT0), kT0 + milliseconds(21'000));
    // And so does Disable.
    health.Disable(0, kT0 + hours(2), "operator", kT0);
    health.Disable(0, kT0 + hours(1), "operator again", kT0);
    EXPECT_EQ(health.AvailableAt(0, kT0), kT0 + hours(2));
}

TEST(DeploymentHealthTest, ConcurrentUpdatesKeepTheLatest) {
    DeploymentHealth health(2, Options());
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&, t] {
            while (!go.load()) std::this_thread::yield();
            for (int i = 0; i < 5'000; ++i) {
                // Thread t writes values t, t + 8, t + 16, ... in a scrambled order.
                const int k = (i * 7'919) % 5'000;
                health.RateLimitedUntil(0, kT0 + milliseconds(k * 8 + t), kT0);
            }
        });
    }
    go.store(true);
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(health.AvailableAt(0, kT0), kT0 + milliseconds(4'999 * 8 + 7));
    EXPECT_TRUE(health.Available(1, kT0));
}

TEST(DeploymentHealthTest, EachDeploymentHasItsOwnBudget) {
    HealthOptions o = Options();
    o.budget_max_tokens = 4;
    o.budget_token_ratio = 0.5;
    DeploymentHealth health(2, o);
    EXPECT_NE(&health.Budget(0), &health.Budget(1));
    EXPECT_EQ(&health.Budget(0), &health.Budget(0));
    EXPECT_DOUBLE_EQ(health.Budget(0).Tokens(), 4.0);
    health.Budget(0).OnFailure();
    health.Budget(0).OnFailure();
    EXPECT_FALSE(health.Budget(0).CanRetry());
    EXPECT_TRUE(health.Budget(1).CanRetry());
    EXPECT_DOUBLE_EQ(health.Budget(1).Tokens(), 4.0);
    health.Budget(0).OnSuccess();
    EXPECT_DOUBLE_EQ(health.Budget(0).Tokens(), 2.5);
    EXPECT_DOUBLE_EQ(health.Snapshot(0, kT0).retry_budget_tokens, 2.5);
    EXPECT_DOUBLE_EQ(health.Snapshot(1, kT0).retry_budget_tokens, 4.0);
}

TEST(DeploymentHealthTest, SuccessUpdatesTheLatencyAverage) {
    DeploymentHealth health(2, Options());
    Report(health, 0, kT0, ErrorClass::kNone, std::nullopt, milliseconds(100));
    EXPECT_DOUBLE_EQ(health.EwmaTtftMs(0), 100.0) << "the first sample is the average";
    Report(health, 0, kT0, ErrorClass::kNone, std::nullopt, milliseconds(200));
    EXPECT_DOUBLE_EQ(health.EwmaTtftMs(0), 130.0);  // 0.3 * 200 + 0.7 * 100
    Report(health, 0, kT0, ErrorClass::kNone, std::nullopt, milliseconds(50));
    EXPECT_DOUBLE_EQ(health.EwmaTtftMs(0), 106.0);  // 0.3 * 50 + 0.7 * 130
    // A success without a measurement and failures with one leave it alone.
    Report(health, 0, kT0, ErrorClass::kNone);
    Report(health, 0, kT0, ErrorClass::kServerError, std::nullopt, milliseconds(9'000));
    Report(health, 0, kT0, ErrorClass::kBadRequest, std::nullopt, milliseconds(9'000));
    EXPECT_DOUBLE_EQ(health.EwmaTtftMs(0), 106.0);
    EXPECT_DOUBLE_EQ(health.Snapshot(0, kT0).ewma_ttft_ms, 106.0);
    EXPECT_EQ(health.EwmaTtftMs(1), -1) << "per deployment";
}

TEST(DeploymentHealthTest, LatencyAlphaIsConfigurable) {
    HealthOptions o = Options();
    o.latency_alpha = 0.5;
    DeploymentHealth health(1, o);
    Report(health, 0, kT0, ErrorClass::kNone, std::nullopt, milliseconds(100));
    Report(health, 0, kT0, ErrorClass::kNone, std::nullopt, milliseconds(300));
    EXPECT_DOUBLE_EQ(health.EwmaTtftMs(0), 200.0);
}

TEST(DeploymentHealthTest, SuccessesKeepItClosedAndHealthy) {
    DeploymentHealth health(1, Twitchy());
    for (int i = 0; i < 100; ++i) {
        ASSERT_TRUE(health.Admit(0, kT0));
        Report(health, 0, kT0, ErrorClass::kNone);
    }
    ExpectHealthy(health, 0, kT0);
    EXPECT_EQ(health.Snapshot(0, kT0).last_error_class, "") << "a success is not an error";
}

TEST(DeploymentHealthTest, ServerSideFailuresCountTowardTheCooldown) {
    for (const ErrorClass error : kSickClasses) {
        SCOPED_TRACE(policy::Name(error));
        DeploymentHealth health(2, CooldownOnly(3));
        for (int i = 0; i < 3; ++i) Report(health, 0, kT0, error);
        EXPECT_TRUE(health.Available(0, kT0)) << "three are allowed";
        EXPECT_FALSE(Report(health, 0, kT0 + seconds(1), error));
        const TimePoint until = kT0 + seconds(31);
        EXPECT_FALSE(health.Available(0, kT0 + seconds(1)));
        EXPECT_FALSE(health.Admit(0, kT0 + seconds(1)));
        EXPECT_EQ(health.AvailableAt(0, kT0 + seconds(1)), until);
        const DeploymentSnapshot s = health.Snapshot(0, kT0 + seconds(1));
        EXPECT_EQ(s.state, DeploymentState::kCooling);
        EXPECT_FALSE(s.available);
        EXPECT_EQ(s.cooling_until, until);
        EXPECT_EQ(s.breaker, BreakerState::kClosed);
        EXPECT_EQ(s.last_error_class, policy::Name(error));
        EXPECT_EQ(s.last_error_at, kWall0);
        EXPECT_FALSE(health.Available(0, until - nanoseconds(1)));
        ExpectHealthy(health, 0, until);
        ExpectHealthy(health, 1, kT0 + seconds(1));
    }
}

TEST(DeploymentHealthTest, ServerSideFailuresOpenTheBreaker) {
    for (const ErrorClass error : kSickClasses) {
        SCOPED_TRACE(policy::Name(error));
        DeploymentHealth health(1, BreakerOnly(3));
        Report(health, 0, kT0, error);
        Report(health, 0, kT0, error);
        EXPECT_TRUE(health.Available(0, kT0));
        Report(health, 0, kT0 + seconds(2), error);
        const TimePoint until = kT0 + seconds(32);
        const DeploymentSnapshot s = health.Snapshot(0, kT0 + seconds(2));
        EXPECT_EQ(s.state, DeploymentState::kOpen);
        EXPECT_FALSE(s.available);
        EXPECT_EQ(s.breaker, BreakerState::kOpen);
        EXPECT_EQ(s.breaker_open_until, until);
        EXPECT_FALSE(s.cooling_until);
        EXPECT_EQ(health.AvailableAt(0, kT0 + seconds(2)), until);
        EXPECT_FALSE(health.Admit(0, until - nanoseconds(1)));
        // When the open time is up it is half-open, and available for a probe.
        const DeploymentSnapshot later = health.Snapshot(0, until);
        EXPECT_EQ(later.state, DeploymentState::kHalfOpen);
        EXPECT_EQ(later.breaker, BreakerState::kHalfOpen);
        EXPECT_TRUE(later.available);
        EXPECT_FALSE(later.breaker_open_until);
        EXPECT_TRUE(health.Available(0, until));
    }
}

TEST(DeploymentHealthTest, ClientErrorsNeverCoolOrOpenEvenAHundredTimes) {
    for (const ErrorClass error : kClientClasses) {
        SCOPED_TRACE(policy::Name(error));
        DeploymentHealth health(1, Twitchy());
        for (int i = 0; i < 100; ++i) {
            const TimePoint t = kT0 + milliseconds(i);
            ASSERT_TRUE(health.Admit(0, t)) << i;
            EXPECT_FALSE(Report(health, 0, t, error, milliseconds(5'000)));
        }
        const TimePoint end = kT0 + milliseconds(100);
        ExpectHealthy(health, 0, end);
        const DeploymentSnapshot s = health.Snapshot(0, end);
        EXPECT_EQ(s.last_error_class, policy::Name(error));
        EXPECT_EQ(s.last_error_at, kWall0);
        // A retry-after on a client error does not rate-limit the deployment either.
        EXPECT_FALSE(s.rate_limited_until);
    }
}

TEST(DeploymentHealthTest, ClientErrorsDoNotBreakAFailureStreak) {
    DeploymentHealth health(1, BreakerOnly(3));
    Report(health, 0, kT0, ErrorClass::kServerError);
    Report(health, 0, kT0, ErrorClass::kServerError);
    for (int i = 0; i < 10; ++i) Report(health, 0, kT0, ErrorClass::kBadRequest);
    EXPECT_TRUE(health.Available(0, kT0));
    Report(health, 0, kT0, ErrorClass::kServerError);
    EXPECT_EQ(health.Snapshot(0, kT0).state, DeploymentState::kOpen);
}

TEST(DeploymentHealthTest, RateLimitedMarksButIsNotAFailure) {
    DeploymentHealth health(1, Twitchy());
    EXPECT_FALSE(Report(health, 0, kT0, ErrorClass::kRateLimited, milliseconds(2'000)));
    const DeploymentSnapshot s = health.Snapshot(0, kT0);
    EXPECT_EQ(s.state, DeploymentState::kRateLimited);
    EXPECT_FALSE(s.available);
    EXPECT_EQ(s.rate_limited_until, kT0 + milliseconds(2'000));
    EXPECT_EQ(s.breaker, BreakerState::kClosed);
    EXPECT_FALSE(s.cooling_until);
    EXPECT_EQ(s.last_error_class, "rate_limited");
    EXPECT_EQ(health.AvailableAt(0, kT0), kT0 + milliseconds(2'000));
    EXPECT_FALSE(health.Admit(0, kT0 + milliseconds(1'999)));
    ExpectHealthy(health, 0, kT0 + milliseconds(2'000));

    // A hundred of them, spaced out so each is admitted: never cooling, never open.
    for (int i = 0; i < 100; ++i) {
        const TimePoint t = kT0 + seconds(10 + i);
        ASSERT_TRUE(health.Admit(0, t)) << i;
        Report(health, 0, t, ErrorClass::kRateLimited, milliseconds(500));
        ASSERT_EQ(health.Snapshot(0, t).state, DeploymentState::kRateLimited) << i;
    }
    ExpectHealthy(health, 0, kT0 + seconds(200));
}

TEST(DeploymentHealthTest, RateLimitedWithoutRetryAfterDoesNotHoldItBack) {
    DeploymentHealth health(1, Twitchy());
    for (int i = 0; i < 100; ++i) Report(health, 0, kT0, ErrorClass::kRateLimited);
    ExpectHealthy(health, 0, kT0);
    EXPECT_EQ(health.Snapshot(0, kT0).last_error_class, "rate_limited");
}

TEST(DeploymentHealthTest, QuotaExhaustedDisablesUntilTheNextMonth) {
    DeploymentHealth health(2, Twitchy());
    const auto to_reset =
        duration_cast<TimePoint::duration>(policy::SpendCapResetAfter(kWall0) - kWall0);
    ASSERT_EQ(to_reset, days(16) + hours(12));
    const TimePoint until = kT0 + to_reset;

    EXPECT_TRUE(Report(health, 0, kT0, ErrorClass::kQuotaExhausted)) << "newly disabled";
    DeploymentSnapshot s = health.Snapshot(0, kT0);
    EXPECT_EQ(s.state, DeploymentState::kDisabled);
    EXPECT_FALSE(s.available);
    EXPECT_EQ(s.disabled_until, until);
    EXPECT_EQ(s.disabled_reason, "spend cap reached");
    EXPECT_EQ(s.last_error_class, "quota_exhausted");
    EXPECT_EQ(s.last_error_at, kWall0);
    EXPECT_EQ(s.breaker, BreakerState::kClosed) << "a spend cap is not a sick deployment";
    EXPECT_FALSE(s.cooling_until);
    EXPECT_EQ(health.AvailableAt(0, kT0), until);
    EXPECT_FALSE(health.Available(0, until - nanoseconds(1)));
    EXPECT_FALSE(health.Admit(0, kT0 + days(10)));
    ExpectHealthy(health, 1, kT0);

    // Another request hits it an hour later: still disabled, but not news.
    EXPECT_FALSE(Report(health, 0, kT0 + hours(1), ErrorClass::kQuotaExhausted, std::nullopt,
                        std::nullopt, kWall0 + hours(1)));
    EXPECT_EQ(health.AvailableAt(0, kT0), until);

    // On April 1 it serves again; hitting the cap in April is news again, until May 1.
    EXPECT_TRUE(health.Available(0, until));
    EXPECT_EQ(health.Snapshot(0, until).state, DeploymentState::kHealthy);
    const WallTime april = sys_days{2025y / April / 1};
    EXPECT_TRUE(Report(health, 0, until + hours(1), ErrorClass::kQuotaExhausted, std::nullopt,
                       std::nullopt, april + hours(1)));
    // Hit at April 1 01:00 (an hour after `until`): 30 days less an hour to go.
    EXPECT_EQ(health.AvailableAt(0, until), until + days(30));
}

TEST(DeploymentHealthTest, QuotaExhaustedOnNewYearsEveLiftsOnJanuaryFirst) {
    DeploymentHealth health(1, Options());
    const WallTime wall = sys_days{2025y / December / 31} + hours(23) + minutes(30);
    EXPECT_TRUE(
        Report(health, 0, kT0, ErrorClass::kQuotaExhausted, std::nullopt, std::nullopt, wall));
    EXPECT_EQ(health.AvailableAt(0, kT0), kT0 + minutes(30));
    EXPECT_EQ(health.Snapshot(0, kT0).disabled_until, kT0 + minutes(30));
}

TEST(DeploymentHealthTest, DisableAndEnable) {
    DeploymentHealth health(2, Options());
    health.Disable(1, kT0 + hours(1), "maintenance", kT0);
    DeploymentSnapshot s = health.Snapshot(1, kT0);
    EXPECT_EQ(s.state, DeploymentState::kDisabled);
    EXPECT_EQ(s.disabled_until, kT0 + hours(1));
    EXPECT_EQ(s.disabled_reason, "maintenance");
    EXPECT_FALSE(health.Admit(1, kT0));
    ExpectHealthy(health, 0, kT0);
    health.Enable(1);
    ExpectHealthy(health, 1, kT0);
    EXPECT_TRUE(health.Admit(1, kT0));
}

TEST(DeploymentHealthTest, EnableClearsDisabledCooldownBreakerAndRateLimit) {
    DeploymentHealth health(1, Twitchy());
    Report(health, 0, kT0, ErrorClass::kServerError);  // cools and opens
    Report(health, 0, kT0, ErrorClass::kRateLimited, minutes(5));
    Report(health, 0, kT0, ErrorClass::kQuotaExhausted);
    DeploymentSnapshot s = health.Snapshot(0, kT0);
    EXPECT_EQ(s.state, DeploymentState::kDisabled);
    EXPECT_TRUE(s.cooling_until);
    EXPECT_TRUE(s.rate_limited_until);
    EXPECT_EQ(s.breaker, BreakerState::kOpen);
    EXPECT_TRUE(s.breaker_open_until);

    health.Enable(0);
    ExpectHealthy(health, 0, kT0);
    EXPECT_TRUE(health.Admit(0, kT0));
    // The record of the last error stays for the operator.
    EXPECT_EQ(health.Snapshot(0, kT0).last_error_class, "quota_exhausted");
    // And a fresh spend-cap hit is news again.
    EXPECT_TRUE(Report(health, 0, kT0, ErrorClass::kQuotaExhausted));
}

TEST(DeploymentHealthTest, AdmitTakesTheHalfOpenProbeSlot) {
    DeploymentHealth health(1, BreakerOnly(2));  // 1 probe, 2 successes close it
    Report(health, 0, kT0, ErrorClass::kServerError);
    Report(health, 0, kT0, ErrorClass::kServerError);
    const TimePoint t = kT0 + seconds(30);
    EXPECT_TRUE(health.Available(0, t)) << "a free probe slot counts as available";
    EXPECT_TRUE(health.Available(0, t)) << "asking takes nothing";
    ASSERT_TRUE(health.Admit(0, t));
    EXPECT_FALSE(health.Admit(0, t)) << "the one probe is out";
    EXPECT_FALSE(health.Available(0, t));
    EXPECT_GT(health.AvailableAt(0, t), t);
    DeploymentSnapshot s = health.Snapshot(0, t);
    EXPECT_EQ(s.state, DeploymentState::kHalfOpen);
    EXPECT_FALSE(s.available);

    // A neutral outcome frees the slot without deciding anything.
    Report(health, 0, t, ErrorClass::kBadRequest);
    EXPECT_EQ(health.Snapshot(0, t).state, DeploymentState::kHalfOpen);
    ASSERT_TRUE(health.Admit(0, t));
    EXPECT_FALSE(health.Admit(0, t));
    // A success frees it and counts one of two.
    Report(health, 0, t, ErrorClass::kNone, std::nullopt, milliseconds(80));
    EXPECT_EQ(health.Snapshot(0, t).state, DeploymentState::kHalfOpen);
    ASSERT_TRUE(health.Admit(0, t));
    EXPECT_FALSE(health.Admit(0, t));
    Report(health, 0, t, ErrorClass::kNone);
    ExpectHealthy(health, 0, t);
    EXPECT_TRUE(health.Admit(0, t));
    EXPECT_TRUE(health.Admit(0, t)) << "closed: no slots";
}

TEST(DeploymentHealthTest, AFailedProbeReopensTheBreaker) {
    DeploymentHealth health(1, BreakerOnly(2));
    Report(health, 0, kT0, ErrorClass::kTimeout);
    Report(health, 0, kT0, ErrorClass::kTimeout);
    const TimePoint t = kT0 + seconds(40);
    ASSERT_TRUE(health.Admit(0, t));
    Report(health, 0, t, ErrorClass::kTimeout);
    const DeploymentSnapshot s = health.Snapshot(0, t);
    EXPECT_EQ(s.state, DeploymentState::kOpen);
    EXPECT_EQ(s.breaker_open_until, t + seconds(30));
    EXPECT_EQ(health.AvailableAt(0, t), t + seconds(30));
    EXPECT_FALSE(health.Admit(0, t + seconds(29)));
    EXPECT_TRUE(health.Admit(0, t + seconds(30)));
}

TEST(DeploymentHealthTest, SnapshotStatePrecedence) {
    DeploymentHealth health(1, CooldownOnly(0));
    health.RateLimitedUntil(0, kT0 + seconds(100), kT0);
    EXPECT_EQ(health.Snapshot(0, kT0).state, DeploymentState::kRateLimited);
    Report(health, 0, kT0, ErrorClass::kServerError);  // cools for 30 s
    DeploymentSnapshot s = health.Snapshot(0, kT0);
    EXPECT_EQ(s.state, DeploymentState::kCooling) << "cooling outranks a rate limit";
    EXPECT_EQ(s.rate_limited_until, kT0 + seconds(100));
    EXPECT_EQ(s.cooling_until, kT0 + seconds(30));
    EXPECT_EQ(health.AvailableAt(0, kT0), kT0 + seconds(100)) << "the later blocker wins";
    health.Disable(0, kT0 + seconds(10), "operator", kT0);
    EXPECT_EQ(health.Snapshot(0, kT0).state, DeploymentState::kDisabled)
        << "disabled outranks everything";
    EXPECT_EQ(health.Snapshot(0, kT0 + seconds(10)).state, DeploymentState::kCooling);
    EXPECT_EQ(health.Snapshot(0, kT0 + seconds(30)).state, DeploymentState::kRateLimited);
    EXPECT_EQ(health.Snapshot(0, kT0 + seconds(100)).state, DeploymentState::kHealthy);
}

TEST(DeploymentHealthTest, ABenchedDeploymentThatAnswersSomeCallsMayBeTriedInAPanic) {
    DeploymentHealth health(2, CooldownOnly(3));
    // Deployment 0 answers every other call; 1 fails every call.
    for (int i = 0; i < 8; ++i) {
        const TimePoint at = kT0 + milliseconds(i);
        Report(health, 0, at, i % 2 == 0 ? ErrorClass::kNone : ErrorClass::kOverloaded);
        Report(health, 1, at, ErrorClass::kOverloaded);
    }
    const TimePoint now = kT0 + milliseconds(10);
    const Availability browning = health.AvailabilityAt(0, now);
    EXPECT_EQ(browning.state, DeploymentState::kCooling);
    EXPECT_GT(browning.panic, 0.3);
    EXPECT_LT(browning.panic, 0.7);
    EXPECT_EQ(health.AdmitAttempt(0, now), AttemptAdmission::kRefused);
    EXPECT_EQ(health.AdmitAttempt(0, now, Admission::kPanic), AttemptAdmission::kAdmitted);
    // Never answered: down, and skipped even in a panic.
    const Availability down = health.AvailabilityAt(1, now);
    EXPECT_EQ(down.state, DeploymentState::kCooling);
    EXPECT_EQ(down.panic, 0);
    EXPECT_EQ(health.AdmitAttempt(1, now, Admission::kPanic), AttemptAdmission::kRefused);
    // A healthy deployment needs no panic: its share reads 0.
    EXPECT_EQ(health.AvailabilityAt(0, now + seconds(31)).panic, 0);
}

TEST(DeploymentHealthTest, PanicEndsWhenNoCallOfTwoWindowsSucceeded) {
    HealthOptions o = CooldownOnly(0);
    o.cooldown.cooldown = minutes(5);
    DeploymentHealth health(1, o);
    Report(health, 0, kT0, ErrorClass::kNone);
    Report(health, 0, kT0 + milliseconds(1), ErrorClass::kServerError);
    EXPECT_DOUBLE_EQ(health.AvailabilityAt(0, kT0 + seconds(59)).panic, 0.5);
    EXPECT_DOUBLE_EQ(health.AvailabilityAt(0, kT0 + seconds(119)).panic, 0.5);
    EXPECT_EQ(health.AvailabilityAt(0, kT0 + seconds(121)).panic, 0);  // the window is 60 s
}

TEST(DeploymentHealthTest, TenFailuresInARowMeanDownEvenInAPanic) {
    HealthOptions o = CooldownOnly(0);
    o.cooldown.cooldown = minutes(5);
    DeploymentHealth health(1, o);
    for (int i = 0; i < 30; ++i) Report(health, 0, kT0 + milliseconds(i), ErrorClass::kNone);
    for (int i = 0; i < 9; ++i) {
        Report(health, 0, kT0 + milliseconds(100 + i), ErrorClass::kConnection);
    }
    EXPECT_GT(health.AvailabilityAt(0, kT0 + seconds(1)).panic, 0.7);
    Report(health, 0, kT0 + milliseconds(200), ErrorClass::kConnection);
    EXPECT_EQ(health.AvailabilityAt(0, kT0 + seconds(1)).panic, 0);
}

TEST(DeploymentHealthTest, PanicCanBeTurnedOff) {
    HealthOptions o = CooldownOnly(0);
    o.panic = false;
    DeploymentHealth health(1, o);
    Report(health, 0, kT0, ErrorClass::kNone);
    Report(health, 0, kT0 + milliseconds(1), ErrorClass::kServerError);
    EXPECT_EQ(health.AvailabilityAt(0, kT0 + milliseconds(2)).panic, 0);
    EXPECT_EQ(health.AdmitAttempt(0, kT0 + milliseconds(2), Admission::kPanic),
              AttemptAdmission::kRefused);
}

TEST(DeploymentHealthTest, LatencyHistoryGivesPercentilesOnceLongEnough) {
    HealthOptions o = Options();
    o.latency.min_samples = 20;
    DeploymentHealth health(1, o);
    for (int i = 1; i <= 19; ++i) {
        health.RecordLatency(0, kT0, {false, milliseconds(100 + i), {}, {}, 50});
    }
    EXPECT_FALSE(health.Latency(0, kT0).whole);
    health.RecordLatency(0, kT0, {false, milliseconds(3000), {}, {}, 50});
    const auto quantiles = health.Latency(0, kT0);
    ASSERT_TRUE(quantiles.whole);
    EXPECT_NEAR(static_cast<double>(quantiles.whole->count()), 3000, 3000 * 0.021);
    EXPECT_FALSE(quantiles.stream_first_byte);  // no stream yet
}

TEST(DeploymentHealthTest, InFlightIsPerDeployment) {
    DeploymentHealth health(3, Options());
    health.AddInFlight(1, 3);
    health.AddInFlight(1, -1);
    health.AddInFlight(2, 1);
    EXPECT_EQ(health.InFlight(0), 0);
    EXPECT_EQ(health.InFlight(1), 2);
    EXPECT_EQ(health.InFlight(2), 1);
    EXPECT_EQ(health.Snapshot(1, kT0).in_flight, 2);
    EXPECT_TRUE(health.Available(1, kT0)) << "load does not make it unavailable";
}

TEST(DeploymentHealthTest, ConcurrentAdmitsTakeOnlyTheFreeProbeSlots) {
    HealthOptions o = BreakerOnly(1);
    o.breaker.half_open_probes = 3;
    DeploymentHealth health(1, o);
    Report(health, 0, kT0, ErrorClass::kServerError);
    const TimePoint t = kT0 + seconds(30);
    for (int round = 0; round < 20; ++round) {
        std::atomic<bool> go{false};
        std::atomic<int> admitted{0};
        std::vector<std::thread> threads;
        for (int k = 0; k < 8; ++k) {
            threads.emplace_back([&] {
                while (!go.load()) std::this_thread::yield();
                for (int i = 0; i < 50; ++i) {
                    if (health.Admit(0, t)) admitted.fetch_add(1);
                }
            });
        }
        go.store(true);
        for (auto& thread : threads) thread.join();
        ASSERT_EQ(admitted.load(), 3) << round;
        // Free the slots without deciding, for the next round.
        for (int i = 0; i < 3; ++i) Report(health, 0, t, ErrorClass::kBadRequest);
    }
}

// --- Race freedom: 8 threads on one deployment, with a mix of everything. ---

TEST(DeploymentHealthStressTest, EightThreadsHammerOneDeployment) {
    HealthOptions o;
    o.cooldown.allowed_fails = 2;
    o.cooldown.window = milliseconds(5);
    o.cooldown.cooldown = milliseconds(1);
    o.breaker.consecutive_failures = 3;
    o.breaker.failure_rate = 0.5;
    o.breaker.minimum_calls = 10;
    o.breaker.window = milliseconds(10);
    o.breaker.open_duration = milliseconds(2);
    o.breaker.half_open_probes = 2;
    o.breaker.success_threshold = 2;
    o.budget_max_tokens = 50;
    o.budget_token_ratio = 0.1;
    DeploymentHealth health(2, o);

    // A logical clock every operation advances by 50 us: 200k operations cover about 10 s, enough
    // for thousands of breaker and cooldown transitions, without ever sleeping.
    std::atomic<std::int64_t> ticks{0};
    const auto now = [&] { return kT0 + microseconds(50 * ticks.fetch_add(1)); };
    const std::vector<std::string> states = {"healthy", "rate_limited", "cooling",
                                             "open",    "half_open",    "disabled"};

    constexpr int kThreads = 8;
    constexpr int kOpsPerThread = 25'000;
    std::atomic<bool> go{false};
    std::atomic<int> admitted{0};
    std::atomic<int> bad_states{0};
    std::atomic<int> negative_in_flight{0};
    std::atomic<int> bad_ewma{0};
    std::atomic<int> seen[6] = {};  // snapshots per state, in the order of `states`
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            std::mt19937_64 rng(1'000 + t);
            while (!go.load()) std::this_thread::yield();
            for (int op = 0; op < kOpsPerThread; ++op) {
                const auto roll = rng() % 1'000;
                if (roll < 600) {
                    if (!health.Admit(0, now())) continue;
                    admitted.fetch_add(1, std::memory_order_relaxed);
                    health.AddInFlight(0, 1);
                    const auto kind = rng() % 1'000;
                    const WallTime wall = kWall0 + microseconds(op);
                    if (kind < 600) {
                        health.OnOutcome(0, now(), wall, ErrorClass::kNone, std::nullopt,
                                         milliseconds(10 + static_cast<int>(rng() % 490)));
                        health.Budget(0).OnSuccess();
                    } else if (kind < 800) {
                        const ErrorClass sick = kSickClasses[rng() % 4];
                        health.OnOutcome(0, now(), wall, sick, std::nullopt, std::nullopt);
                        health.Budget(0).OnFailure();
                    } else if (kind < 920) {
                        const ErrorClass client = kClientClasses[rng() % 6];
                        health.OnOutcome(0, now(), wall, client, std::nullopt, std::nullopt);
                    } else if (kind < 998) {
                        health.OnOutcome(0, now(), wall, ErrorClass::kRateLimited, milliseconds(1),
                                         std::nullopt);
                    } else {
                        health.OnOutcome(0, now(), wall, ErrorClass::kQuotaExhausted, std::nullopt,
                                         std::nullopt);
                    }
                    health.AddInFlight(0, -1);
                } else if (roll < 850) {
                    const DeploymentSnapshot s = health.Snapshot(0, now());
                    const auto it = std::find(states.begin(), states.end(), Name(s.state));
                    if (it == states.end()) {
                        bad_states.fetch_add(1);
                    } else {
                        seen[it - states.begin()].fetch_add(1, std::memory_order_relaxed);
                    }
                    if (s.in_flight < 0) negative_in_flight.fetch_add(1);
                    if (s.ewma_ttft_ms != -1 && (s.ewma_ttft_ms < 10 || s.ewma_ttft_ms > 500)) {
                        bad_ewma.fetch_add(1);
                    }
                } else if (roll < 930) {
                    const TimePoint at = now();
                    (void)health.Available(0, at);
                    (void)health.AvailableAt(0, at);
                    (void)health.EwmaTtftMs(0);
                    if (health.InFlight(0) < 0) negative_in_flight.fetch_add(1);
                    (void)health.Budget(0).CanRetry();
                } else if (roll < 960) {
                    health.RateLimitedUntil(0, now() + microseconds(100), now());
                } else if (roll < 970) {
                    health.Disable(0, now() + milliseconds(1), "stress", now());
                } else if (roll < 980) {
                    health.Enable(0);
                } else {
                    // Load from attempts that are queued elsewhere comes and goes too.
                    health.AddInFlight(0, 2);
                    (void)health.Snapshot(0, now());
                    health.AddInFlight(0, -2);
                }
            }
        });
    }
    go.store(true);
    for (auto& thread : threads) thread.join();

    // The mix reached every state, so every transition ran concurrently with every reader.
    for (std::size_t k = 0; k < states.size(); ++k) EXPECT_GT(seen[k].load(), 0) << states[k];
    EXPECT_GT(admitted.load(), 1'000) << "the mix must actually exercise outcomes";
    EXPECT_EQ(bad_states.load(), 0);
    EXPECT_EQ(negative_in_flight.load(), 0);
    EXPECT_EQ(bad_ewma.load(), 0);
    EXPECT_EQ(health.InFlight(0), 0);

    const TimePoint end = now();
    const DeploymentSnapshot s = health.Snapshot(0, end);
    EXPECT_NE(std::find(states.begin(), states.end(), Name(s.state)), states.end())
        << Name(s.state);
    EXPECT_EQ(s.in_flight, 0);
    EXPECT_GE(s.ewma_ttft_ms, 10);
    EXPECT_LE(s.ewma_ttft_ms, 500);
    EXPECT_LE(s.retry_budget_tokens, 50);
    EXPECT_EQ(s.available, health.Available(0, end));

    // The race leaves the budget somewhere in [0, 50]; from there its arithmetic is exact. Each
    // failure takes 1 token and 50 of them empty it, clamped at 0, not below; each success gives
    // 0.1 back, clamped at max_tokens 50; retries need more than half (25).
    policy::RetryBudget& budget = health.Budget(0);
    for (int i = 0; i < 51; ++i) budget.OnFailure();
    EXPECT_DOUBLE_EQ(budget.Tokens(), 0.0);
    EXPECT_DOUBLE_EQ(health.Snapshot(0, end).retry_budget_tokens, 0.0);
    EXPECT_FALSE(budget.CanRetry());
    for (int i = 0; i < 250; ++i) budget.OnSuccess();
    EXPECT_DOUBLE_EQ(budget.Tokens(), 25.0);
    EXPECT_FALSE(budget.CanRetry()) << "exactly half is not more than half";
    budget.OnSuccess();
    EXPECT_DOUBLE_EQ(budget.Tokens(), 25.1);
    EXPECT_TRUE(budget.CanRetry());
    for (int i = 0; i < 300; ++i) budget.OnSuccess();
    EXPECT_DOUBLE_EQ(health.Snapshot(0, end).retry_budget_tokens, 50.0);
    budget.OnFailure();
    EXPECT_DOUBLE_EQ(budget.Tokens(), 49.0);

    // Every admitted attempt reported back, so no probe slot leaked: once every blocker has run
    // out (an hour later; a spend cap lasts longer) it admits again.
    const TimePoint later = end + hours(1);
    if (health.Snapshot(0, later).state != DeploymentState::kDisabled) {
        EXPECT_TRUE(health.Admit(0, later)) << Name(health.Snapshot(0, later).state);
    }
    health.Enable(0);
    EXPECT_TRUE(health.Admit(0, later));
    Report(health, 0, later, ErrorClass::kNone);
    Report(health, 0, later, ErrorClass::kNone);
    ExpectHealthy(health, 0, later);

    // The other deployment was never touched.
    ExpectHealthy(health, 1, end);
    EXPECT_EQ(health.EwmaTtftMs(1), -1);
    EXPECT_EQ(health.InFlight(1), 0);
}

// Every change worth sharing with other replicas reaches the listener once, with the time left.
TEST(DeploymentHealthChanges, TellsEachMarkOnceWithTheTimeLeft) {
    DeploymentHealth health(1, BreakerOnly(2));
    std::vector<HealthChange> told;
    health.SetListener([&](std::size_t index, const HealthChange& change) {
        EXPECT_EQ(index, 0u);
        told.push_back(change);
    });
    const auto fail = [&](TimePoint at) {
        ASSERT_TRUE(health.Admit(0, at));
        health.OnOutcome(0, at, kWall0, ErrorClass::kServerError, std::nullopt, std::nullopt);
    };
    fail(kT0);
    EXPECT_TRUE(told.empty()) << "one failure changes no mark";
    fail(kT0 + milliseconds(10));
    ASSERT_EQ(told.size(), 1u);
    EXPECT_EQ(told[0], (HealthChange{HealthChange::Kind::kBreakerOpen, seconds(30), {}}));

    // Half-open after 30 s: two good probes close it.
    const TimePoint later = kT0 + seconds(31);
    for (int i = 0; i < 2; ++i) {
        ASSERT_TRUE(health.Admit(0, later));
        health.OnOutcome(0, later, kWall0, ErrorClass::kNone, std::nullopt, milliseconds(5));
    }
    ASSERT_EQ(told.size(), 2u);
    EXPECT_EQ(told[1].kind, HealthChange::Kind::kBreakerClosed);

    health.OnOutcome(0, later, kWall0, ErrorClass::kRateLimited, milliseconds(1'500), std::nullopt);
    ASSERT_EQ(told.size(), 3u);
    EXPECT_EQ(told[2], (HealthChange{HealthChange::Kind::kRateLimited, milliseconds(1'500), {}}));
    // A shorter retry-after extends nothing: nothing to tell.
    health.OnOutcome(0, later, kWall0, ErrorClass::kRateLimited, milliseconds(500), std::nullopt);
    EXPECT_EQ(told.size(), 3u);

    health.OnOutcome(0, later, kWall0, ErrorClass::kQuotaExhausted, std::nullopt, std::nullopt);
    ASSERT_EQ(told.size(), 4u);
    EXPECT_EQ(told[3].kind, HealthChange::Kind::kDisabled);
    EXPECT_EQ(told[3].reason, "spend cap reached");
    EXPECT_EQ(told[3].remaining, ceil<milliseconds>(policy::SpendCapResetAfter(kWall0) - kWall0));

    health.Enable(0);
    ASSERT_EQ(told.size(), 5u);
    EXPECT_EQ(told[4].kind, HealthChange::Kind::kEnabled);
}

TEST(DeploymentHealthChanges, ACooldownIsTold) {
    DeploymentHealth health(1, CooldownOnly(1));
    std::vector<HealthChange> told;
    health.SetListener([&](std::size_t, const HealthChange& change) { told.push_back(change); });
    for (int i = 0; i < 2; ++i) {
        ASSERT_TRUE(health.Admit(0, kT0));
        health.OnOutcome(0, kT0, kWall0, ErrorClass::kTimeout, std::nullopt, std::nullopt);
    }
    ASSERT_EQ(told.size(), 1u);
    EXPECT_EQ(told[0], (HealthChange{HealthChange::Kind::kCooling, seconds(30), {}}));
}

// A replica that applies what another told ends up in the same state, and tells nothing itself
// (no echo between replicas).
TEST(DeploymentHealthChanges, AppliedChangesMirrorTheTellerWithoutEcho) {
    DeploymentHealth a(2, Options());
    DeploymentHealth b(2, Options());
    int echoed = 0;
    b.SetListener([&](std::size_t, const HealthChange&) { ++echoed; });
    a.SetListener([&](std::size_t index, const HealthChange& change) {
        b.Apply(index, change, kT0 + milliseconds(2));  // arrives 2 ms later
    });
    // Four failures start the cooldown, the fifth in a row opens the breaker.
    for (int i = 0; i < 5; ++i) {
        a.OnOutcome(1, kT0, kWall0, ErrorClass::kServerError, std::nullopt, std::nullopt);
    }
    const DeploymentSnapshot sa = a.Snapshot(1, kT0 + seconds(1));
    const DeploymentSnapshot sb = b.Snapshot(1, kT0 + seconds(1));
    EXPECT_EQ(sb.state, sa.state);
    EXPECT_EQ(sb.breaker, BreakerState::kOpen);
    ASSERT_TRUE(sb.cooling_until && sa.cooling_until);
    EXPECT_EQ(*sb.cooling_until, *sa.cooling_until + milliseconds(2));
    EXPECT_EQ(*sb.breaker_open_until, *sa.breaker_open_until + milliseconds(2));
    EXPECT_TRUE(b.Available(0, kT0 + seconds(1))) << "only the benched deployment";
    EXPECT_FALSE(b.Available(1, kT0 + seconds(1)));

    a.Enable(1);
    EXPECT_TRUE(b.Available(1, kT0 + seconds(1)));
    EXPECT_EQ(b.Snapshot(1, kT0 + seconds(1)).breaker, BreakerState::kClosed);
    EXPECT_EQ(echoed, 0);
}

// Another replica's marks only ever extend this one's.
TEST(DeploymentHealthChanges, ApplyExtendsNeverShortens) {
    DeploymentHealth health(1, Options());
    health.Apply(0, {HealthChange::Kind::kRateLimited, seconds(10), {}}, kT0);
    health.Apply(0, {HealthChange::Kind::kRateLimited, seconds(2), {}}, kT0);
    EXPECT_EQ(health.AvailableAt(0, kT0), kT0 + seconds(10));
    health.Apply(0, {HealthChange::Kind::kBreakerOpen, seconds(20), {}}, kT0);
    health.Apply(0, {HealthChange::Kind::kBreakerOpen, seconds(5), {}}, kT0);
    EXPECT_EQ(*health.Snapshot(0, kT0).breaker_open_until, kT0 + seconds(20));
    health.Apply(0, {HealthChange::Kind::kBreakerClosed, {}, {}}, kT0);
    EXPECT_EQ(health.Snapshot(0, kT0).breaker, BreakerState::kClosed);
    health.Apply(0, {HealthChange::Kind::kDisabled, hours(1), "spend cap reached"}, kT0);
    const DeploymentSnapshot s = health.Snapshot(0, kT0);
    EXPECT_EQ(s.state, DeploymentState::kDisabled);
    EXPECT_EQ(s.disabled_reason, "spend cap reached");
}

TEST(DeploymentHealthChanges, KindNamesRoundTrip) {
    for (const auto kind : {HealthChange::Kind::kRateLimited, HealthChange::Kind::kCooling,
                            HealthChange::Kind::kBreakerOpen, HealthChange::Kind::kBreakerClosed,
                            HealthChange::Kind::kDisabled, HealthChange::Kind::kEnabled}) {
        EXPECT_EQ(HealthChangeKind(Name(kind)), kind);
    }
    EXPECT_FALSE(HealthChangeKind("sick"));
}

}  // namespace deployment_health_test
}  // namespace switchyard::routing
