#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace switchyard::policy {

// The provider's minimum wait before a retry, from `retry-after-ms` (float milliseconds, sent by
// OpenAI) or else `retry-after` (float seconds, or an HTTP-date per RFC 9110 section 10.2.3,
// relative to `now`). Negative or unparseable values are ignored; a date in the past is 0.
std::optional<std::chrono::milliseconds> ParseRetryAfter(
    std::optional<std::string_view> retry_after_ms, std::optional<std::string_view> retry_after,
    std::chrono::system_clock::time_point now);

// An IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), or the obsolete RFC 850 and asctime forms
// that RFC 9110 says recipients must accept.
std::optional<std::chrono::system_clock::time_point> ParseHttpDate(std::string_view text);

// The retry hint Switchyard gives many clients it refuses at once (a shed lane, a key over its
// limit, every deployment cooling down): never before `minimum` — capacity does not exist sooner —
// and spread by `draw` (uniform in [0, 1)) over the `spread` after it, so the clients that honour
// it come back over an interval instead of in one wave.
std::chrono::milliseconds SpreadHint(std::chrono::milliseconds minimum,
                                     std::chrono::milliseconds spread, double draw);

// The spread when nothing better is known: half the minimum, between 100 ms and 5 s.
std::chrono::milliseconds DefaultSpread(std::chrono::milliseconds minimum);

}  // namespace switchyard::policy
