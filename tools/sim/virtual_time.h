#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "core/clock.h"

namespace switchyard::sim {

using TimePoint = std::chrono::steady_clock::time_point;
using std::chrono::milliseconds;

// The simulator's clock: time moves only when the event loop takes the next event. It starts an
// hour after the steady clock's epoch, so that "no mark" instants (a default TimePoint) in the
// production code lie in the past, as they do on a real machine.
class VirtualClock final : public core::Clock {
  public:
    static constexpr std::chrono::hours kOrigin{1};

    TimePoint Now() const override { return now_; }
    std::chrono::system_clock::time_point WallNow() const override {
        // A fixed calendar origin (2026-01-01T00:00:00Z) keeps HTTP dates reproducible.
        return std::chrono::system_clock::time_point(std::chrono::seconds(1'767'225'600)) +
               std::chrono::duration_cast<std::chrono::system_clock::duration>(now_ - Start());
    }
    static TimePoint Start() { return TimePoint(kOrigin); }
    // Milliseconds since the run started.
    double ElapsedMs() const {
        return std::chrono::duration<double, std::milli>(now_ - Start()).count();
    }
    void Set(TimePoint now) { now_ = now; }

  private:
    TimePoint now_ = Start();
};

// A discrete-event loop: callbacks ordered by time, ties in the order they were scheduled, so a
// run is a pure function of its scenario and seed.
class EventLoop final {
  public:
    explicit EventLoop(VirtualClock& clock) : clock_(clock) {}

    void At(TimePoint when, std::function<void()> action) {
        if (when < clock_.Now()) when = clock_.Now();
        queue_.push({when, next_++, std::move(action)});
    }
    void After(std::chrono::steady_clock::duration delay, std::function<void()> action) {
        At(clock_.Now() + delay, std::move(action));
    }
    // Runs events until none is left.
    void Run() {
        while (!queue_.empty()) {
            // Moved out before popping: the action may schedule more.
            Entry entry = std::move(const_cast<Entry&>(queue_.top()));
            queue_.pop();
            clock_.Set(entry.when);
            entry.action();
            ++events_;
        }
    }
    std::uint64_t Events() const { return events_; }
    const VirtualClock& Clock() const { return clock_; }

  private:
    struct Entry {
        TimePoint when;
        std::uint64_t seq;
        std::function<void()> action;
        bool operator>(const Entry& other) const {
            return when != other.when ? when > other.when : seq > other.seq;
        }
    };
    VirtualClock& clock_;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue_;
    std::uint64_t next_ = 0;
    std::uint64_t events_ = 0;
};

}  // namespace switchyard::sim
