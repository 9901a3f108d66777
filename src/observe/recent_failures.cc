#include "observe/recent_failures.h"

namespace switchyard::observe {

void RecentFailures::Add(FailedAttempt failure) {
    std::lock_guard lock(mutex_);
    failures_.push_front(std::move(failure));
    if (failures_.size() > capacity_) failures_.pop_back();
}

std::vector<FailedAttempt> RecentFailures::Newest() const {
    std::lock_guard lock(mutex_);
    return {failures_.begin(), failures_.end()};
}

}  // namespace switchyard::observe
