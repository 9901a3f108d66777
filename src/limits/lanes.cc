#include "limits/lanes.h"

namespace switchyard::limits {

Lanes::Lanes(const std::vector<config::Lane>& lanes) {
    for (const config::Lane& lane : lanes) lanes_.push_back(std::make_unique<State>(lane));
}

Lanes::Grant Lanes::Share(std::size_t lane, TimePoint now) {
    State& self = *lanes_[lane];
    Grant grant;
    grant.share = self.config.share;
    for (const auto& other : lanes_) {
        if (other->config.share > self.config.share &&
            other->waiting.load(std::memory_order_relaxed) > 0) {
            grant.share = 0;
        }
    }
    if (self.config.slow_start.count() == 0) return grant;  // no ramp: no lock on the hot path
    std::lock_guard lock(self.mutex);
    grant.ramp = self.ramp.Fraction(now);
    return grant;
}

bool Lanes::Enqueue(std::size_t lane) {
    State& self = *lanes_[lane];
    int waiting = self.waiting.load(std::memory_order_relaxed);
    do {
        if (static_cast<std::size_t>(waiting) >= self.config.max_queue) return false;
    } while (!self.waiting.compare_exchange_weak(waiting, waiting + 1, std::memory_order_relaxed));
    return true;
}

void Lanes::Dequeue(std::size_t lane) {
    lanes_[lane]->waiting.fetch_sub(1, std::memory_order_relaxed);
}

int Lanes::Waiting(std::size_t lane) const {
    return lanes_[lane]->waiting.load(std::memory_order_relaxed);
}

}  // namespace switchyard::limits
