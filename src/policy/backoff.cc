#include "policy/backoff.h"

#include <algorithm>

namespace switchyard::policy {

std::chrono::milliseconds Backoff::Jittered(int retry, double uniform) const {
    const int shift = std::clamp(retry, 0, 30);
    const double ceiling = std::min<double>(
        static_cast<double>(cap.count()), static_cast<double>(base.count()) * double(1LL << shift));
    return std::chrono::milliseconds(
        static_cast<long long>(ceiling * std::clamp(uniform, 0.0, 1.0)));
}

std::chrono::milliseconds Backoff::Delay(
    int retry, double uniform, std::optional<std::chrono::milliseconds> retry_after) const {
    const std::chrono::milliseconds jittered = Jittered(retry, uniform);
    return retry_after ? std::max(jittered, *retry_after) : jittered;
}

}  // namespace switchyard::policy
