#include "policy/hedge_budget.h"

#include <algorithm>
#include <cmath>

namespace switchyard::policy {

void HedgeBudget::OnRequest(double ratio) {
    const auto add = static_cast<std::int64_t>(std::llround(ratio * kScale));
    const auto cap = static_cast<std::int64_t>(std::llround(ratio * kBurstRequests * kScale));
    std::int64_t current = tokens_.load(std::memory_order_relaxed);
    std::int64_t next = 0;
    do {
        next = std::min(cap, current + add);
        if (next <= current) return;  // full (or over a cap a smaller ratio lowered)
    } while (!tokens_.compare_exchange_weak(current, next, std::memory_order_relaxed));
}

bool HedgeBudget::TryHedge() {
    std::int64_t current = tokens_.load(std::memory_order_relaxed);
    do {
        if (current < kScale) return false;
    } while (!tokens_.compare_exchange_weak(current, current - kScale, std::memory_order_relaxed));
    return true;
}

double HedgeBudget::Tokens() const {
    return static_cast<double>(tokens_.load(std::memory_order_relaxed)) / kScale;
}

}  // namespace switchyard::policy
