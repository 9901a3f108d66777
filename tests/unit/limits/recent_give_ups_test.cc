#include "limits/recent_give_ups.h"

#include <gtest/gtest.h>

#include <string>

namespace switchyard::limits {
namespace recent_give_ups_test {

using std::chrono::milliseconds;
using TimePoint = RecentGiveUps::TimePoint;

const TimePoint kT0{std::chrono::hours(1)};

TEST(RecentGiveUpsTest, TheSameRequestOfTheSameClientWithinTheWindowIsARetry) {
    RecentGiveUps memory(100, milliseconds(60'000));
    const auto request = RecentGiveUps::Fingerprint("Bearer a", "/v1/chat/completions", "{}");
    EXPECT_TRUE(memory.Empty());
    EXPECT_FALSE(memory.Recent(request, kT0));
    memory.Note(request, kT0);
    EXPECT_FALSE(memory.Empty());
    EXPECT_TRUE(memory.Recent(request, kT0 + milliseconds(59'999)));
    EXPECT_FALSE(memory.Recent(request, kT0 + milliseconds(60'000)));
    // Another client, route or body is another request.
    EXPECT_FALSE(
        memory.Recent(RecentGiveUps::Fingerprint("Bearer b", "/v1/chat/completions", "{}"), kT0));
    EXPECT_FALSE(memory.Recent(RecentGiveUps::Fingerprint("Bearer a", "/v1/messages", "{}"), kT0));
    EXPECT_FALSE(
        memory.Recent(RecentGiveUps::Fingerprint("Bearer a", "/v1/chat/completions", "{ }"), kT0));
    EXPECT_NE(RecentGiveUps::Fingerprint("ab", "c", ""), RecentGiveUps::Fingerprint("a", "bc", ""));
}

TEST(RecentGiveUpsTest, MemoryIsBoundedAndTheOldestIsForgottenFirst) {
    RecentGiveUps memory(10, milliseconds(60'000));
    for (int i = 0; i < 25; ++i) {
        memory.Note(RecentGiveUps::Fingerprint("k", "/r", std::to_string(i)),
                    kT0 + milliseconds(i));
        EXPECT_LE(memory.Size(), 10u);
    }
    EXPECT_FALSE(memory.Recent(RecentGiveUps::Fingerprint("k", "/r", "0"), kT0 + milliseconds(30)));
    EXPECT_TRUE(memory.Recent(RecentGiveUps::Fingerprint("k", "/r", "24"), kT0 + milliseconds(30)));
    // A request noted again stays while its newest note does.
    memory.Note(RecentGiveUps::Fingerprint("k", "/r", "15"), kT0 + milliseconds(40));
    for (int i = 100; i < 108; ++i) {
        memory.Note(RecentGiveUps::Fingerprint("k", "/r", std::to_string(i)),
                    kT0 + milliseconds(50));
    }
    EXPECT_TRUE(memory.Recent(RecentGiveUps::Fingerprint("k", "/r", "15"), kT0 + milliseconds(60)));
    // After the window, notes are forgotten as new ones come.
    memory.Note(RecentGiveUps::Fingerprint("k", "/r", "late"), kT0 + milliseconds(120'000));
    EXPECT_EQ(memory.Size(), 1u);
}

}  // namespace recent_give_ups_test
}  // namespace switchyard::limits
