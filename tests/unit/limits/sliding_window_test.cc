#include "limits/sliding_window.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace switchyard::limits {
namespace sliding_window_test {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;

// Every time is injected: an arbitrary steady-clock instant plus a duration. Nothing sleeps.
// kT0 is a whole number of hours, so it starts a slot for every slot width used here.
const TimePoint kT0 = TimePoint(std::chrono::hours(1'000));
TimePoint At(nanoseconds offset) { return kT0 + offset; }

// Whether TryAdd would admit `cost` at `when`, without changing `window`.
bool WouldAdmit(SlidingWindow window, std::int64_t cost, std::int64_t limit, TimePoint when) {
    return window.TryAdd(cost, limit, when).admitted;
}

TEST(SlidingWindowTest, AdmitsUpToTheLimitThenRejectsForAWindowPlusOneSlot) {
    SlidingWindow window(minutes(1), 600);  // slots of 100 ms
    for (int i = 0; i < 5; ++i) {
        const SlidingWindow::Decision d = window.TryAdd(1, 5, kT0);
        EXPECT_TRUE(d.admitted) << i;
        EXPECT_EQ(d.retry_after, milliseconds(0));
    }
    EXPECT_EQ(window.Used(kT0), 5);
    // The five sit in the slot [0, 100 ms). The count spans the current slot plus the 600 before
    // it, so that slot is counted until the slot starting at 60.1 s: the sixth waits 60.1 s, one
    // slot longer than the window (the price of never exceeding the limit in any real window).
    const SlidingWindow::Decision sixth = window.TryAdd(1, 5, kT0);
    EXPECT_FALSE(sixth.admitted);
    EXPECT_EQ(sixth.retry_after, milliseconds(60'100));
    EXPECT_EQ(window.Used(kT0), 5);  // a rejection adds nothing
    // Asked later, the wait is to the same instant.
    EXPECT_EQ(window.TryAdd(1, 5, At(milliseconds(30))).retry_after, milliseconds(60'070));
    EXPECT_EQ(window.TryAdd(1, 5, At(seconds(45))).retry_after, milliseconds(15'100));
    EXPECT_EQ(window.Used(At(milliseconds(60'099))), 5);
    EXPECT_FALSE(WouldAdmit(window, 1, 5, At(milliseconds(60'099))));
    EXPECT_EQ(window.Used(At(milliseconds(60'100))), 0);
    EXPECT_TRUE(WouldAdmit(window, 5, 5, At(milliseconds(60'100))));
}

TEST(SlidingWindowTest, RetryAfterWaitsOnlyForTheSlotsThatMustExpire) {
    SlidingWindow window(minutes(1), 600);
    ASSERT_TRUE(window.TryAdd(1, 5, kT0).admitted);
    ASSERT_TRUE(window.TryAdd(2, 5, At(seconds(10))).admitted);
    ASSERT_TRUE(window.TryAdd(2, 5, At(seconds(20))).admitted);
    EXPECT_EQ(window.Used(At(seconds(30))), 5);
    // A cost of 1 needs only the 1 from t=0 gone: its slot stops counting at 60.1 s.
    EXPECT_EQ(window.TryAdd(1, 5, At(seconds(30))).retry_after, milliseconds(30'100));
    // A cost of 3 needs the 2 from t=10 s gone too: 70.1 s.
    EXPECT_EQ(window.TryAdd(3, 5, At(seconds(30))).retry_after, milliseconds(40'100));
    // A cost of 5 needs everything gone: 80.1 s.
    EXPECT_EQ(window.TryAdd(5, 5, At(seconds(30))).retry_after, milliseconds(50'100));
    EXPECT_EQ(window.Used(At(milliseconds(60'100))), 4);
    EXPECT_EQ(window.Used(At(milliseconds(70'100))), 2);
    EXPECT_EQ(window.Used(At(milliseconds(80'100))), 0);
    EXPECT_FALSE(window.TryAdd(3, 5, At(milliseconds(70'099))).admitted);
    EXPECT_TRUE(window.TryAdd(3, 5, At(milliseconds(70'100))).admitted);
    EXPECT_EQ(window.Used(At(milliseconds(70'100))), 5);
}

TEST(SlidingWindowTest, ACostAboveTheLimitWaitsForAnEmptyWindowThenIsAdmitted) {
    SlidingWindow window(minutes(1), 600);
    EXPECT_TRUE(window.TryAdd(8, 5, kT0).admitted);  // empty window: admitted, not blocked forever
    EXPECT_EQ(window.Used(kT0), 5) << "counts as the limit: it fills the window alone";
    EXPECT_EQ(window.TryAdd(1, 5, kT0).retry_after, milliseconds(60'100));

    SlidingWindow busy(minutes(1), 600);
    ASSERT_TRUE(busy.TryAdd(2, 5, kT0).admitted);
    ASSERT_TRUE(busy.TryAdd(1, 5, At(seconds(20))).admitted);
    const SlidingWindow::Decision d = busy.TryAdd(8, 5, At(seconds(30)));
    EXPECT_FALSE(d.admitted);
    EXPECT_EQ(d.retry_after, milliseconds(50'100));  // until the 1 from t=20 s is gone
    EXPECT_FALSE(busy.TryAdd(8, 5, At(milliseconds(80'099))).admitted);
    EXPECT_TRUE(busy.TryAdd(8, 5, At(milliseconds(80'100))).admitted);
}

// max_tokens: 9223372036854775807 on a key with a TPM limit once wrapped the window negative, and
// the limit stopped applying.
TEST(SlidingWindowTest, AHugeCostNeitherOverflowsNorLiftsTheLimit) {
    SlidingWindow window(minutes(1), 600);
    constexpr std::int64_t kHuge = std::numeric_limits<std::int64_t>::max();
    EXPECT_TRUE(window.TryAdd(kHuge, 1000, kT0).admitted);
    EXPECT_EQ(window.Used(kT0), 1000);
    for (int i = 0; i < 3; ++i) {
        EXPECT_FALSE(window.TryAdd(kHuge, 1000, At(seconds(i))).admitted);
        EXPECT_FALSE(window.TryAdd(1, 1000, At(seconds(i))).admitted);
    }
    EXPECT_EQ(window.Used(At(seconds(3))), 1000);
    EXPECT_TRUE(window.TryAdd(1, 1000, At(milliseconds(60'100))).admitted);
}

TEST(SlidingWindowTest, ANonPositiveLimitAdmitsNothing) {
    SlidingWindow window(minutes(1), 600);
    for (const std::int64_t limit : {0, -1}) {
        const SlidingWindow::Decision d = window.TryAdd(1, limit, kT0);
        EXPECT_FALSE(d.admitted);
        EXPECT_EQ(d.retry_after, milliseconds::max());
    }
    EXPECT_EQ(window.Used(kT0), 0);
}

TEST(SlidingWindowTest, ZeroAndNegativeCostsAddNothing) {
    SlidingWindow window(minutes(1), 600);
    ASSERT_TRUE(window.TryAdd(5, 5, kT0).admitted);
    EXPECT_TRUE(window.TryAdd(0, 5, kT0).admitted);
    EXPECT_TRUE(window.TryAdd(-3, 5, kT0).admitted);
    EXPECT_EQ(window.Used(kT0), 5);
}

TEST(SlidingWindowTest, AdjustReconcilesAnEarlierAdmission) {
    SlidingWindow window(minutes(1), 600);
    ASSERT_TRUE(window.TryAdd(8, 10, kT0).admitted);  // reserved 8 tokens
    window.Adjust(-5, kT0, At(seconds(5)));           // the response used 3
    EXPECT_EQ(window.Used(At(seconds(5))), 3);
    EXPECT_TRUE(window.TryAdd(7, 10, At(seconds(5))).admitted);
    EXPECT_FALSE(window.TryAdd(1, 10, At(seconds(5))).admitted);
    // Usage above the reservation counts in full, even past the limit.
    window.Adjust(4, kT0, At(seconds(5)));
    EXPECT_EQ(window.Used(At(seconds(5))), 14);
    // A slot never goes below zero: the 7 admitted at 5 s are untouched.
    window.Adjust(-100, kT0, At(seconds(5)));
    EXPECT_EQ(window.Used(At(seconds(5))), 7);
    EXPECT_EQ(window.Used(At(milliseconds(65'099))), 7);
    EXPECT_EQ(window.Used(At(milliseconds(65'100))), 0);
}

TEST(SlidingWindowTest, AdjustIgnoresASlotThatLeftTheWindow) {
    SlidingWindow window(minutes(1), 600);
    ASSERT_TRUE(window.TryAdd(3, 10, kT0).admitted);
    ASSERT_TRUE(window.TryAdd(2, 10, At(seconds(5))).admitted);
    // At 60.05 s the slot of t=0 is still counted (the extra slot): the adjustment applies.
    window.Adjust(1, kT0, At(milliseconds(60'050)));
    EXPECT_EQ(window.Used(At(milliseconds(60'050))), 6);
    // At 60.1 s it has left: the adjustment is dropped and only the 2 from t=5 s count.
    window.Adjust(10, kT0, At(milliseconds(60'100)));
    EXPECT_EQ(window.Used(At(milliseconds(60'100))), 2);
    EXPECT_EQ(window.Used(At(milliseconds(65'100))), 0);
}

TEST(SlidingWindowTest, ALongIdleGapClearsEverything) {
    SlidingWindow window(seconds(1), 10);
    ASSERT_TRUE(window.TryAdd(4, 4, kT0).admitted);
    EXPECT_EQ(window.Used(At(seconds(3'600))), 0);
    EXPECT_TRUE(window.TryAdd(4, 4, At(seconds(3'600))).admitted);
    EXPECT_FALSE(window.TryAdd(1, 4, At(seconds(3'600))).admitted);
    EXPECT_EQ(window.Used(At(seconds(3'600))), 4);
}

TEST(SlidingWindowTest, TimeRunningBackwardsCountsAsTheLatestTimeSeen) {
    SlidingWindow window(minutes(1), 600);
    ASSERT_TRUE(window.TryAdd(5, 5, At(seconds(10))).admitted);
    // An earlier time cannot make the window forget, and the wait is measured from that time.
    EXPECT_EQ(window.Used(kT0), 5);
    const SlidingWindow::Decision d = window.TryAdd(1, 5, kT0);
    EXPECT_FALSE(d.admitted);
    EXPECT_EQ(d.retry_after, milliseconds(70'100));
    ASSERT_TRUE(window.TryAdd(1, 10, kT0).admitted);  // recorded in the slot of 10 s
    EXPECT_EQ(window.Used(At(milliseconds(70'099))), 6);
    EXPECT_EQ(window.Used(At(milliseconds(70'100))), 0);
}

struct PropertyCase {
    milliseconds window;
    int slots;
    std::int64_t limit;
    nanoseconds max_gap;  // between attempts, uniformly drawn; not aligned to anything
};

// The admitted total within the closed interval [from, to].
std::int64_t AdmittedWithin(const std::vector<TimePoint>& times,
                            const std::vector<std::int64_t>& prefix, TimePoint from, TimePoint to) {
    const auto first = std::lower_bound(times.begin(), times.end(), from) - times.begin();
    const auto last = std::upper_bound(times.begin(), times.end(), to) - times.begin();
    return prefix[static_cast<std::size_t>(last)] - prefix[static_cast<std::size_t>(first)];
}

TEST(SlidingWindowTest, PropertyNoRealWindowExceedsTheLimitAndRetryAfterIsExact) {
    const PropertyCase cases[] = {
        {minutes(1), 600, 100, milliseconds(2'000)},
        {seconds(1), 7, 10, milliseconds(100)},  // 142857143 ns slots: not a divisor of the window
        {seconds(10), 1, 3, milliseconds(3'000)},  // one slot: the count spans two
        {milliseconds(500), 50, 20, milliseconds(20)},
    };
    for (const PropertyCase& c : cases) {
        for (std::uint32_t seed = 1; seed <= 5; ++seed) {
            SCOPED_TRACE(testing::Message() << "window " << c.window.count() << " ms, " << c.slots
                                            << " slots, limit " << c.limit << ", seed " << seed);
            std::mt19937 random(seed);
            std::uniform_int_distribution<std::int64_t> gap(0, c.max_gap.count());
            std::uniform_int_distribution<std::int64_t> small_cost(
                1, std::max<std::int64_t>(1, c.limit / 4));
            std::uniform_int_distribution<std::int64_t> any_cost(1, c.limit);
            std::uniform_int_distribution<int> percent(0, 99);
            const nanoseconds window_ns = c.window;
            // The slot width the class documents: window / slots, rounded up to whole ns.
            const nanoseconds slot((window_ns.count() + c.slots - 1) / c.slots);
            const nanoseconds counted_span = slot * (c.slots + 1);

            SlidingWindow window(c.window, c.slots);
            std::vector<TimePoint> times;         // admissions, in order
            std::vector<std::int64_t> prefix{0};  // prefix[i]: the total of the first i admissions
            int rejected = 0;
            TimePoint now = kT0 + nanoseconds(random() % 1'000'000);
            for (int attempt = 0; attempt < 4'000; ++attempt) {
                const int roll = percent(random);
                if (roll < 20) {
                    // A burst: same instant.
                } else if (roll < 21) {
                    now += 2 * window_ns + nanoseconds(gap(random));  // an idle spell
                } else {
                    now += nanoseconds(gap(random));
                }
                const std::int64_t cost =
                    percent(random) < 10 ? any_cost(random) : small_cost(random);

                // Used counts at least everything in the last window and nothing older than the
                // counted span (`slots` + 1 slots, the current one partly elapsed).
                const std::int64_t used = window.Used(now);
                ASSERT_GE(used, AdmittedWithin(times, prefix, now - window_ns, now));
                ASSERT_LE(used,
                          AdmittedWithin(times, prefix, now - counted_span + nanoseconds(1), now));

                const SlidingWindow before = window;
                const SlidingWindow::Decision d = window.TryAdd(cost, c.limit, now);
                if (d.admitted) {
                    ASSERT_LE(used + cost, c.limit);
                    ASSERT_EQ(d.retry_after, milliseconds(0));
                    times.push_back(now);
                    prefix.push_back(prefix.back() + cost);
                    continue;
                }
                ++rejected;
                ASSERT_GT(used + cost, c.limit);
                ASSERT_GE(d.retry_after, milliseconds(1));
                ASSERT_LE(d.retry_after, std::chrono::ceil<milliseconds>(counted_span));
                // Exact: admitted at now + retry_after, not a millisecond earlier.
                ASSERT_TRUE(WouldAdmit(before, cost, c.limit, now + d.retry_after));
                ASSERT_FALSE(
                    WouldAdmit(before, cost, c.limit, now + d.retry_after - milliseconds(1)));
                // And the rejection changed nothing.
                ASSERT_EQ(window.Used(now), used);
            }
            ASSERT_GT(times.size(), 100u);
            ASSERT_GT(rejected, 100);

            // Every closed interval of length `window` starting or ending at an admission (the
            // busiest interval always starts at one, so this alone is exhaustive)...
            for (const TimePoint t : times) {
                ASSERT_LE(AdmittedWithin(times, prefix, t, t + window_ns), c.limit);
                ASSERT_LE(AdmittedWithin(times, prefix, t - window_ns, t), c.limit);
            }
            // ...and starting at every slot boundary over the run.
            const auto slot_index = [&](TimePoint t) {
                return nanoseconds(t.time_since_epoch()).count() / slot.count();
            };
            for (std::int64_t s = slot_index(times.front() - window_ns);
                 s <= slot_index(times.back()); ++s) {
                const TimePoint from{nanoseconds(s * slot.count())};
                ASSERT_LE(AdmittedWithin(times, prefix, from, from + window_ns), c.limit);
            }
        }
    }
}

}  // namespace sliding_window_test
}  // namespace switchyard::limits
