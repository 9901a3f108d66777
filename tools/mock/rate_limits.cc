#include "rate_limits.h"

#include <fmt/format.h>

#include <algorithm>

namespace switchyard::mock {
namespace {

constexpr std::int64_t kLimitRequests = 10'000;
constexpr std::int64_t kLimitTokens = 30'000'000;

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
