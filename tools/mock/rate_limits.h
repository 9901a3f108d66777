#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace switchyard::mock {

// Values of OpenAI's x-ratelimit-* response headers for one request (WIRE.md A.2.2).
struct RateLimitSnapshot final {
    std::int64_t limit_requests = 0;
    std::int64_t remaining_requests = 0;
    std::chrono::milliseconds reset_requests{0};
    std::int64_t limit_tokens = 0;
    std::int64_t remaining_tokens = 0;
    std::chrono::milliseconds reset_tokens{0};
};

// Values of Anthropic's anthropic-ratelimit-* response headers for one request (WIRE.md A.1.5).
// Token counts remaining are rounded to the nearest thousand, as Anthropic sends them.
struct AnthropicRateLimitSnapshot final {
    struct Bucket final {
        std::int64_t limit = 0;
        std::int64_t remaining = 0;
        std::chrono::system_clock::time_point reset;
    };
    Bucket requests;
    Bucket tokens;  // The most restrictive token limit.
    Bucket input_tokens;
    Bucket output_tokens;
};

// The rate limits the mock advertises. For now the values are static and plausible; this is the
// seam where token buckets will go. Thread-safe.
class RateLimits final {
  public:
    // Accounts one request costing `tokens` and returns the headers to send with its answer.
    RateLimitSnapshot Observe(std::int64_t tokens) const;

    // Anthropic's form: accounts one request with `input_tokens` arriving at `now`. Buckets are
    // reported full again at the next whole second after `now`.
    AnthropicRateLimitSnapshot ObserveAnthropic(std::int64_t input_tokens,
                                                std::chrono::system_clock::time_point now) const;
};

// `time` as RFC 3339 in UTC with whole seconds, e.g. "2025-08-21T12:40:59Z".
std::string FormatRfc3339(std::chrono::system_clock::time_point time);

// Appends the anthropic-ratelimit-* header lines for `snapshot`: requests, input-tokens,
// output-tokens, tokens, each with -limit, -remaining and -reset.
void AppendAnthropicRateLimitHeaders(std::string& out, const AnthropicRateLimitSnapshot& snapshot);

// Formats `duration` the way Go's time.Duration.String does at millisecond resolution, as OpenAI
// sends reset times: "0s", "6ms", "1s", "1.5s", "6m0s", "1h2m3.5s".
std::string FormatGoDuration(std::chrono::milliseconds duration);

// Appends the x-ratelimit-* header lines ("name: value\r\n") for `snapshot`.
void AppendRateLimitHeaders(std::string& out, const RateLimitSnapshot& snapshot);

}  // namespace switchyard::mock
