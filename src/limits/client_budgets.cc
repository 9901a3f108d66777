#include "limits/client_budgets.h"

#include <functional>

namespace switchyard::limits {

ClientBudgets::ClientBudgets(double max_tokens, double token_ratio, std::size_t max_clients)
    : max_tokens_(max_tokens),
      token_ratio_(token_ratio),
      max_clients_(max_clients),
      overflow_(max_tokens, token_ratio) {}

policy::RetryBudget& ClientBudgets::For(std::string_view credential) {
    const std::size_t digest = std::hash<std::string_view>{}(credential);
    std::lock_guard lock(mutex_);
    const auto it = budgets_.find(digest);
    if (it != budgets_.end()) return *it->second;
    if (budgets_.size() >= max_clients_) return overflow_;
    auto& slot = budgets_[digest];
    slot = std::make_unique<policy::RetryBudget>(max_tokens_, token_ratio_);
    return *slot;
}

}  // namespace switchyard::limits
