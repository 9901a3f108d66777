#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

namespace switchyard::policy {

// One rate-limit dimension as a provider reported it on a response.
struct RateLimitWindow {
    std::optional<std::int64_t> limit;
    std::optional<std::int64_t> remaining;
    std::optional<std::chrono::system_clock::time_point> reset;  // when it is fully replenished

    bool Known() const { return limit || remaining || reset; }
};

// A deployment's headroom as of one response (docs/providers.md#rate-limit-headers).
struct RateLimitHeaders {
    RateLimitWindow requests;
    RateLimitWindow tokens;         // OpenAI TPM; Anthropic's most restrictive token limit
    RateLimitWindow input_tokens;   // Anthropic ITPM
    RateLimitWindow output_tokens;  // Anthropic OTPM

    bool Known() const {
        return requests.Known() || tokens.Known() || input_tokens.Known() || output_tokens.Known();
    }
};

// A response header: name (any case) and value.
using HeaderField = std::pair<std::string_view, std::string_view>;

// Reads both providers' headers from a response's `fields` in one pass:
//  - Anthropic: anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,
//    reset}, the reset an RFC 3339 instant;
//  - OpenAI: x-ratelimit-{limit,remaining,reset}-{requests,tokens}, the reset a Go duration
//    ("1s", "6m0s", "12ms") from `now`.
// Malformed values are skipped.
RateLimitHeaders ParseRateLimitHeaders(std::span<const HeaderField> fields,
                                       std::chrono::system_clock::time_point now);

// "1h2m3.5s", "6m0s", "12ms", "250us", "0s" -> milliseconds (rounded up).
std::optional<std::chrono::milliseconds> ParseGoDuration(std::string_view text);

// "2024-03-26T20:00:00Z", with optional fraction and a Z or +hh:mm offset.
std::optional<std::chrono::system_clock::time_point> ParseRfc3339(std::string_view text);

}  // namespace switchyard::policy
