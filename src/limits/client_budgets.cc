#include "limits/client_budgets.h"

#include <openssl/sha.h>

#include <cstring>

namespace switchyard::limits {

std::size_t ClientBudgets::DigestHash::operator()(const Digest& d) const {
    std::size_t h;
    std::memcpy(&h, d.data(), sizeof h);  // a SHA-256 prefix is already uniformly distributed
    return h;
}

ClientBudgets::ClientBudgets(double max_tokens, double token_ratio, std::size_t max_clients)
    : max_tokens_(max_tokens),
      token_ratio_(token_ratio),
      max_clients_(max_clients),
      overflow_(max_tokens, token_ratio) {}

policy::RetryBudget& ClientBudgets::For(std::string_view credential) {
    Digest digest;
    SHA256(reinterpret_cast<const unsigned char*>(credential.data()), credential.size(),
           digest.data());
    std::lock_guard lock(mutex_);
    const auto it = budgets_.find(digest);
    if (it != budgets_.end()) return *it->second;
    if (budgets_.size() >= max_clients_) return overflow_;
    auto& slot = budgets_[digest];
    slot = std::make_unique<policy::RetryBudget>(max_tokens_, token_ratio_);
    return *slot;
}

}  // namespace switchyard::limits
