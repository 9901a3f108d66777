#include "core/time_format.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace switchyard::core {
namespace time_format_test {

using namespace std::chrono;

TEST(Rfc3339Test, WritesUtcWithMilliseconds) {
    const sys_time<milliseconds> t = sys_days(year(2026) / November / 29) + hours(14) +
                                     minutes(46) + seconds(27) + milliseconds(123);
    EXPECT_EQ(Rfc3339(t), "2026-11-29T14:46:27.123Z");
    EXPECT_EQ(Rfc3339(system_clock::time_point{}), "1970-01-01T00:00:00.000Z");
    // Leap day, the last millisecond of a year, and the microseconds below a millisecond dropped.
    EXPECT_EQ(Rfc3339(sys_days(year(2024) / February / 29) + hours(23) + microseconds(1999)),
              "2024-02-29T23:00:00.001Z");
    EXPECT_EQ(Rfc3339(sys_days(year(2025) / January / 1) - milliseconds(1)),
              "2024-12-31T23:59:59.999Z");
}

TEST(Rfc3339Test, TheCachedSecondNeverLeaksIntoAnother) {
    const sys_seconds base = sys_days(year(2026) / December / 2) + hours(7);
    // Same second twice (cached), the next second, then back: each written from its own second.
    EXPECT_EQ(Rfc3339(base + milliseconds(5)), "2026-12-02T07:00:00.005Z");
    EXPECT_EQ(Rfc3339(base + milliseconds(900)), "2026-12-02T07:00:00.900Z");
    EXPECT_EQ(Rfc3339(base + seconds(1)), "2026-12-02T07:00:01.000Z");
    EXPECT_EQ(Rfc3339(base), "2026-12-02T07:00:00.000Z");
    // Another thread has its own cache.
    std::string other;
    std::thread([&] { other = Rfc3339(base + hours(1)); }).join();
    EXPECT_EQ(other, "2026-12-02T08:00:00.000Z");
    EXPECT_EQ(Rfc3339(base), "2026-12-02T07:00:00.000Z");
}

TEST(Rfc3339Test, WritesInstantsBeforeTheEpoch) {
    EXPECT_EQ(Rfc3339(sys_days(year(1969) / December / 31) + hours(23) + milliseconds(59'999)),
              "1969-12-31T23:00:59.999Z");
    EXPECT_EQ(Rfc3339(sys_days(year(1900) / March / 1)), "1900-03-01T00:00:00.000Z");
}

}  // namespace time_format_test
}  // namespace switchyard::core
