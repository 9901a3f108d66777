#include "policy/retry_budget.h"

#include <algorithm>
#include <cmath>

namespace switchyard::policy {

RetryBudget::RetryBudget(double max_tokens, double token_ratio)
    : max_(std::llround(max_tokens * kScale)),
      ratio_(std::llround(token_ratio * kScale)),
      tokens_(max_) {}

void RetryBudget::Add(std::int64_t delta) {
    std::int64_t current = tokens_.load(std::memory_order_relaxed);
    for (;;) {
        const std::int64_t next = std::clamp<std::int64_t>(current + delta, 0, max_);
        if (tokens_.compare_exchange_weak(current, next, std::memory_order_relaxed)) return;
    }
}

void RetryBudget::OnFailure() { Add(-kScale); }
void RetryBudget::OnSuccess() { Add(ratio_); }
bool RetryBudget::CanRetry() const { return tokens_.load(std::memory_order_relaxed) * 2 > max_; }
double RetryBudget::Tokens() const {
    return static_cast<double>(tokens_.load(std::memory_order_relaxed)) / kScale;
}

void RetryBudget::Set(double tokens) {
    const auto scaled = static_cast<std::int64_t>(tokens * kScale);
    tokens_.store(std::clamp<std::int64_t>(scaled, 0, max_), std::memory_order_relaxed);
}

}  // namespace switchyard::policy
