#pragma once

#include <atomic>
#include <cstdint>

namespace switchyard::policy {

// How many requests may be hedged (docs/resilience.md#hedged-attempts): a token bucket that every
// request that could be hedged fills by `ratio` of a token, up to `ratio` × kBurstRequests, and
// every hedge empties by one whole token. Over any long run at most `ratio` of the requests are
// hedged; a burst of slow answers after a calm stretch hedges at most the bucket's size. Starts
// empty. Thread-safe and lock-free.
class HedgeBudget final {
  public:
    static constexpr double kBurstRequests = 100;

    // A request that could be hedged.
    void OnRequest(double ratio);
    // Takes a token for a hedge; false when fewer than one is left.
    bool TryHedge();
    double Tokens() const;

  private:
    static constexpr std::int64_t kScale = 1000;  // tokens are kept in thousandths
    std::atomic<std::int64_t> tokens_{0};
};

}  // namespace switchyard::policy
