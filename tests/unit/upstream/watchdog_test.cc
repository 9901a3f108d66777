#include "upstream/watchdog.h"

#include <gtest/gtest.h>

#include <optional>

#include "core/clock.h"

namespace switchyard::upstream {
namespace watchdog_test {

using std::chrono::milliseconds;

// Runs the worker loop, ticking every millisecond on the real clock, until `done` holds: at most
// five seconds, so a loaded machine that delays the ticks does not fail the test.
template <class Done>
void RunUntil(asio::io_context& ioc, Done done) {
    for (int i = 0; i < 500 && !done(); ++i) {
        ioc.restart();
        ioc.run_for(milliseconds(10));
    }
}

TEST(DeferredTest, BeginsOnceAtTheNextSweep) {
    asio::io_context ioc;
    const core::RealClock clock;
    Watchdog watchdog(ioc.get_executor(), clock, milliseconds(1));
    watchdog.Start();
    Deferred deferred(watchdog);
    int begun = 0;
    deferred.Schedule([&] { ++begun; });
    EXPECT_TRUE(deferred.Pending());
    EXPECT_EQ(begun, 0);  // not at once: only a sweep begins it
    RunUntil(ioc, [&] { return begun > 0; });
    EXPECT_EQ(begun, 1);
    EXPECT_FALSE(deferred.Pending());
    // Later sweeps do not begin it again: a second Deferred, scheduled now, marks one more sweep.
    Deferred marker(watchdog);
    bool swept = false;
    marker.Schedule([&] { swept = true; });
    RunUntil(ioc, [&] { return swept; });
    ASSERT_TRUE(swept);
    EXPECT_EQ(begun, 1);
}

TEST(DeferredTest, ACancelledOrDestroyedOneNeverBegins) {
    asio::io_context ioc;
    const core::RealClock clock;
    Watchdog watchdog(ioc.get_executor(), clock, milliseconds(1));
    watchdog.Start();
    int begun = 0;
    Deferred kept(watchdog);
    Deferred cancelled(watchdog);
    std::optional<Deferred> destroyed(std::in_place, watchdog);
    kept.Schedule([&] { begun += 1; });
    cancelled.Schedule([&] { begun += 10; });
    destroyed->Schedule([&] { begun += 100; });
    cancelled.Cancel();
    destroyed.reset();  // unlinks itself: the sweep never sees it
    // The sweep that begins `kept` would have begun the other two with it.
    RunUntil(ioc, [&] { return begun > 0; });
    EXPECT_EQ(begun, 1);
    EXPECT_FALSE(cancelled.Pending());
}

}  // namespace watchdog_test
}  // namespace switchyard::upstream
