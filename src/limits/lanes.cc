#include "limits/lanes.h"

#include <algorithm>
#include <iterator>

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

std::uint64_t Lanes::Ticket(std::size_t lane) {
    return lanes_[lane]->next_ticket.fetch_add(1, std::memory_order_relaxed);
}

bool Lanes::Enqueue(std::size_t lane, std::size_t deployment, std::uint64_t ticket) {
    State& self = *lanes_[lane];
    std::lock_guard lock(self.queue_mutex);
    if (self.queue.size() >= self.config.max_queue) return false;
    if (self.queue.emplace(deployment, ticket).second) {
        self.waiting.fetch_add(1, std::memory_order_relaxed);
    }
    return true;
}

void Lanes::Dequeue(std::size_t lane, std::size_t deployment, std::uint64_t ticket) {
    State& self = *lanes_[lane];
    std::lock_guard lock(self.queue_mutex);
    if (self.queue.erase({deployment, ticket}) > 0) {
        self.waiting.fetch_sub(1, std::memory_order_relaxed);
    }
}

int Lanes::Waiting(std::size_t lane) const {
    return lanes_[lane]->waiting.load(std::memory_order_relaxed);
}

int Lanes::Ahead(std::size_t lane, std::size_t deployment,
                 std::optional<std::uint64_t> ticket) const {
    const State& self = *lanes_[lane];
    std::lock_guard lock(self.queue_mutex);
    const auto first = self.queue.lower_bound({deployment, 0});
    const auto last = self.queue.lower_bound({deployment, ticket.value_or(~std::uint64_t{0})});
    return static_cast<int>(std::distance(first, last));
}

Lanes::TimePoint Lanes::Promise(std::size_t lane, std::size_t deployment, TimePoint earliest,
                                std::chrono::milliseconds spacing) {
    State& self = *lanes_[lane];
    std::lock_guard lock(self.queue_mutex);
    TimePoint& promised = self.promised[deployment];
    // A promise in the past binds nothing: `earliest` is then later than it plus a spacing.
    promised = promised == TimePoint{} ? earliest : std::max(earliest, promised + spacing);
    return promised;
}

std::chrono::milliseconds ExpectedWait(std::chrono::milliseconds wait, int ahead,
                                       std::chrono::milliseconds spacing) {
    const std::chrono::milliseconds kDay = std::chrono::hours(24);
    if (ahead <= 0 || spacing <= std::chrono::milliseconds(0)) return wait;
    // Saturating: a long queue at a slow rate reads as "a day", which is past any deadline.
    if (spacing.count() > (kDay - wait).count() / ahead) return std::max(wait, kDay);
    return wait + ahead * spacing;
}

}  // namespace switchyard::limits
