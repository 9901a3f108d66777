#include "limits/client_keys.h"

#include <gtest/gtest.h>

#include "core/sha256.h"

namespace switchyard::limits {
namespace client_keys_test {

using std::chrono::milliseconds;
using TimePoint = std::chrono::steady_clock::time_point;
using WallTime = std::chrono::system_clock::time_point;

const TimePoint kT0{std::chrono::hours(1)};
// 2026-11-29T12:00:00Z
const WallTime kWall{std::chrono::seconds(1'795'953'600)};

config::ClientKey Key(std::string name, std::string plaintext) {
    config::ClientKey key;
    key.name = std::move(name);
    key.sha256 = core::Sha256Hex(plaintext);
    return key;
}

TEST(ClientKeysTest, FindsKeysByTheirHashOnly) {
    ClientKeys keys({Key("chat", "sk-chat-0123456789")});
    EXPECT_FALSE(keys.Empty());
    ASSERT_NE(keys.Find("sk-chat-0123456789"), nullptr);
    EXPECT_EQ(keys.Find("sk-chat-0123456789")->Policy().name, "chat");
    EXPECT_EQ(keys.Find("sk-chat-012345678"), nullptr);
    EXPECT_EQ(keys.Find(""), nullptr);
    EXPECT_EQ(core::Sha256Hex("abc"),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(ClientKeysTest, AddRefusesDuplicateNamesAndValuesAndRemoveForgets) {
    ClientKeys keys({});
    EXPECT_TRUE(keys.Empty());
    std::string error;
    const auto added = keys.Add(Key("a", "key-a-0123456789"), error);
    ASSERT_NE(added, nullptr);
    EXPECT_EQ(added, keys.Find("key-a-0123456789"));
    EXPECT_FALSE(keys.Add(Key("a", "key-b-0123456789"), error));
    EXPECT_NE(error.find("named 'a'"), std::string::npos);
    EXPECT_FALSE(keys.Add(Key("b", "key-a-0123456789"), error));
    EXPECT_EQ(keys.List().size(), 1u);
    EXPECT_FALSE(keys.List()[0]->FromConfig());
    EXPECT_TRUE(keys.Remove("a"));
    EXPECT_FALSE(keys.Remove("a"));
    EXPECT_EQ(keys.Find("key-a-0123456789"), nullptr);
    EXPECT_TRUE(keys.Empty());
}

TEST(ClientKeysTest, ReloadReplacesConfigKeysKeepsRuntimeKeysAndUnchangedCounters) {
    ClientKeys keys({Key("stays", "sk-stays-0123456789"), Key("goes", "sk-goes-0123456789")});
    std::string error;
    ASSERT_TRUE(keys.Add(Key("runtime", "sk-runtime-0123456789"), error)) << error;
    const auto before = keys.Find("sk-stays-0123456789");
    config::ClientKey changed = Key("changed", "sk-changed-0123456789");
    changed.rpm = 10;
    keys.Reload({Key("stays", "sk-stays-0123456789"), changed});
    EXPECT_EQ(keys.Find("sk-stays-0123456789"), before) << "same key, same counters";
    EXPECT_EQ(keys.Find("sk-goes-0123456789"), nullptr);
    ASSERT_NE(keys.Find("sk-changed-0123456789"), nullptr);
    EXPECT_EQ(keys.Find("sk-changed-0123456789")->Policy().rpm, 10);
    EXPECT_NE(keys.Find("sk-runtime-0123456789"), nullptr) << "added at runtime: kept";
    EXPECT_EQ(keys.List().size(), 3u);
}

TEST(ClientKeysTest, AReloadThatChangesAKeysLimitsKeepsItsSpend) {
    config::ClientKey key = Key("team", "sk-team-0123456789");
    key.monthly_budget = 10;
    ClientKeys keys({key});
    const auto before = keys.Find("sk-team-0123456789");
    const KeyAdmission admitted = before->Admit(10, kT0, kWall);
    before->Settle(admitted, 10, 7.5, kT0, kWall);
    key.rpm = 100;  // a new limit: a new state, the same counters
    keys.Reload({key});
    const auto after = keys.Find("sk-team-0123456789");
    ASSERT_NE(after, before);
    EXPECT_DOUBLE_EQ(after->Snapshot(kT0, kWall).spent_this_month, 7.5);
}

TEST(ClientKeysTest, AReloadedFileKeyWinsOverARuntimeKeyOfTheSameName) {
    ClientKeys keys({});
    std::string error;
    ASSERT_TRUE(keys.Add(Key("dup", "sk-runtime-0123456789"), error));
    keys.Reload({Key("dup", "sk-file-0123456789")});
    EXPECT_EQ(keys.Find("sk-runtime-0123456789"), nullptr);
    EXPECT_NE(keys.Find("sk-file-0123456789"), nullptr);
    EXPECT_EQ(keys.List().size(), 1u);
}

TEST(ClientKeyStateTest, RpmHoldsExactlyPerWindowWithAnExactRetryAfter) {
    config::ClientKey policy = Key("k", "x");
    policy.rpm = 3;
    ClientKeyState key(policy, true);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(key.Admit(10, kT0 + milliseconds(i), kWall).refusal, KeyRefusal::kNone);
    }
    const KeyAdmission refused = key.Admit(10, kT0 + milliseconds(5), kWall);
    EXPECT_EQ(refused.refusal, KeyRefusal::kRequests);
    // The three admissions share the window's first slot; it leaves 60.1 s after it began.
    EXPECT_EQ(refused.retry_after, milliseconds(60'100 - 5));
    EXPECT_EQ(
        key.Admit(10, kT0 + milliseconds(5) + refused.retry_after - milliseconds(1), kWall).refusal,
        KeyRefusal::kRequests);
    EXPECT_EQ(key.Admit(10, kT0 + milliseconds(5) + refused.retry_after, kWall).refusal,
              KeyRefusal::kNone);
}

TEST(ClientKeyStateTest, TpmCountsTheEstimateAndSettlesToTheReportedUsage) {
    config::ClientKey policy = Key("k", "x");
    policy.tpm = 1000;
    policy.rpm = 100;
    ClientKeyState key(policy, true);
    const KeyAdmission first = key.Admit(800, kT0, kWall);
    ASSERT_EQ(first.refusal, KeyRefusal::kNone);
    const KeyAdmission second = key.Admit(300, kT0 + milliseconds(1), kWall);
    EXPECT_EQ(second.refusal, KeyRefusal::kTokens);
    // A refusal for tokens takes no request slot.
    EXPECT_EQ(key.Snapshot(kT0 + milliseconds(1), kWall).requests_last_minute, 1);
    // The provider reported 150 tokens: 850 come back.
    key.Settle(first, 150, 0, kT0 + milliseconds(2), kWall);
    EXPECT_EQ(key.Snapshot(kT0 + milliseconds(2), kWall).tokens_last_minute, 150);
    EXPECT_EQ(key.Admit(300, kT0 + milliseconds(3), kWall).refusal, KeyRefusal::kNone);
}

TEST(ClientKeyStateTest, ARequestLargerThanTheWholeTpmIsRefusedEvenOnAnEmptyWindow) {
    config::ClientKey policy = Key("k", "x");
    policy.tpm = 1000;
    ClientKeyState key(policy, true);
    const KeyAdmission refused = key.Admit(1001, kT0, kWall);
    EXPECT_EQ(refused.refusal, KeyRefusal::kTooLarge);
    EXPECT_EQ(key.Snapshot(kT0, kWall).tokens_last_minute, 0);  // counted for nothing
    EXPECT_EQ(key.Snapshot(kT0, kWall).requests_last_minute, 0);
    // The whole limit still fits.
    EXPECT_EQ(key.Admit(1000, kT0 + milliseconds(1), kWall).refusal, KeyRefusal::kNone);
}

TEST(ClientKeyStateTest, AKeyWithoutLimitsStillReportsItsUsage) {
    ClientKeyState key(Key("k", "x"), true);  // no rpm, no tpm
    const KeyAdmission first = key.Admit(1'000'000, kT0, kWall);
    ASSERT_EQ(first.refusal, KeyRefusal::kNone);
    EXPECT_EQ(key.Admit(5, kT0, kWall).refusal, KeyRefusal::kNone);
    const auto usage = key.Snapshot(kT0, kWall);
    EXPECT_EQ(usage.requests_last_minute, 2);
    EXPECT_EQ(usage.tokens_last_minute, 0) << "estimates are not counted without a token limit";
    key.Settle(first, 120, 0, kT0 + milliseconds(1), kWall);
    EXPECT_EQ(key.Snapshot(kT0 + milliseconds(1), kWall).tokens_last_minute, 120);
    EXPECT_EQ(key.Snapshot(kT0 + std::chrono::minutes(2), kWall).requests_last_minute, 0);
}

TEST(ClientKeyStateTest, BudgetStopsTheKeyUntilTheFirstOfNextMonth) {
    config::ClientKey policy = Key("k", "x");
    policy.monthly_budget = 1.0;
    ClientKeyState key(policy, true);
    const KeyAdmission first = key.Admit(10, kT0, kWall);
    ASSERT_EQ(first.refusal, KeyRefusal::kNone);
    key.Settle(first, 10, 0.6, kT0, kWall);
    const KeyAdmission second = key.Admit(10, kT0, kWall);
    ASSERT_EQ(second.refusal, KeyRefusal::kNone);
    key.Settle(second, 10, 0.6, kT0, kWall);
    const KeyAdmission third = key.Admit(10, kT0, kWall);
    EXPECT_EQ(third.refusal, KeyRefusal::kBudget);
    // From 2026-11-29T12:00Z to 2026-12-01T00:00Z: 36 hours.
    EXPECT_EQ(third.retry_after, milliseconds(std::chrono::hours(36)));
    EXPECT_DOUBLE_EQ(key.Snapshot(kT0, kWall).spent_this_month, 1.2);
    // A new month starts with nothing spent.
    const WallTime december = kWall + std::chrono::hours(36);
    EXPECT_EQ(key.Admit(10, kT0, december).refusal, KeyRefusal::kNone);
    EXPECT_DOUBLE_EQ(key.Snapshot(kT0, december).spent_this_month, 0);
}

TEST(ClientKeyStateTest, SlowStartRampsTheKeysLimit) {
    config::ClientKey policy = Key("k", "x");
    policy.rpm = 100;
    policy.slow_start = milliseconds(10'000);
    ClientKeyState key(policy, true);
    // At the start of the ramp 10 % of 100 requests per minute.
    int admitted = 0;
    for (int i = 0; i < 50; ++i) {
        if (key.Admit(1, kT0, kWall).refusal == KeyRefusal::kNone) ++admitted;
    }
    EXPECT_EQ(admitted, 10);
    // After the ramp the full limit applies.
    const TimePoint later = kT0 + milliseconds(10'000);
    for (int i = 0; i < 200; ++i) {
        if (key.Admit(1, later, kWall).refusal == KeyRefusal::kNone) ++admitted;
    }
    EXPECT_EQ(admitted, 100);
}

// A request the fleet's shared window admitted is counted in this replica's windows too, so a
// replica that loses Redis goes on from what it sent, not from zero.
TEST(ClientKeysTest, RecordedAdmissionsCountInTheLocalWindows) {
    config::ClientKey policy = Key("k", "key-k-0123456789");
    policy.rpm = 3;
    policy.tpm = 1000;
    ClientKeyState key(policy, true);
    for (int i = 0; i < 3; ++i) {
        const KeyAdmission recorded = key.Record(200, kT0);
        EXPECT_EQ(recorded.tokens, 200);
        EXPECT_EQ(recorded.at, kT0);
    }
    const ClientKeyState::Usage usage = key.Snapshot(kT0, kWall);
    EXPECT_EQ(usage.requests_last_minute, 3);
    EXPECT_EQ(usage.tokens_last_minute, 600);
    EXPECT_EQ(key.Admit(1, kT0, kWall).refusal, KeyRefusal::kRequests);
}

TEST(ClientKeysTest, RampedLimitsFollowSlowStart) {
    config::ClientKey policy = Key("k", "key-k-0123456789");
    policy.rpm = 100;
    policy.tpm = 10'000;
    policy.slow_start = milliseconds(10'000);
    ClientKeyState key(policy, true);
    const ClientKeyState::Limits fresh = key.RampedLimits(kT0);
    EXPECT_EQ(fresh.rpm, 10);  // an idle key starts at 10 %
    EXPECT_EQ(fresh.tpm, 1'000);
    key.Record(0, kT0);
    const ClientKeyState::Limits later = key.RampedLimits(kT0 + milliseconds(10'000));
    EXPECT_EQ(later.rpm, 100);
    EXPECT_EQ(later.tpm, 10'000);
    config::ClientKey unlimited = Key("u", "key-u-0123456789");
    const ClientKeyState::Limits none = ClientKeyState(unlimited, true).RampedLimits(kT0);
    EXPECT_EQ(none.rpm, 0);
    EXPECT_EQ(none.tpm, 0);
}

TEST(ClientKeyStateTest, MonthTotalsAreTakenWhenChangedAndRestoredOnlyForTheirMonth) {
    ClientKeyState key(Key("m", "sk-m"), true);
    EXPECT_FALSE(key.TakeUnsaved(false));  // nothing counted yet
    const KeyAdmission admitted = key.Admit(10, kT0, kWall);
    key.Settle(admitted, 40, 2.5, kT0, kWall);
    const auto totals = key.TakeUnsaved(false);
    ASSERT_TRUE(totals);
    EXPECT_DOUBLE_EQ(totals->spent, 2.5);
    EXPECT_EQ(totals->tokens, 40);
    EXPECT_EQ(totals->requests, 1);
    EXPECT_FALSE(key.TakeUnsaved(false));  // unchanged since
    EXPECT_TRUE(key.TakeUnsaved(true));    // after a failed write: all again

    // At start, the stored month is this month's spend; an older month's is history.
    ClientKeyState restarted(Key("m", "sk-m"), true);
    restarted.Restore(*totals, kWall);
    ClientKeyState::MonthTotals old = *totals;
    old.month -= 1;
    restarted.Restore(old, kWall);
    const auto usage = restarted.Snapshot(kT0, kWall);
    EXPECT_DOUBLE_EQ(usage.spent_this_month, 2.5);
    EXPECT_EQ(usage.tokens_this_month, 40);
    EXPECT_EQ(usage.requests_this_month, 1);
}

}  // namespace client_keys_test
}  // namespace switchyard::limits
