#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "policy/retry_budget.h"

namespace switchyard::limits {

// One retry budget per client credential, so one client's outage-driven retries cannot spend
// another's. Credentials are never stored: the map is keyed by a 64-bit hash of them (two
// credentials that collide share a budget, which is harmless). Bounded: past `max_clients`
// distinct credentials, new ones share one overflow budget. Thread-safe.
class ClientBudgets final {
  public:
    ClientBudgets(double max_tokens, double token_ratio, std::size_t max_clients = 100'000);

    // The budget of the client presenting `credential` (empty: the anonymous client).
    policy::RetryBudget& For(std::string_view credential);

  private:
    const double max_tokens_;
    const double token_ratio_;
    const std::size_t max_clients_;
    std::mutex mutex_;
    std::unordered_map<std::size_t, std::unique_ptr<policy::RetryBudget>> budgets_;
    policy::RetryBudget overflow_;
};

}  // namespace switchyard::limits
