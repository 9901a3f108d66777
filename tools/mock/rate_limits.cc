#include "rate_limits.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>

namespace switchyard::mock {
namespace {

constexpr std::int64_t kLimitRequests = 10'000;
constexpr std::int64_t kLimitTokens = 30'000'000;

// Anthropic: plausible tier-4-like limits per minute.
constexpr std::int64_t kAnthropicLimitRequests = 4'000;
constexpr std::int64_t kAnthropicLimitInputTokens = 2'000'000;
constexpr std::int64_t kAnthropicLimitOutputTokens = 400'000;

std::int64_t RoundToThousand(std::int64_t n) { return (n + 500) / 1000 * 1000; }

}  // namespace

RateLimitSnapshot RateLimits::Observe(std::int64_t tokens) const {
    RateLimitSnapshot snapshot;
    snapshot.limit_requests = kLimitRequests;
    snapshot.remaining_requests = kLimitRequests - 1;
    snapshot.reset_requests = std::chrono::milliseconds(6);
    snapshot.limit_tokens = kLimitTokens;
    snapshot.remaining_tokens = std::max<std::int64_t>(0, kLimitTokens - tokens);
    snapshot.reset_tokens = std::chrono::milliseconds(2);
    return snapshot;
}

AnthropicRateLimitSnapshot RateLimits::ObserveAnthropic(
    std::int64_t input_tokens, std::chrono::system_clock::time_point now) const {
    const auto reset = std::chrono::floor<std::chrono::seconds>(now) + std::chrono::seconds(1);
    const std::int64_t input_remaining =
        RoundToThousand(std::max<std::int64_t>(0, kAnthropicLimitInputTokens - input_tokens));
    AnthropicRateLimitSnapshot snapshot;
    snapshot.requests = {kAnthropicLimitRequests, kAnthropicLimitRequests - 1, reset};
    snapshot.input_tokens = {kAnthropicLimitInputTokens, input_remaining, reset};
    snapshot.output_tokens = {kAnthropicLimitOutputTokens, kAnthropicLimitOutputTokens, reset};
    // Input and output limits combined; the most restrictive is the input side here.
    snapshot.tokens = {kAnthropicLimitInputTokens + kAnthropicLimitOutputTokens,
                       input_remaining + kAnthropicLimitOutputTokens, reset};
    return snapshot;
}

std::string FormatRfc3339(std::chrono::system_clock::time_point time) {
    const std::time_t seconds = std::chrono::system_clock::to_time_t(time);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", utc.tm_year + 1900, utc.tm_mon + 1,
                       utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec);
}

void AppendAnthropicRateLimitHeaders(std::string& out, const AnthropicRateLimitSnapshot& snapshot) {
    const auto append = [&out](std::string_view name,
                               const AnthropicRateLimitSnapshot::Bucket& bucket) {
        fmt::format_to(std::back_inserter(out),
                       "anthropic-ratelimit-{0}-limit: {1}\r\n"
                       "anthropic-ratelimit-{0}-remaining: {2}\r\n"
                       "anthropic-ratelimit-{0}-reset: {3}\r\n",
                       name, bucket.limit, bucket.remaining, FormatRfc3339(bucket.reset));
    };
    append("requests", snapshot.requests);
    append("input-tokens", snapshot.input_tokens);
    append("output-tokens", snapshot.output_tokens);
    append("tokens", snapshot.tokens);
}

std::string FormatGoDuration(std::chrono::milliseconds duration) {
    auto ms = duration.count();
    if (ms == 0) return "0s";
    std::string out;
    if (ms < 0) {
        out.push_back('-');
        ms = -ms;
    }
    if (ms < 1000) {
        fmt::format_to(std::back_inserter(out), "{}ms", ms);
        return out;
    }
    const auto hours = ms / 3'600'000;
    const auto minutes = ms / 60'000 % 60;
    const auto seconds = ms / 1000 % 60;
    const auto millis = ms % 1000;
    if (hours > 0) fmt::format_to(std::back_inserter(out), "{}h", hours);
    if (hours > 0 || minutes > 0) fmt::format_to(std::back_inserter(out), "{}m", minutes);
    fmt::format_to(std::back_inserter(out), "{}", seconds);
    if (millis > 0) {
        auto fraction = fmt::format("{:03}", millis);
        fraction.erase(fraction.find_last_not_of('0') + 1);
        out.push_back('.');
        out += fraction;
    }
    out.push_back('s');
    return out;
}

void AppendRateLimitHeaders(std::string& out, const RateLimitSnapshot& snapshot) {
    fmt::format_to(std::back_inserter(out),
                   "x-ratelimit-limit-requests: {}\r\n"
                   "x-ratelimit-remaining-requests: {}\r\n"
                   "x-ratelimit-reset-requests: {}\r\n"
                   "x-ratelimit-limit-tokens: {}\r\n"
                   "x-ratelimit-remaining-tokens: {}\r\n"
                   "x-ratelimit-reset-tokens: {}\r\n",
                   snapshot.limit_requests, snapshot.remaining_requests,
                   FormatGoDuration(snapshot.reset_requests), snapshot.limit_tokens,
                   snapshot.remaining_tokens, FormatGoDuration(snapshot.reset_tokens));
}

}  // namespace switchyard::mock
