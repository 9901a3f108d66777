#include "limits/recent_give_ups.h"

#include <functional>
#include <string>

namespace switchyard::limits {

std::uint64_t RecentGiveUps::Fingerprint(std::string_view credential, std::string_view route,
                                         std::string_view body) {
    const std::hash<std::string_view> hash;
    std::uint64_t h = hash(credential);
    // Combined so that the parts' boundaries count ("ab"+"c" is not "a"+"bc").
    h ^= hash(route) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h ^= hash(body) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h ^ (body.size() * 0x100000001b3ULL);
}

void RecentGiveUps::Forget(TimePoint now) {
    while (!order_.empty() &&
           (order_.size() > capacity_ || now - order_.front().first >= window_)) {
        const auto [at, fingerprint] = order_.front();
        order_.pop_front();
        const auto it = last_.find(fingerprint);
        if (it != last_.end() && it->second == at) last_.erase(it);  // no later note of it
    }
    count_.store(last_.size(), std::memory_order_relaxed);
}

void RecentGiveUps::Note(std::uint64_t fingerprint, TimePoint now) {
    if (capacity_ == 0) return;
    std::lock_guard lock(mutex_);
    last_[fingerprint] = now;
    order_.emplace_back(now, fingerprint);
    Forget(now);
}

bool RecentGiveUps::Recent(std::uint64_t fingerprint, TimePoint now) const {
    if (Empty()) return false;
    std::lock_guard lock(mutex_);
    const auto it = last_.find(fingerprint);
    return it != last_.end() && now - it->second < window_ && now >= it->second;
}

std::size_t RecentGiveUps::Size() const {
    std::lock_guard lock(mutex_);
    return last_.size();
}

}  // namespace switchyard::limits
