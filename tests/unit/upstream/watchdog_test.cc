#include "upstream/watchdog.h"

#include <gtest/gtest.h>

#include <optional>

namespace switchyard::upstream {
namespace {

using std::chrono::milliseconds;

// Time moves only when the test says so; the watchdog's timer ticks on the real clock.
class ManualClock final : public core::Clock {
  public:
    std::chrono::steady_clock::time_point Now() const override { return now; }
    std::chrono::system_clock::time_point WallNow() const override { return {}; }
    std::chrono::steady_clock::time_point now{std::chrono::hours(1)};
};

// Runs the worker loop for a few ticks of 1 ms.
void RunTicks(asio::io_context& ioc) {
    ioc.restart();
    ioc.run_for(milliseconds(20));
}

TEST(DeferredTest, BeginsAtTheFirstSweepPastItsDueTimeOnce) {
    asio::io_context ioc;
    ManualClock clock;
    Watchdog watchdog(ioc.get_executor(), clock, milliseconds(1));
    watchdog.Start();
    Deferred deferred(watchdog);
    int begun = 0;
    deferred.Schedule(clock.now + milliseconds(500), [&] { ++begun; });
    RunTicks(ioc);
    EXPECT_EQ(begun, 0);
    EXPECT_TRUE(deferred.Pending());
    clock.now += milliseconds(500);
    RunTicks(ioc);
    EXPECT_EQ(begun, 1);
    EXPECT_FALSE(deferred.Pending());
    RunTicks(ioc);
    EXPECT_EQ(begun, 1);
}

TEST(DeferredTest, ACancelledOrDestroyedOneNeverBegins) {
    asio::io_context ioc;
    ManualClock clock;
    Watchdog watchdog(ioc.get_executor(), clock, milliseconds(1));
    watchdog.Start();
    int begun = 0;
    Deferred kept(watchdog);
    Deferred cancelled(watchdog);
    std::optional<Deferred> destroyed(std::in_place, watchdog);
    kept.Schedule(clock.now, [&] { begun += 1; });
    cancelled.Schedule(clock.now, [&] { begun += 10; });
    destroyed->Schedule(clock.now, [&] { begun += 100; });
    cancelled.Cancel();
    destroyed.reset();  // unlinks itself: the sweep never sees it
    RunTicks(ioc);
    EXPECT_EQ(begun, 1);
    EXPECT_FALSE(cancelled.Pending());
}

}  // namespace
}  // namespace switchyard::upstream
