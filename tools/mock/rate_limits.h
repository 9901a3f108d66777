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

// The rate limits the mock advertises. For now the values are static and plausible; this is the
// seam where token buckets will go. Thread-safe.
class RateLimits final {
  public:
    // Accounts one request costing `tokens` and returns the headers to send with its answer.
    RateLimitSnapshot Observe(std::int64_t tokens) const;
};

// Formats `duration` the way Go's time.Duration.String does at millisecond resolution, as OpenAI
// sends reset times: "0s", "6ms", "1s", "1.5s", "6m0s", "1h2m3.5s".
std::string FormatGoDuration(std::chrono::milliseconds duration);

// Appends the x-ratelimit-* header lines ("name: value\r\n") for `snapshot`.
void AppendRateLimitHeaders(std::string& out, const RateLimitSnapshot& snapshot);

}  // namespace switchyard::mock
