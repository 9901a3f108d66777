#pragma once

#include <chrono>
#include <optional>

namespace switchyard::policy {

// Exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter"):
// the n-th retry (n = 0 for the first) waits uniform(0, min(cap, base * 2^n)), so clients that
// failed together do not retry in lock-step. A provider's retry-after is a minimum, not a hint.
struct Backoff {
    std::chrono::milliseconds base{500};
    std::chrono::milliseconds cap{20'000};

    // `uniform` is a draw from [0, 1) from the caller's random source.
    std::chrono::milliseconds Jittered(int retry, double uniform) const;

    // The wait before retrying the same target: the jittered backoff, raised to retry-after.
    std::chrono::milliseconds Delay(int retry, double uniform,
                                    std::optional<std::chrono::milliseconds> retry_after) const;
};

}  // namespace switchyard::policy
