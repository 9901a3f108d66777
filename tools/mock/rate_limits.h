#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

// The mock provider's rate limits (docs/resilience.md#provider-limits): token buckets for requests
// and tokens per minute that refill continuously and are enforced per second, OpenAI's habit of
// charging rejected requests, Anthropic's output-token accounting and acceleration limits; plus the
// x-ratelimit-* / anthropic-ratelimit-* headers that describe them. No I/O, no clock: every
// function that depends on time takes it as a parameter.
namespace switchyard::mock {

using SteadyTime = std::chrono::steady_clock::time_point;
using WallTime = std::chrono::system_clock::time_point;

// Per-minute limits. 0 means unlimited; a dimension without a limit is never enforced and its
// headers keep the static plausible values of an unlimited mock.
struct RateLimitConfig final {
    std::int64_t rpm = 0;   // Requests per minute, OpenAI and Anthropic (each API its own bucket).
    std::int64_t tpm = 0;   // OpenAI tokens per minute, charged max(max_tokens, input estimate).
    std::int64_t itpm = 0;  // Anthropic input tokens per minute.
    std::int64_t otpm = 0;  // Anthropic output tokens per minute, charged what was generated.
    // Acceleration limits: reject when the request rate of the last 5 s exceeds this factor times
    // the average rate of the 60 s before them. 0 = off.
    double acceleration_factor = 0;
    // Growth up to this rate (requests per minute over the last 5 s) is never punished.
    double acceleration_min_rpm = 0;

    bool operator==(const RateLimitConfig&) const = default;
};

// Result of ParseRateLimitSpec / ParseRateLimitJson: `error` is empty on success.
struct ParsedRateLimits final {
    RateLimitConfig config;
    std::string error;

    bool ok() const { return error.empty(); }
};

// Parses the --limits option: comma-separated `name=value` with the names rpm, tpm, itpm, otpm,
// acceleration and acceleration_min_rpm (blanks around tokens ignored, "" = unlimited). Limits
// are integers in [0, 10^12]; acceleration values finite numbers >= 0. Absent names are 0.
// Unknown or repeated names and bad values are errors.
ParsedRateLimits ParseRateLimitSpec(std::string_view text);

// Parses the body of POST /mock/limits: a JSON object with the same names and value rules
// (limits must be JSON integers). Absent names are 0.
ParsedRateLimits ParseRateLimitJson(std::string_view json_text);

// The provider API whose buckets a request uses. The two APIs never share a bucket.
enum class RateLimitApi { kOpenAi, kAnthropic };

// Why a request was rejected with 429.
enum class RateLimitReason { kRequests, kTokens, kInputTokens, kOutputTokens, kAcceleration };

inline constexpr std::array<RateLimitReason, 5> kRateLimitReasons = {
    RateLimitReason::kRequests, RateLimitReason::kTokens, RateLimitReason::kInputTokens,
    RateLimitReason::kOutputTokens, RateLimitReason::kAcceleration};

// "requests", "tokens", "input_tokens", "output_tokens", "acceleration": the names of
// /mock/stats and of the reason in docs.
std::string_view RateLimitReasonName(RateLimitReason reason);

// What a request costs, as the caller estimates it from the parsed request.
struct RateLimitCost final {
    // OpenAI: the estimate ceil(characters of all message contents / 4) (EstimateInputTokens).
    // Anthropic: the input tokens the answer's usage reports.
    std::int64_t input_tokens = 0;
    // OpenAI: max_completion_tokens, else max_tokens, else 0. Ignored for Anthropic, whose OTPM
    // counts generated tokens only.
    std::int64_t max_tokens = 0;
};

// ceil(chars / 4): OpenAI's rough pre-request token estimate as the mock makes it.
std::int64_t EstimateInputTokens(std::int64_t chars);

// The verdict on one request. `reason` empty means admitted.
struct RateLimitDecision final {
    std::optional<RateLimitReason> reason;
    std::int64_t limit = 0;  // The per-minute limit that was hit; 0 for acceleration.
    // How long until this request, sent again, would pass the check that rejected it (and every
    // bucket check), assuming no other traffic. At least 1 ms when rejected.
    std::chrono::milliseconds retry_after{0};
};

// Values of OpenAI's x-ratelimit-* response headers for one request
// (docs/providers.md#rate-limit-headers).
struct RateLimitSnapshot final {
    std::int64_t limit_requests = 0;
    std::int64_t remaining_requests = 0;
    std::chrono::milliseconds reset_requests{0};
    std::int64_t limit_tokens = 0;
    std::int64_t remaining_tokens = 0;
    std::chrono::milliseconds reset_tokens{0};
};

// Values of Anthropic's anthropic-ratelimit-* response headers for one request
// (docs/providers.md#rate-limit-headers). Token counts remaining are rounded to the nearest
// thousand, as Anthropic sends them.
struct AnthropicRateLimitSnapshot final {
    struct Bucket final {
        std::int64_t limit = 0;
        std::int64_t remaining = 0;
        WallTime reset;
    };
    Bucket requests;
    Bucket tokens;  // The most restrictive token limit.
    Bucket input_tokens;
    Bucket output_tokens;
};

// The mock's rate limiter: one set of buckets per API, shared by every connection of the server
// for its lifetime. Thread-safe (one mutex; a test tool needs no more).
//
// A bucket of a per-minute limit L holds at most max(1, L/60) and refills continuously at L/60
// per second: a 60 RPM limit admits one request per second, not 60 at once. Checks, in order:
//  - requests: the bucket must hold >= 1; an admitted request takes 1;
//  - OpenAI tokens: cost max(max_tokens, input estimate); Anthropic input tokens: cost the input
//    tokens. The bucket must hold the cost, or be full if the cost exceeds its capacity (such a
//    request leaves debt behind); an admitted request takes the cost;
//  - Anthropic output tokens: the bucket must hold more than 0; TakeOutputTokens takes what the
//    answer generated once it is sent;
//  - acceleration (when on): rejected if the last 5 s ran above acceleration_factor times the
//    average of the 60 s before them and above acceleration_min_rpm. Every checked request, also a
//    rejected one, counts as an arrival.
// An OpenAI request that is rejected still takes 1 from its requests bucket; an Anthropic one
// takes nothing. A bucket never falls below -60 x its capacity (one minute of debt).
// While nothing is limited (the default), no call takes the mutex.
class RateLimits final {
  public:
    RateLimits() = default;

    // Replaces the limits; all buckets start full and the arrival history is forgotten.
    void Configure(const RateLimitConfig& config, SteadyTime now);

    RateLimitConfig config() const;

    // Checks one request arriving at `now` and charges it (see the class comment).
    RateLimitDecision Admit(RateLimitApi api, const RateLimitCost& cost, SteadyTime now);

    // Anthropic: takes `tokens` generated output tokens from the output bucket at `now`.
    void TakeOutputTokens(std::int64_t tokens, SteadyTime now);

    // OpenAI's header values at `now`: remaining = whole units in the bucket (0 when in debt),
    // limit = the per-minute limit, reset = time until the bucket is full. An unlimited
    // dimension reports 10000 requests / 30000000 tokens, remaining one less / minus
    // `static_tokens`, and resets of 6ms / 2ms.
    RateLimitSnapshot Snapshot(std::int64_t static_tokens, SteadyTime now) const;

    // Anthropic's header values at `now` (`wall` is the same instant on the system clock): as
    // Snapshot, with resets as instants rounded up to whole seconds and token counts rounded to
    // the nearest thousand; `tokens` is the limited token bucket nearer to empty (by the fraction
    // of its capacity left; input on a tie). Unlimited dimensions report 4000 requests, 2000000
    // input and 400000 output tokens (input remaining less `static_input_tokens`), reset at the
    // next whole second, and `tokens` their sum when both token dimensions are unlimited.
    AnthropicRateLimitSnapshot AnthropicSnapshot(std::int64_t static_input_tokens, SteadyTime now,
                                                 WallTime wall) const;

    // The GET /mock/limits body: the configuration and every bucket's state at `now`.
    std::string ToJson(SteadyTime now) const;

  private:
    // One per-minute limit. Unlimited when limit == 0.
    struct Bucket final {
        std::int64_t limit = 0;
        double level = 0;  // May be negative: debt.
        SteadyTime updated;

        double Capacity() const;
        double RatePerSecond() const;
        double LevelAt(SteadyTime now) const;
        void Take(double amount, SteadyTime now);
        // Time from `now` until the level reaches `target` (0 if it already has).
        std::chrono::milliseconds Until(double target, SteadyTime now) const;
    };

    struct ApiState final {
        Bucket requests;
        Bucket tokens;                    // OpenAI: tpm; Anthropic: itpm.
        Bucket output;                    // Anthropic: otpm.
        std::deque<SteadyTime> arrivals;  // Last 65 s, when acceleration is on; sorted.
    };

    ApiState& State(RateLimitApi api) {
        return api == RateLimitApi::kOpenAi ? openai_ : anthropic_;
    }
    static const ApiState& Unlimited();
    static RateLimitSnapshot SnapshotOf(const ApiState& state, std::int64_t static_tokens,
                                        SteadyTime now);
    static AnthropicRateLimitSnapshot AnthropicSnapshotOf(const ApiState& state,
                                                          std::int64_t static_input_tokens,
                                                          SteadyTime now, WallTime wall);
    bool Accelerating(const ApiState& state, SteadyTime at, int extra) const;
    std::chrono::milliseconds AccelerationRetryAfter(const ApiState& state, SteadyTime now) const;

    // False while config_ limits nothing: requests then skip the mutex (benchmarks run unlimited).
    std::atomic<bool> limited_ = false;
    mutable std::mutex mutex_;
    RateLimitConfig config_;
    ApiState openai_;
    ApiState anthropic_;
};

// `time` as RFC 3339 in UTC with whole seconds, e.g. "2025-08-21T12:40:59Z".
std::string FormatRfc3339(WallTime time);

// Appends the anthropic-ratelimit-* header lines for `snapshot`: requests, input-tokens,
// output-tokens, tokens, each with -limit, -remaining and -reset.
void AppendAnthropicRateLimitHeaders(std::string& out, const AnthropicRateLimitSnapshot& snapshot);

// Formats `duration` the way Go's time.Duration.String does at millisecond resolution, as OpenAI
// sends reset times: "0s", "6ms", "1s", "1.5s", "6m0s", "1h2m3.5s".
std::string FormatGoDuration(std::chrono::milliseconds duration);

// Appends the x-ratelimit-* header lines ("name: value\r\n") for `snapshot`.
void AppendRateLimitHeaders(std::string& out, const RateLimitSnapshot& snapshot);

// Appends the retry hint of a rate-limit 429 of `api`: `retry-after` in whole seconds rounded up
// (at least 1); for OpenAI also `retry-after-ms` (whole milliseconds), for Anthropic
// `x-should-retry: true` (docs/providers.md#rate-limit-headers: the API sends it on 429s).
void AppendRetryAfterHeaders(std::string& out, RateLimitApi api,
                             std::chrono::milliseconds retry_after);

}  // namespace switchyard::mock
