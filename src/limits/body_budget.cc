#include "limits/body_budget.h"

#include <utility>

namespace switchyard::limits {

BodyBudget::Reservation& BodyBudget::Reservation::operator=(Reservation&& other) noexcept {
    if (this != &other) {
        Release();
        budget_ = std::exchange(other.budget_, nullptr);
        client_ = other.client_;
        bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
}

void BodyBudget::Reservation::Release() {
    if (budget_ != nullptr) budget_->Release(client_, bytes_);
    budget_ = nullptr;
    bytes_ = 0;
}

BodyBudget::Refusal BodyBudget::Reserve(std::uint64_t client, std::size_t bytes, std::size_t total,
                                        std::size_t per_client, Reservation& reservation) {
    std::lock_guard lock(mutex_);
    const auto it = clients_.find(client);
    const std::size_t mine = it == clients_.end() ? 0 : it->second;
    if (per_client > 0 && mine > 0 && mine + bytes > per_client) return Refusal::kClient;
    if (total > 0 && total_ > 0 && total_ + bytes > total) return Refusal::kTotal;
    total_ += bytes;
    clients_[client] = mine + bytes;
    reservation = Reservation();
    reservation.budget_ = this;
    reservation.client_ = client;
    reservation.bytes_ = bytes;
    return Refusal::kNone;
}

void BodyBudget::Release(std::uint64_t client, std::size_t bytes) {
    std::lock_guard lock(mutex_);
    total_ -= bytes;
    const auto it = clients_.find(client);
    if (it == clients_.end()) return;
    it->second -= bytes;
    if (it->second == 0) clients_.erase(it);
}

std::size_t BodyBudget::InFlight() const {
    std::lock_guard lock(mutex_);
    return total_;
}

std::size_t BodyBudget::InFlightOf(std::uint64_t client) const {
    std::lock_guard lock(mutex_);
    const auto it = clients_.find(client);
    return it == clients_.end() ? 0 : it->second;
}

}  // namespace switchyard::limits
