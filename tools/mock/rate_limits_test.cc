#include "rate_limits.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "anthropic_wire.h"
#include "openai_wire.h"

namespace switchyard::mock {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr auto kOpenAi = RateLimitApi::kOpenAi;
constexpr auto kAnthropic = RateLimitApi::kAnthropic;

// An arbitrary steady instant, far enough from the clock's epoch for 65 s of history.
const SteadyTime t0 = SteadyTime{} + std::chrono::hours(1);
// 2015-10-21T07:28:00.250Z.
const WallTime kWall = std::chrono::system_clock::from_time_t(1445412480) + milliseconds(250);

RateLimitConfig Config(std::int64_t rpm, std::int64_t tpm = 0, std::int64_t itpm = 0,
                       std::int64_t otpm = 0) {
    RateLimitConfig config;
    config.rpm = rpm;
    config.tpm = tpm;
    config.itpm = itpm;
    config.otpm = otpm;
    return config;
}

// ---- header formats ----

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

TEST(FormatRfc3339, WholeSecondsInUtc) {
    // 2015-10-21T07:28:00Z plus 999 ms: the fraction is dropped.
    const auto time = std::chrono::system_clock::from_time_t(1445412480) + milliseconds(999);
    EXPECT_EQ(FormatRfc3339(time), "2015-10-21T07:28:00Z");
}

TEST(RetryAfterHeaders, WholeSecondsRoundedUpAndMilliseconds) {
    std::string out;
    AppendRetryAfterHeaders(out, kOpenAi, milliseconds(1987));
    EXPECT_EQ(out, "retry-after: 2\r\nretry-after-ms: 1987\r\n");
    out.clear();
    AppendRetryAfterHeaders(out, kOpenAi, milliseconds(2000));
    EXPECT_EQ(out, "retry-after: 2\r\nretry-after-ms: 2000\r\n");
    out.clear();
    AppendRetryAfterHeaders(out, kAnthropic, milliseconds(1));
    EXPECT_EQ(out, "retry-after: 1\r\nx-should-retry: true\r\n");
}

// ---- unlimited: the static headers of before ----

TEST(RateLimits, UnlimitedGivesTheStaticHeaders) {
    RateLimits limits;
    // Limited, then unlimited again (DELETE /mock/limits): nothing of the buckets remains.
    limits.Configure(Config(60, 6000, 6000, 6000), t0);
    EXPECT_FALSE(limits.Admit(kOpenAi, {100, 100}, t0).reason);
    EXPECT_TRUE(limits.Admit(kOpenAi, {100, 100}, t0).reason);
    limits.Configure({}, t0);
    for (int i = 0; i < 1000; ++i) {
        EXPECT_FALSE(limits.Admit(kOpenAi, {100, 100}, t0).reason);
        EXPECT_FALSE(limits.Admit(kAnthropic, {100, 100}, t0).reason);
    }
    std::string out;
    AppendRateLimitHeaders(out, limits.Snapshot(1000, t0));
    EXPECT_EQ(
        out,
        "x-ratelimit-limit-requests: 100000000\r\nx-ratelimit-remaining-requests: 99999999\r\n"
        "x-ratelimit-reset-requests: 6ms\r\nx-ratelimit-limit-tokens: 100000000000\r\n"
        "x-ratelimit-remaining-tokens: 99999999000\r\nx-ratelimit-reset-tokens: 2ms\r\n");
    out.clear();
    AppendAnthropicRateLimitHeaders(out, limits.AnthropicSnapshot(1400, t0, kWall));
    EXPECT_EQ(out,
              "anthropic-ratelimit-requests-limit: 100000000\r\n"
              "anthropic-ratelimit-requests-remaining: 99999999\r\n"
              "anthropic-ratelimit-requests-reset: 2015-10-21T07:28:01Z\r\n"
              "anthropic-ratelimit-input-tokens-limit: 100000000000\r\n"
              "anthropic-ratelimit-input-tokens-remaining: 99999999000\r\n"
              "anthropic-ratelimit-input-tokens-reset: 2015-10-21T07:28:01Z\r\n"
              "anthropic-ratelimit-output-tokens-limit: 100000000000\r\n"
              "anthropic-ratelimit-output-tokens-remaining: 100000000000\r\n"
              "anthropic-ratelimit-output-tokens-reset: 2015-10-21T07:28:01Z\r\n"
              "anthropic-ratelimit-tokens-limit: 200000000000\r\n"
              "anthropic-ratelimit-tokens-remaining: 199999999000\r\n"
              "anthropic-ratelimit-tokens-reset: 2015-10-21T07:28:01Z\r\n");
}

// ---- requests per minute, enforced per second ----

TEST(RateLimits, SixtyRpmAdmitsOneThenRejectsUntilOneSecond) {
    // Anthropic: a rejected request takes nothing, so the second admission is exactly at +1 s.
    RateLimits limits;
    limits.Configure(Config(60), t0);
    EXPECT_FALSE(limits.Admit(kAnthropic, {1, 0}, t0).reason);
    const RateLimitDecision early = limits.Admit(kAnthropic, {1, 0}, t0 + milliseconds(1));
    ASSERT_TRUE(early.reason);
    EXPECT_EQ(*early.reason, RateLimitReason::kRequests);
    EXPECT_EQ(early.limit, 60);
    EXPECT_EQ(early.retry_after, milliseconds(999));
    const RateLimitDecision late = limits.Admit(kAnthropic, {1, 0}, t0 + milliseconds(999));
    ASSERT_TRUE(late.reason);
    EXPECT_EQ(late.retry_after, milliseconds(1));
    EXPECT_FALSE(limits.Admit(kAnthropic, {1, 0}, t0 + seconds(1)).reason);

    // OpenAI without rejections in between: the same one per second.
    EXPECT_FALSE(limits.Admit(kOpenAi, {1, 0}, t0).reason);
    EXPECT_FALSE(limits.Admit(kOpenAi, {1, 0}, t0 + seconds(1)).reason);
    const RateLimitDecision burst = limits.Admit(kOpenAi, {1, 0}, t0 + seconds(1));
    ASSERT_TRUE(burst.reason);
    EXPECT_EQ(*burst.reason, RateLimitReason::kRequests);
    // The rejected request took its 1 too: two seconds until the bucket holds a request again.
    EXPECT_EQ(burst.retry_after, milliseconds(2000));
}

TEST(RateLimits, AMinuteOfSteadyTrafficAtOnePerSecondPasses) {
    RateLimits limits;
    limits.Configure(Config(60), t0);
    for (int i = 0; i < 60; ++i) {
        EXPECT_FALSE(limits.Admit(kOpenAi, {1, 0}, t0 + seconds(i)).reason) << i;
        EXPECT_FALSE(limits.Admit(kAnthropic, {1, 0}, t0 + seconds(i)).reason) << i;
    }
    // 60 in the minute were fine; a 61st between two of them is not.
    EXPECT_TRUE(limits.Admit(kAnthropic, {1, 0}, t0 + milliseconds(59'500)).reason);
}

TEST(RateLimits, OpenAiRejectedRequestsPushTheNextAdmissionLater) {
    RateLimits limits;
    limits.Configure(Config(60), t0);
    EXPECT_FALSE(limits.Admit(kOpenAi, {1, 0}, t0).reason);
    // Level 0.5, minus 1 for the rejected request: 1.5 s to hold a whole request.
    EXPECT_EQ(limits.Admit(kOpenAi, {1, 0}, t0 + milliseconds(500)).retry_after,
              milliseconds(1500));
    // At +1 s a request would pass without that debt; it is rejected and adds debt again.
    const RateLimitDecision debt = limits.Admit(kOpenAi, {1, 0}, t0 + seconds(1));
    ASSERT_TRUE(debt.reason);
    EXPECT_EQ(debt.retry_after, milliseconds(2000));
    // Level -1 at +1 s: the next admission is at +3 s instead of +1 s.
    EXPECT_EQ(limits.Snapshot(0, t0 + seconds(1)).reset_requests, seconds(2));
    EXPECT_FALSE(limits.Admit(kOpenAi, {1, 0}, t0 + seconds(3)).reason);

    // The same traffic on Anthropic's side: rejections cost nothing.
    EXPECT_FALSE(limits.Admit(kAnthropic, {1, 0}, t0).reason);
    EXPECT_TRUE(limits.Admit(kAnthropic, {1, 0}, t0 + milliseconds(500)).reason);
    EXPECT_FALSE(limits.Admit(kAnthropic, {1, 0}, t0 + seconds(1)).reason);
}

TEST(RateLimits, OpenAiDebtStopsAtOneMinute) {
    RateLimits limits;
    limits.Configure(Config(60), t0);
    EXPECT_FALSE(limits.Admit(kOpenAi, {1, 0}, t0).reason);
    RateLimitDecision last;
    for (int i = 0; i < 500; ++i) last = limits.Admit(kOpenAi, {1, 0}, t0);
    // Floor -60 x capacity 1: 61 s until a request fits again.
    EXPECT_EQ(last.retry_after, seconds(61));
    EXPECT_TRUE(limits.Admit(kOpenAi, {1, 0}, t0 + milliseconds(60'999)).reason);
    limits.Configure(Config(60), t0 + seconds(2));  // Reconfiguring refills the buckets.
    EXPECT_FALSE(limits.Admit(kOpenAi, {1, 0}, t0 + seconds(2)).reason);
}

// ---- tokens ----

TEST(EstimateInputTokens, CharactersOverFourRoundedUp) {
    EXPECT_EQ(EstimateInputTokens(0), 0);
    EXPECT_EQ(EstimateInputTokens(1), 1);
    EXPECT_EQ(EstimateInputTokens(400), 100);
    EXPECT_EQ(EstimateInputTokens(401), 101);
}

TEST(RateLimits, TpmCountsMaxOfMaxTokensAndTheInputEstimate) {
    // 6000 TPM: a bucket of 100 tokens, refilled at 100 per second.
    RateLimits limits;
    limits.Configure(Config(0, 6000), t0);
    EXPECT_FALSE(limits.Admit(kOpenAi, {10, 80}, t0).reason);  // Costs 80.
    RateLimitSnapshot snapshot = limits.Snapshot(0, t0);
    EXPECT_EQ(snapshot.limit_tokens, 6000);
    EXPECT_EQ(snapshot.remaining_tokens, 20);
    EXPECT_EQ(snapshot.reset_tokens, milliseconds(800));

    const RateLimitDecision tokens = limits.Admit(kOpenAi, {30, 0}, t0);  // Costs 30 > 20.
    ASSERT_TRUE(tokens.reason);
    EXPECT_EQ(*tokens.reason, RateLimitReason::kTokens);
    EXPECT_EQ(tokens.limit, 6000);
    EXPECT_EQ(tokens.retry_after, milliseconds(100));
    EXPECT_EQ(limits.Snapshot(0, t0).remaining_tokens, 20);  // Rejected: no tokens taken.

    EXPECT_FALSE(limits.Admit(kOpenAi, {15, 5}, t0).reason);  // Costs 15.
    EXPECT_EQ(limits.Snapshot(0, t0).remaining_tokens, 5);

    // More than the bucket holds: it must be full, and the request leaves debt behind.
    const RateLimitDecision large = limits.Admit(kOpenAi, {0, 500}, t0);
    ASSERT_TRUE(large.reason);
    EXPECT_EQ(large.retry_after, milliseconds(950));
    EXPECT_FALSE(limits.Admit(kOpenAi, {0, 500}, t0 + milliseconds(950)).reason);
    snapshot = limits.Snapshot(0, t0 + milliseconds(950));
    EXPECT_EQ(snapshot.remaining_tokens, 0);
    EXPECT_EQ(snapshot.reset_tokens, seconds(5));
}

TEST(RateLimits, AnthropicInputTokensIgnoreMaxTokens) {
    // 6000 ITPM: 100 tokens, 100 per second. max_tokens never counts on Anthropic's side.
    RateLimits limits;
    limits.Configure(Config(0, 0, 6000), t0);
    EXPECT_FALSE(limits.Admit(kAnthropic, {60, 100'000}, t0).reason);
    const RateLimitDecision input = limits.Admit(kAnthropic, {60, 0}, t0);
    ASSERT_TRUE(input.reason);
    EXPECT_EQ(*input.reason, RateLimitReason::kInputTokens);
    EXPECT_EQ(input.limit, 6000);
    EXPECT_EQ(input.retry_after, milliseconds(200));
    EXPECT_FALSE(limits.Admit(kAnthropic, {60, 0}, t0 + milliseconds(200)).reason);
}

TEST(RateLimits, OutputTokensTakenAfterTheAnswerBlockTheNextRequestUntilRefilled) {
    // 600 OTPM: 10 tokens, 10 per second.
    RateLimits limits;
    limits.Configure(Config(0, 0, 0, 600), t0);
    EXPECT_FALSE(limits.Admit(kAnthropic, {5, 4096}, t0).reason);
    limits.TakeOutputTokens(25, t0);  // The answer generated 25 tokens: level -15.

    const RateLimitDecision output = limits.Admit(kAnthropic, {5, 0}, t0 + seconds(1));
    ASSERT_TRUE(output.reason);
    EXPECT_EQ(*output.reason, RateLimitReason::kOutputTokens);
    EXPECT_EQ(output.limit, 600);
    EXPECT_EQ(output.retry_after, milliseconds(501));  // Level -5: strictly above 0 after 0.5 s.
    EXPECT_TRUE(limits.Admit(kAnthropic, {5, 0}, t0 + milliseconds(1500)).reason);  // Level 0.
    EXPECT_FALSE(limits.Admit(kAnthropic, {5, 0}, t0 + milliseconds(1501)).reason);

    // OTPM is Anthropic's: OpenAI requests are not limited by it.
    EXPECT_FALSE(limits.Admit(kOpenAi, {5, 0}, t0 + seconds(1)).reason);
}

// ---- acceleration ----

RateLimitConfig Acceleration(double factor, double min_rpm) {
    RateLimitConfig config;
    config.acceleration_factor = factor;
    config.acceleration_min_rpm = min_rpm;
    return config;
}

TEST(RateLimits, AccelerationPunishesAJumpFromOneToTwentyPerSecond) {
    RateLimits limits;
    limits.Configure(Acceleration(4, 60), t0);
    // Two minutes at 1/s: 60 per minute, never above the floor of 60 RPM.
    for (int i = 0; i < 120; ++i) {
        EXPECT_FALSE(limits.Admit(kAnthropic, {1, 0}, t0 + seconds(i)).reason) << i;
    }
    // Then 20/s. The last 5 s hold 4 steady requests plus the burst; the 60 s before them 60
    // requests, so the burst is punished once the last 5 s run above 4 x 60 = 240 RPM: at the
    // 21st request in them, the 17th of the burst.
    for (int k = 0; k < 16; ++k) {
        EXPECT_FALSE(
            limits.Admit(kAnthropic, {1, 0}, t0 + seconds(120) + k * milliseconds(50)).reason)
            << k;
    }
    const SteadyTime at = t0 + seconds(120) + 16 * milliseconds(50);
    const RateLimitDecision jump = limits.Admit(kAnthropic, {1, 0}, at);
    ASSERT_TRUE(jump.reason);
    EXPECT_EQ(*jump.reason, RateLimitReason::kAcceleration);
    EXPECT_EQ(jump.limit, 0);
    // At t0+121 s the request of t0+116 s leaves the 5 s window: still 21 with the retry. At
    // t0+122 s: 20, not above 240 RPM.
    EXPECT_EQ(jump.retry_after, milliseconds(1200));
    // The OpenAI side has its own history.
    EXPECT_FALSE(limits.Admit(kOpenAi, {1, 0}, at).reason);
}

TEST(RateLimits, AccelerationSparesSteadyTrafficOnceItHasAHistory) {
    RateLimits limits;
    limits.Configure(Acceleration(4, 0), t0);
    // From a cold start every rate is growth: with no floor the first seconds are punished
    // until the 60 s baseline has filled.
    int rejected_early = 0;
    for (int i = 0; i < 30; ++i) {
        if (limits.Admit(kOpenAi, {1, 0}, t0 + seconds(i)).reason) ++rejected_early;
    }
    EXPECT_GT(rejected_early, 0);
    // Steady 1/s afterwards: 60 RPM against a baseline of 60, never punished.
    for (int i = 30; i < 200; ++i) {
        EXPECT_FALSE(limits.Admit(kOpenAi, {1, 0}, t0 + seconds(i)).reason) << i;
    }
}

TEST(RateLimits, AccelerationNeverPunishesRatesUnderTheFloor) {
    RateLimits limits;
    limits.Configure(Acceleration(4, 300), t0);
    // A cold burst of 25 in a second: 300 RPM over the last 5 s, not above the floor.
    for (int k = 0; k < 25; ++k) {
        EXPECT_FALSE(limits.Admit(kOpenAi, {1, 0}, t0 + k * milliseconds(40)).reason) << k;
    }
    EXPECT_TRUE(limits.Admit(kOpenAi, {1, 0}, t0 + seconds(1)).reason);
}

// ---- headers of limited buckets ----

TEST(RateLimits, OpenAiHeadersShowRemainingAndReset) {
    // 600 RPM: 10 requests, 10 per second; 60000 TPM: 1000 tokens, 1000 per second.
    RateLimits limits;
    limits.Configure(Config(600, 60'000), t0);
    for (int i = 0; i < 3; ++i) EXPECT_FALSE(limits.Admit(kOpenAi, {100, 0}, t0).reason);
    std::string out;
    AppendRateLimitHeaders(out, limits.Snapshot(0, t0 + milliseconds(150)));
    EXPECT_EQ(out,
              "x-ratelimit-limit-requests: 600\r\nx-ratelimit-remaining-requests: 8\r\n"
              "x-ratelimit-reset-requests: 150ms\r\nx-ratelimit-limit-tokens: 60000\r\n"
              "x-ratelimit-remaining-tokens: 850\r\nx-ratelimit-reset-tokens: 150ms\r\n");
    // Full again: everything remaining, reset 0s.
    out.clear();
    AppendRateLimitHeaders(out, limits.Snapshot(0, t0 + seconds(1)));
    EXPECT_EQ(out,
              "x-ratelimit-limit-requests: 600\r\nx-ratelimit-remaining-requests: 10\r\n"
              "x-ratelimit-reset-requests: 0s\r\nx-ratelimit-limit-tokens: 60000\r\n"
              "x-ratelimit-remaining-tokens: 1000\r\nx-ratelimit-reset-tokens: 0s\r\n");
}

TEST(RateLimits, AnthropicHeadersShowRemainingAndReset) {
    // 120 RPM: 2 requests, 2/s. 600000 ITPM: 10000 tokens, 10000/s. 120000 OTPM: 2000, 2000/s.
    RateLimits limits;
    limits.Configure(Config(120, 0, 600'000, 120'000), t0);
    EXPECT_FALSE(limits.Admit(kAnthropic, {2600, 0}, t0).reason);
    limits.TakeOutputTokens(5000, t0);  // Level -3000: 2.5 s until full.
    std::string out;
    AppendAnthropicRateLimitHeaders(out, limits.AnthropicSnapshot(0, t0, kWall));
    // Resets are rounded up to whole seconds: 07:28:00.250 plus 0.5 s, 0.26 s and 2.5 s.
    EXPECT_EQ(out,
              "anthropic-ratelimit-requests-limit: 120\r\n"
              "anthropic-ratelimit-requests-remaining: 1\r\n"
              "anthropic-ratelimit-requests-reset: 2015-10-21T07:28:01Z\r\n"
              "anthropic-ratelimit-input-tokens-limit: 600000\r\n"
              "anthropic-ratelimit-input-tokens-remaining: 7000\r\n"
              "anthropic-ratelimit-input-tokens-reset: 2015-10-21T07:28:01Z\r\n"
              "anthropic-ratelimit-output-tokens-limit: 120000\r\n"
              "anthropic-ratelimit-output-tokens-remaining: 0\r\n"
              "anthropic-ratelimit-output-tokens-reset: 2015-10-21T07:28:03Z\r\n"
              "anthropic-ratelimit-tokens-limit: 120000\r\n"
              "anthropic-ratelimit-tokens-remaining: 0\r\n"
              "anthropic-ratelimit-tokens-reset: 2015-10-21T07:28:03Z\r\n");
    // Two seconds on, output is at 1000 of 2000 (half) and input full: `tokens` is output still;
    // with output full it is input's 10000.
    const AnthropicRateLimitSnapshot later =
        limits.AnthropicSnapshot(0, t0 + seconds(2), kWall + seconds(2));
    EXPECT_EQ(later.tokens.limit, 120'000);
    EXPECT_EQ(later.tokens.remaining, 1000);
    EXPECT_EQ(later.input_tokens.remaining, 10'000);
    const AnthropicRateLimitSnapshot full =
        limits.AnthropicSnapshot(0, t0 + seconds(3), kWall + seconds(3));
    EXPECT_EQ(full.tokens.limit, 600'000);
    EXPECT_EQ(full.tokens.remaining, 10'000);
}

TEST(RateLimits, ConcurrentAdmissionsShareOneBucket) {
    RateLimits limits;
    limits.Configure(Config(60), t0);
    std::atomic<int> admitted = 0;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 1000; ++i) {
                if (!limits.Admit(kAnthropic, {1, 0}, t0).reason) ++admitted;
            }
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(admitted.load(), 1);
}

TEST(RateLimits, JsonShowsTheConfigurationAndTheBuckets) {
    RateLimitConfig config = Config(60, 0, 0, 600);
    config.acceleration_factor = 4;
    config.acceleration_min_rpm = 30.5;
    RateLimits limits;
    limits.Configure(config, t0);
    EXPECT_FALSE(limits.Admit(kOpenAi, {1, 0}, t0).reason);
    EXPECT_EQ(limits.ToJson(t0 + milliseconds(250)),
              R"({"limits":{"rpm":60,"tpm":0,"itpm":0,"otpm":600,"acceleration":4,)"
              R"("acceleration_min_rpm":30.5},)"
              R"("openai":{"acceleration":{"last_5s":1,"previous_60s":0},)"
              R"("requests":{"limit":60,"capacity":1.000,"level":0.250,"reset_ms":750},)"
              R"("tokens":null},)"
              R"("anthropic":{"acceleration":{"last_5s":0,"previous_60s":0},)"
              R"("requests":{"limit":60,"capacity":1.000,"level":1.000,"reset_ms":0},)"
              R"("input_tokens":null,)"
              R"("output_tokens":{"limit":600,"capacity":10.000,"level":10.000,"reset_ms":0}}})");
    EXPECT_EQ(limits.config(), config);
}

// ---- configuration ----

TEST(ParseRateLimitSpec, AllNames) {
    const ParsedRateLimits parsed = ParseRateLimitSpec(
        "rpm=60,tpm=40000, itpm=0 ,otpm=0,acceleration=4,acceleration_min_rpm=30");
    ASSERT_TRUE(parsed.ok()) << parsed.error;
    RateLimitConfig expected = Config(60, 40'000);
    expected.acceleration_factor = 4;
    expected.acceleration_min_rpm = 30;
    EXPECT_EQ(parsed.config, expected);
    EXPECT_EQ(ParseRateLimitSpec("").config, RateLimitConfig{});
    EXPECT_EQ(ParseRateLimitSpec("acceleration=2.5").config.acceleration_factor, 2.5);
}

TEST(ParseRateLimitSpec, Rejections) {
    EXPECT_EQ(ParseRateLimitSpec("rpm=-1").error, "rpm: expected an integer in [0, 1000000000000]");
    EXPECT_EQ(ParseRateLimitSpec("rpm=1.5").error,
              "rpm: expected an integer in [0, 1000000000000]");
    EXPECT_EQ(ParseRateLimitSpec("rpm=60,rpm=61").error, "rpm: given twice");
    EXPECT_EQ(ParseRateLimitSpec("rpm").error, "'rpm': expected name=value");
    EXPECT_EQ(ParseRateLimitSpec("acceleration_factor=4").error,
              "unknown name 'acceleration_factor' (known: rpm, tpm, itpm, otpm, acceleration, "
              "acceleration_min_rpm)");
    EXPECT_EQ(ParseRateLimitSpec("acceleration=nan").error,
              "acceleration: expected a number in [0, 1000000000000]");
    EXPECT_FALSE(ParseRateLimitSpec("acceleration=-1").ok());
    EXPECT_FALSE(ParseRateLimitSpec("rpm=60x").ok());
}

TEST(ParseRateLimitJson, SameNamesAsTheSpec) {
    const ParsedRateLimits parsed =
        ParseRateLimitJson(R"({"rpm":60,"otpm":8000,"acceleration":4,"acceleration_min_rpm":30})");
    ASSERT_TRUE(parsed.ok()) << parsed.error;
    RateLimitConfig expected = Config(60, 0, 0, 8000);
    expected.acceleration_factor = 4;
    expected.acceleration_min_rpm = 30;
    EXPECT_EQ(parsed.config, expected);
    EXPECT_EQ(ParseRateLimitJson("{}").config, RateLimitConfig{});

    EXPECT_EQ(ParseRateLimitJson(R"({"rpm":60.0})").error,
              "rpm: expected an integer in [0, 1000000000000]");
    EXPECT_FALSE(ParseRateLimitJson(R"({"rpm":"60"})").ok());
    EXPECT_FALSE(ParseRateLimitJson(R"({"tpm":-5})").ok());
    EXPECT_FALSE(ParseRateLimitJson(R"({"acceleration":true})").ok());
    EXPECT_EQ(ParseRateLimitJson(R"({"burst":1})").error,
              "unknown name 'burst' (known: rpm, tpm, itpm, otpm, acceleration, "
              "acceleration_min_rpm)");
    EXPECT_EQ(ParseRateLimitJson("[1]").error, "expected a JSON object");
    EXPECT_TRUE(ParseRateLimitJson("{").error.starts_with("invalid JSON: "));
}

// ---- 429 bodies ----

TEST(RateLimitBody, OpenAi) {
    EXPECT_EQ(openai::RateLimitBody(RateLimitReason::kRequests, 60),
              R"({"error":{"message":"Rate limit reached for requests. Limit 60 per min.",)"
              R"("type":"requests","code":"rate_limit_exceeded"}})");
    EXPECT_EQ(openai::RateLimitBody(RateLimitReason::kTokens, 40000),
              R"({"error":{"message":"Rate limit reached for tokens. Limit 40000 per min.",)"
              R"("type":"tokens","code":"rate_limit_exceeded"}})");
    const std::string acceleration = openai::RateLimitBody(RateLimitReason::kAcceleration, 0);
    EXPECT_NE(acceleration.find("acceleration limits"), std::string::npos);
    EXPECT_TRUE(acceleration.ends_with(R"("type":"requests","code":"rate_limit_exceeded"}})"));
}

TEST(RateLimitBody, Anthropic) {
    const std::string input =
        anthropic::RateLimitBody(RateLimitReason::kInputTokens, 1'000'000, "req_1");
    EXPECT_TRUE(input.starts_with(
        R"({"type":"error","error":{"type":"rate_limit_error","message":"This request would )"
        R"(exceed your organization's rate limit of 1,000,000 input tokens per minute. For )"
        R"(details, refer to: https://docs.claude.com/en/api/rate-limits.)"))
        << input;
    EXPECT_TRUE(input.ends_with(R"( rate limit increase."},"request_id":"req_1"})")) << input;
    EXPECT_NE(anthropic::RateLimitBody(RateLimitReason::kRequests, 50, "req_1")
                  .find("rate limit of 50 requests per minute."),
              std::string::npos);
    EXPECT_NE(anthropic::RateLimitBody(RateLimitReason::kOutputTokens, 8000, "req_1")
                  .find("rate limit of 8,000 output tokens per minute."),
              std::string::npos);
    EXPECT_NE(anthropic::RateLimitBody(RateLimitReason::kAcceleration, 0, "req_1")
                  .find("acceleration limits"),
              std::string::npos);
}

}  // namespace
}  // namespace switchyard::mock
