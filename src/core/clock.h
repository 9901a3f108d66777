#pragma once

#include <chrono>

namespace switchyard::core {

// The gateway's only source of time. Code that decides anything from time takes a Clock so tests
// can drive it; RealClock is the one place that reads the system clocks.
class Clock {
  public:
    virtual ~Clock() = default;
    virtual std::chrono::steady_clock::time_point Now() const = 0;
    virtual std::chrono::system_clock::time_point WallNow() const = 0;
};

class RealClock final : public Clock {
  public:
    std::chrono::steady_clock::time_point Now() const override {
        return std::chrono::steady_clock::now();
    }
    std::chrono::system_clock::time_point WallNow() const override {
        return std::chrono::system_clock::now();
    }
};

}  // namespace switchyard::core
