#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace switchyard::observe {

// One upstream attempt that failed, as an operator looks it up with the provider.
struct FailedAttempt {
    std::chrono::system_clock::time_point at;
    std::string model_group;
    std::string deployment;
    unsigned status = 0;  // 0: no HTTP answer
    std::string error_class;
    std::string upstream_request_id;
};

// The last `capacity` failed attempts of the whole process, newest first, for /status and the
// dashboard. Failures are rare next to requests, so one mutex serves every worker. Thread-safe.
class RecentFailures final {
  public:
    explicit RecentFailures(std::size_t capacity) : capacity_(capacity) {}

    void Add(FailedAttempt failure);
    std::vector<FailedAttempt> Newest() const;

  private:
    std::size_t capacity_;
    mutable std::mutex mutex_;
    std::deque<FailedAttempt> failures_;  // newest at the front
};

}  // namespace switchyard::observe
