#include "limits/headroom.h"

#include <gtest/gtest.h>

#include "limits/lanes.h"

namespace switchyard::limits {
namespace headroom_test {

using std::chrono::milliseconds;
using TimePoint = std::chrono::steady_clock::time_point;

const TimePoint kT0{std::chrono::hours(1)};

config::Config OneDeployment(config::Provider provider, config::DeploymentLimits limits) {
    config::Config config;
    config::ModelGroup group;
    group.name = "g";
    config::Deployment d;
    d.name = "d";
    d.provider = provider;
    d.limits = limits;
    d.index = 0;
    group.deployments.push_back(d);
    config.models.push_back(group);
    config.deployment_count = 1;
    return config;
}

TEST(HeadroomTest, CostFollowsEachProvidersCounting) {
    const HeadroomCost openai = CostOf(config::Provider::kOpenAi, 100, 500);
    EXPECT_EQ(openai.tokens, 500);  // max(max_tokens, estimate)
    EXPECT_EQ(CostOf(config::Provider::kOpenAi, 700, 500).tokens, 700);
    const HeadroomCost anthropic = CostOf(config::Provider::kAnthropic, 100, 500);
    EXPECT_EQ(anthropic.input_tokens, 100);  // max_tokens does not count
    EXPECT_EQ(anthropic.tokens, 0);
    EXPECT_TRUE(anthropic.output);
}

TEST(HeadroomTest, UnknownLimitsAreUnlimited) {
    const config::Config config = OneDeployment(config::Provider::kOpenAi, {});
    Headroom headroom(config, kT0);
    for (int i = 0; i < 1000; ++i) {
        EXPECT_EQ(headroom.TryReserve(0, {1, 1e6, 0, false}, 1.0, kT0), milliseconds(0));
    }
    EXPECT_FALSE(headroom.Snapshot(0, kT0).requests.limited);
}

// Buckets refill at 95 % of the provider's rate: one second's worth every 1053 ms.
constexpr milliseconds kPeriod{1053};
// A reservation that finds a bucket full holds its refill back this long (the provider's bucket
// stays full until the request reaches it).
constexpr milliseconds kTransit{50};

TEST(HeadroomTest, SixtyRpmIsOnePerSecondWithAMargin) {
    const config::Config config = OneDeployment(config::Provider::kOpenAi, {.rpm = 60});
    Headroom headroom(config, kT0);
    const HeadroomCost cost = CostOf(config::Provider::kOpenAi, 10, 0);
    EXPECT_EQ(headroom.TryReserve(0, cost, 1.0, kT0), milliseconds(0));
    const TimePoint refilled = kT0 + kTransit + kPeriod;
    EXPECT_EQ(headroom.TryReserve(0, cost, 1.0, kT0), kTransit + kPeriod);
    EXPECT_EQ(headroom.TryReserve(0, cost, 1.0, refilled - milliseconds(1)), milliseconds(1));
    EXPECT_EQ(headroom.TryReserve(0, cost, 1.0, refilled), milliseconds(0));
    // A bucket of one is full again at each send, so each send holds the refill back again.
    EXPECT_EQ(headroom.TryReserve(0, cost, 1.0, refilled), kTransit + kPeriod);
}

TEST(HeadroomTest, ABurstFromAFullBucketLeavesTheProviderTheTransitTime) {
    const config::Config config = OneDeployment(config::Provider::kOpenAi, {.rpm = 600});
    Headroom headroom(config, kT0);  // 10 per 1053 ms
    const HeadroomCost cost = CostOf(config::Provider::kOpenAi, 1, 0);
    for (int i = 0; i < 10; ++i) EXPECT_EQ(headroom.TryReserve(0, cost, 1.0, kT0), milliseconds(0));
    // The provider may see the burst up to kTransit late, its bucket full until then: the 11th
    // goes one refill after that, not one refill after the first reservation.
    EXPECT_EQ(headroom.TryReserve(0, cost, 1.0, kT0), kTransit + milliseconds(106));
    EXPECT_EQ(headroom.TryReserve(0, cost, 1.0, kT0 + milliseconds(100)), milliseconds(56));
}

TEST(HeadroomTest, ALaneWithASmallerShareLeavesTheRestForOthers) {
    const config::Config config = OneDeployment(config::Provider::kOpenAi, {.rpm = 600});
    Headroom headroom(config, kT0);  // 10 per second
    const HeadroomCost cost = CostOf(config::Provider::kOpenAi, 1, 0);
    int batch = 0;
    while (headroom.TryReserve(0, cost, 0.5, kT0) == milliseconds(0)) ++batch;
    EXPECT_EQ(batch, 5);
    int interactive = 0;
    while (headroom.TryReserve(0, cost, 1.0, kT0) == milliseconds(0)) ++interactive;
    EXPECT_EQ(interactive, 5);
    // Batch waits until the bucket is back above half: 5 + 1 tokens at 10 per 1053 ms, after the
    // transit its first take from the full bucket started.
    EXPECT_EQ(headroom.TryReserve(0, cost, 0.5, kT0), kTransit + milliseconds(632));
}

TEST(HeadroomTest, HeadersCorrectTheBucketsAndUsageReconcilesTokens) {
    const config::Config config = OneDeployment(config::Provider::kOpenAi, {});
    Headroom headroom(config, kT0);
    policy::RateLimitHeaders reported;
    reported.requests.limit = 120;  // 2 per second
    reported.requests.remaining = 0;
    reported.tokens.limit = 60'000;  // 1000 per second
    reported.tokens.remaining = 1000;
    headroom.Correct(0, reported, kT0);
    Headroom::View view = headroom.Snapshot(0, kT0);
    EXPECT_DOUBLE_EQ(view.requests.capacity, 2);
    EXPECT_DOUBLE_EQ(view.requests.level, 0);
    EXPECT_DOUBLE_EQ(view.tokens.capacity, 1000);
    const HeadroomCost cost = CostOf(config::Provider::kOpenAi, 100, 800);
    // One request back after half a refill period.
    const milliseconds half{527};
    EXPECT_EQ(headroom.TryReserve(0, cost, 1.0, kT0), half);
    ASSERT_EQ(headroom.TryReserve(0, cost, 1.0, kT0 + half), milliseconds(0));
    // 800 reserved, 300 used: 500 come back.
    headroom.Settle(0, cost, true, 200, 100, kT0 + half);
    view = headroom.Snapshot(0, kT0 + half);
    EXPECT_NEAR(view.tokens.level, 1000 - 300, 1e-6);
    // A failed attempt returns its tokens but its request stays counted.
    ASSERT_EQ(headroom.TryReserve(0, cost, 1.0, kT0 + 2 * half), milliseconds(0));
    headroom.Settle(0, cost, false, -1, -1, kT0 + 2 * half);
    view = headroom.Snapshot(0, kT0 + 2 * half);
    EXPECT_NEAR(view.requests.level, 0, 0.01);
    EXPECT_NEAR(view.tokens.level, 1000, 1e-6);
}

TEST(HeadroomTest, AReportOnlyLowersTheLevel) {
    const config::Config config = OneDeployment(config::Provider::kOpenAi, {.rpm = 600});
    Headroom headroom(config, kT0);  // 10
    const HeadroomCost cost = CostOf(config::Provider::kOpenAi, 1, 0);
    for (int i = 0; i < 10; ++i) ASSERT_EQ(headroom.TryReserve(0, cost, 1.0, kT0), milliseconds(0));
    // The answer to the first of the ten arrives last and still says 9 remain: stale.
    policy::RateLimitHeaders stale;
    stale.requests.limit = 600;
    stale.requests.remaining = 9;
    headroom.Correct(0, stale, kT0);
    EXPECT_NEAR(headroom.Snapshot(0, kT0).requests.level, 0, 1e-6);
    // A lower report wins.
    const TimePoint later = kT0 + kPeriod;
    policy::RateLimitHeaders low;
    low.requests.remaining = 3;
    headroom.Correct(0, low, later);
    EXPECT_NEAR(headroom.Snapshot(0, later).requests.level, 3, 1e-6);
}

TEST(HeadroomTest, AnthropicInputCountsAreReadAsRoundedToThousands) {
    const config::Config config = OneDeployment(config::Provider::kAnthropic, {.itpm = 120'000});
    Headroom headroom(config, kT0);  // 2000 input tokens
    policy::RateLimitHeaders reported;
    reported.input_tokens.remaining = 1000;  // anything in [500, 1500)
    headroom.Correct(0, reported, kT0);
    EXPECT_NEAR(headroom.Snapshot(0, kT0).input_tokens.level, 1500, 1e-6);
    reported.input_tokens.remaining = 0;
    headroom.Correct(0, reported, kT0);
    EXPECT_NEAR(headroom.Snapshot(0, kT0).input_tokens.level, 500, 1e-6);
}

TEST(HeadroomTest, AnthropicOutputIsChargedAfterTheAnswer) {
    const config::Config config =
        OneDeployment(config::Provider::kAnthropic, {.itpm = 60'000, .otpm = 6'000});
    Headroom headroom(config, kT0);  // 1000 input and 100 output tokens per second
    const HeadroomCost cost = CostOf(config::Provider::kAnthropic, 200, 4096);
    ASSERT_EQ(headroom.TryReserve(0, cost, 1.0, kT0), milliseconds(0));
    headroom.Settle(0, cost, true, 150, 300, kT0);
    // 300 output tokens against 100: 200 in debt, so the next send waits for 201 tokens at
    // 95 tokens per second.
    EXPECT_EQ(headroom.TryReserve(0, cost, 1.0, kT0), milliseconds(2117));
    EXPECT_NEAR(headroom.Snapshot(0, kT0).input_tokens.level, 1000 - 150, 1e-6);
}

TEST(LanesTest, ALaneYieldsWhileOneWithALargerShareWaits) {
    Lanes lanes(
        {{"interactive", 1.0, 2, milliseconds(0), 0}, {"batch", 0.5, 1, milliseconds(0), 0}});
    EXPECT_DOUBLE_EQ(lanes.Share(1, kT0).share, 0.5);
    const std::uint64_t a = lanes.Ticket(0), b = lanes.Ticket(0), c = lanes.Ticket(0);
    ASSERT_TRUE(lanes.Enqueue(0, 0, a));
    EXPECT_DOUBLE_EQ(lanes.Share(1, kT0).share, 0);
    EXPECT_DOUBLE_EQ(lanes.Share(0, kT0).share, 1.0);
    ASSERT_TRUE(lanes.Enqueue(0, 0, b));
    EXPECT_FALSE(lanes.Enqueue(0, 0, c));  // queue of 2 is full
    lanes.Dequeue(0, 0, a);
    lanes.Dequeue(0, 0, b);
    EXPECT_DOUBLE_EQ(lanes.Share(1, kT0).share, 0.5);
    ASSERT_TRUE(lanes.Enqueue(1, 0, lanes.Ticket(1)));
    EXPECT_FALSE(lanes.Enqueue(1, 0, lanes.Ticket(1)));
    EXPECT_EQ(lanes.Waiting(1), 1);
}

TEST(LanesTest, TicketsOrderEachDeploymentsQueueByArrival) {
    Lanes lanes({{"interactive", 1.0, 10, milliseconds(0), 0}});
    const std::uint64_t first = lanes.Ticket(0), second = lanes.Ticket(0), third = lanes.Ticket(0);
    ASSERT_TRUE(lanes.Enqueue(0, 7, third));
    ASSERT_TRUE(lanes.Enqueue(0, 7, first));
    ASSERT_TRUE(lanes.Enqueue(0, 9, second));  // another deployment: another line
    EXPECT_EQ(lanes.Ahead(0, 7, first), 0);
    EXPECT_EQ(lanes.Ahead(0, 7, second), 1);  // between tries: only `first` is before it
    EXPECT_EQ(lanes.Ahead(0, 7, third), 1);
    EXPECT_EQ(lanes.Ahead(0, 7, std::nullopt), 2);  // a newcomer is behind everyone
    EXPECT_EQ(lanes.Ahead(0, 9, std::nullopt), 1);
    lanes.Dequeue(0, 7, first);
    EXPECT_EQ(lanes.Ahead(0, 7, third), 0);
    EXPECT_EQ(lanes.Waiting(0), 2);
}

TEST(LanesTest, RequestsShedTogetherArePromisedOneSpacingApart) {
    Lanes lanes({{"interactive", 1.0, 10, milliseconds(0), 0}});
    const milliseconds spacing(500);
    EXPECT_EQ(lanes.Promise(0, 3, kT0 + milliseconds(2000), spacing), kT0 + milliseconds(2000));
    EXPECT_EQ(lanes.Promise(0, 3, kT0 + milliseconds(2000), spacing), kT0 + milliseconds(2500));
    EXPECT_EQ(lanes.Promise(0, 3, kT0 + milliseconds(2100), spacing), kT0 + milliseconds(3000));
    // Another deployment has its own line; a later earliest time wins over an old promise.
    EXPECT_EQ(lanes.Promise(0, 4, kT0 + milliseconds(2000), spacing), kT0 + milliseconds(2000));
    EXPECT_EQ(lanes.Promise(0, 3, kT0 + milliseconds(9000), spacing), kT0 + milliseconds(9000));
}

TEST(LanesTest, TheExpectedWaitCountsTheQueueAheadAndSaturates) {
    EXPECT_EQ(ExpectedWait(milliseconds(300), 0, milliseconds(500)), milliseconds(300));
    EXPECT_EQ(ExpectedWait(milliseconds(300), 3, milliseconds(500)), milliseconds(1800));
    EXPECT_EQ(ExpectedWait(milliseconds(300), 3, milliseconds(0)), milliseconds(300));
    EXPECT_EQ(ExpectedWait(milliseconds(300), 1'000'000, milliseconds::max()),
              std::chrono::hours(24));
}

TEST(HeadroomTest, SpacingIsTheSlowestBucketsTimeToRefillOneRequest) {
    config::DeploymentLimits limits;
    limits.rpm = 120;
    limits.tpm = 6000;
    const config::Config config = OneDeployment(config::Provider::kOpenAi, limits);
    Headroom headroom(config, kT0);
    // 120 RPM at 95 %: 1.9 per second, 526.3 ms apart; 100 tokens of 6000 TPM: 1,052.6 ms.
    EXPECT_EQ(headroom.Spacing(0, HeadroomCost{1, 0, 0, false}, kT0), milliseconds(527));
    EXPECT_EQ(headroom.Spacing(0, HeadroomCost{1, 100, 0, false}, kT0), milliseconds(1053));
    const config::Config open = OneDeployment(config::Provider::kOpenAi, {});
    EXPECT_EQ(Headroom(open, kT0).Spacing(0, HeadroomCost{1, 100, 0, false}, kT0), milliseconds(0));
}

TEST(LanesTest, SlowStartRampsALanesRate) {
    Lanes lanes({{"backfill", 0.5, 10, milliseconds(10'000), 0}});
    EXPECT_NEAR(lanes.Share(0, kT0).ramp, 0.1, 1e-9);
    EXPECT_NEAR(lanes.Share(0, kT0 + milliseconds(5'000)).ramp, 0.55, 1e-9);
    EXPECT_NEAR(lanes.Share(0, kT0 + milliseconds(10'000)).ramp, 1.0, 1e-9);
    EXPECT_DOUBLE_EQ(lanes.Share(0, kT0 + milliseconds(10'000)).share, 0.5);
}

TEST(HeadroomTest, ARampingLaneSendsAtItsFractionOfTheRequestRate) {
    config::Config config = OneDeployment(config::Provider::kOpenAi, {.rpm = 600});
    Headroom headroom(config, kT0);  // 10 per 1053 ms
    const HeadroomCost cost = CostOf(config::Provider::kOpenAi, 1, 0);
    // At 20 % of the rate: a bucket of 2 that refills 2 per 1053 ms.
    EXPECT_EQ(headroom.TryReserve(0, cost, 1.0, kT0, 0, 0.2), milliseconds(0));
    EXPECT_EQ(headroom.TryReserve(0, cost, 1.0, kT0, 0, 0.2), milliseconds(0));
    EXPECT_EQ(headroom.TryReserve(0, cost, 1.0, kT0, 0, 0.2), kTransit + milliseconds(527));
    // Another lane (not ramping) still has the rest of the deployment's bucket.
    int other = 0;
    while (headroom.TryReserve(0, cost, 1.0, kT0, 1, 1.0) == milliseconds(0)) ++other;
    EXPECT_EQ(other, 8);
}

// What a shared store checks is what TryReserve checks here: the same buckets, floors and costs.
TEST(HeadroomSharedDemands, DemandsMirrorTheLocalReservation) {
    const config::Config config =
        OneDeployment(config::Provider::kOpenAi, {.rpm = 600, .tpm = 60'000});
    Headroom headroom(config, kT0);
    std::vector<BucketDemand> demands;
    const HeadroomCost cost = CostOf(config::Provider::kOpenAi, 100, 500);
    EXPECT_EQ(headroom.Demands(0, cost, 0.5, kT0, 1, 1.0, demands), milliseconds(0));
    ASSERT_EQ(demands.size(), 2u);
    EXPECT_EQ(demands[0].name, "requests");
    EXPECT_DOUBLE_EQ(demands[0].capacity, 10);  // 600 RPM over a 1 s burst
    EXPECT_DOUBLE_EQ(demands[0].floor, 5);      // a 0.5 share leaves half for others
    EXPECT_DOUBLE_EQ(demands[0].need, 1);
    EXPECT_DOUBLE_EQ(demands[0].take, 1);
    EXPECT_EQ(demands[0].period, kPeriod);
    EXPECT_EQ(demands[1].name, "tokens");
    EXPECT_DOUBLE_EQ(demands[1].capacity, 1000);
    EXPECT_DOUBLE_EQ(demands[1].take, 500);

    // A lane that must yield never asks the shared store.
    EXPECT_GT(headroom.Demands(0, cost, 0, kT0, 1, 1.0, demands), milliseconds(0));
    EXPECT_TRUE(demands.empty());

    // Nothing limited: nothing to ask.
    Headroom open(OneDeployment(config::Provider::kOpenAi, {}), kT0);
    EXPECT_EQ(open.Demands(0, cost, 1.0, kT0, 0, 1.0, demands), milliseconds(0));
    EXPECT_TRUE(demands.empty());
}

TEST(HeadroomSharedDemands, ReservedElsewhereIsCountedHereToo) {
    Headroom headroom(OneDeployment(config::Provider::kOpenAi, {.rpm = 600}), kT0);
    for (int i = 0; i < 10; ++i) headroom.Reserved(0, {1, 0, 0, false}, kT0, 0, 1.0);
    EXPECT_DOUBLE_EQ(headroom.Snapshot(0, kT0).requests.level, 0);
    // Had Redis gone away now, this replica would wait like one that sent them itself.
    EXPECT_GT(headroom.TryReserve(0, {1, 0, 0, false}, 1.0, kT0), milliseconds(0));
}

TEST(HeadroomSharedDemands, SettlementsAndCancellationsAreTheLocalOnes) {
    Headroom headroom(OneDeployment(config::Provider::kOpenAi, {.rpm = 600, .tpm = 60'000}), kT0);
    const HeadroomCost cost{1, 500, 0, false};
    std::vector<BucketDemand> settle = headroom.SettleDemands(0, cost, true, 100, 50);
    ASSERT_EQ(settle.size(), 1u);
    EXPECT_EQ(settle[0].name, "tokens");
    EXPECT_DOUBLE_EQ(settle[0].take, 150 - 500);  // 350 tokens go back
    EXPECT_DOUBLE_EQ(settle[0].capacity, 1000);
    settle = headroom.SettleDemands(0, cost, false, -1, -1);
    ASSERT_EQ(settle.size(), 1u);
    EXPECT_DOUBLE_EQ(settle[0].take, -500);  // a failed attempt's tokens go back, its request not
    const std::vector<BucketDemand> cancel = headroom.CancelDemands(0, cost);
    ASSERT_EQ(cancel.size(), 2u);
    EXPECT_DOUBLE_EQ(cancel[0].take, -1);
    EXPECT_DOUBLE_EQ(cancel[1].take, -500);

    // Anthropic: input reconciled, output charged.
    Headroom anthropic(
        OneDeployment(config::Provider::kAnthropic, {.rpm = 60, .itpm = 60'000, .otpm = 6'000}),
        kT0);
    settle = anthropic.SettleDemands(0, {1, 0, 800, true}, true, 1000, 40);
    ASSERT_EQ(settle.size(), 2u);
    EXPECT_EQ(settle[0].name, "input_tokens");
    EXPECT_DOUBLE_EQ(settle[0].take, 200);
    EXPECT_EQ(settle[1].name, "output_tokens");
    EXPECT_DOUBLE_EQ(settle[1].take, 40);
}

TEST(HeadroomSharedDemands, CorrectionsCarryTheReportedRemaining) {
    Headroom headroom(OneDeployment(config::Provider::kAnthropic, {.rpm = 60, .itpm = 60'000}),
                      kT0);
    policy::RateLimitHeaders reported;
    reported.requests.remaining = 7;
    reported.input_tokens.remaining = 3000;  // Anthropic rounds input tokens to thousands
    const std::vector<BucketDemand> corrections = headroom.CorrectionDemands(0, reported);
    ASSERT_EQ(corrections.size(), 2u);
    EXPECT_EQ(corrections[0].name, "requests");
    EXPECT_DOUBLE_EQ(corrections[0].take, 7);
    EXPECT_EQ(corrections[1].name, "input_tokens");
    EXPECT_DOUBLE_EQ(corrections[1].take, 3500);
}

}  // namespace headroom_test
}  // namespace switchyard::limits
