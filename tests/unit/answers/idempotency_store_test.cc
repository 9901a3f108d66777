#include "answers/idempotency_store.h"

#include <gtest/gtest.h>

namespace switchyard::answers {
namespace idempotency_store_test {

using std::chrono::milliseconds;
using TimePoint = IdempotencyStore::TimePoint;

const TimePoint kStart{std::chrono::seconds(1000)};

std::shared_ptr<const StoredAnswer> Answer(std::size_t body_bytes) {
    auto answer = std::make_shared<StoredAnswer>();
    answer->status = 200;
    answer->headers = "Content-Type: application/json\r\n";
    answer->body.assign(body_bytes, 'x');
    return answer;
}

TEST(IdempotencyStoreTest, TheFirstClaimRunsADuplicateWaitsThenGetsTheAnswer) {
    IdempotencyStore store(1 << 20);
    EXPECT_EQ(store.Claim("k", "t", "fp", kStart, milliseconds(5000)).state, KeyState::kClaimed);
    EXPECT_EQ(store.Claim("k", "t", "fp", kStart, milliseconds(5000)).state, KeyState::kInFlight);
    const auto answer = Answer(10);
    store.Complete("k", answer, kStart + milliseconds(60'000));
    const KeyLookup found =
        store.Claim("k", "t", "fp", kStart + milliseconds(1), milliseconds(5000));
    EXPECT_EQ(found.state, KeyState::kDone);
    EXPECT_EQ(found.answer, answer);
}

TEST(IdempotencyStoreTest, AnotherBodyWithTheKeyIsAMismatchWhetherRunningOrDone) {
    IdempotencyStore store(1 << 20);
    store.Claim("k", "t", "fp", kStart, milliseconds(5000));
    EXPECT_EQ(store.Claim("k", "t", "other", kStart, milliseconds(5000)).state,
              KeyState::kMismatch);
    store.Complete("k", Answer(1), kStart + milliseconds(60'000));
    EXPECT_EQ(store.Claim("k", "t", "other", kStart, milliseconds(5000)).state,
              KeyState::kMismatch);
}

TEST(IdempotencyStoreTest, ARunWithoutAKeptAnswerIsUnavailableAndAReleaseFreesTheKey) {
    IdempotencyStore store(1 << 20);
    store.Claim("ran", "t", "fp", kStart, milliseconds(5000));
    store.Complete("ran", nullptr, kStart + milliseconds(60'000));
    EXPECT_EQ(store.Claim("ran", "t", "fp", kStart, milliseconds(5000)).state,
              KeyState::kUnavailable);
    store.Claim("failed", "t", "fp", kStart, milliseconds(5000));
    store.Release("failed");
    EXPECT_EQ(store.Claim("failed", "t", "fp", kStart, milliseconds(5000)).state,
              KeyState::kClaimed);
}

TEST(IdempotencyStoreTest, AnswersExpireAndAClaimWhoseRequestVanishedExpiresWithItsLease) {
    IdempotencyStore store(1 << 20);
    store.Claim("done", "t", "fp", kStart, milliseconds(5000));
    store.Complete("done", Answer(1), kStart + milliseconds(1000));
    store.Claim("stuck", "t", "fp", kStart, milliseconds(2000));
    EXPECT_EQ(store.Claim("done", "t", "fp", kStart + milliseconds(999), milliseconds(1)).state,
              KeyState::kDone);
    EXPECT_EQ(store.Claim("done", "t", "fp", kStart + milliseconds(1000), milliseconds(1)).state,
              KeyState::kClaimed);
    EXPECT_EQ(store.Claim("stuck", "t", "fp", kStart + milliseconds(1999), milliseconds(1)).state,
              KeyState::kInFlight);
    EXPECT_EQ(store.Claim("stuck", "t", "fp", kStart + milliseconds(2000), milliseconds(1)).state,
              KeyState::kClaimed);
}

TEST(IdempotencyStoreTest, MemoryStaysUnderItsBoundByDroppingTheAnswersThatExpireFirst) {
    const std::size_t bound = 64 * 1024;
    IdempotencyStore store(bound);
    for (int i = 0; i < 100; ++i) {
        const std::string key = "k" + std::to_string(i);
        store.Claim(key, "t", "fp", kStart, milliseconds(5000));
        store.Complete(key, Answer(2000), kStart + milliseconds(60'000 + i));
        EXPECT_LE(store.Bytes(), bound);
    }
    // The newest are kept, the oldest went.
    EXPECT_EQ(store.Claim("k99", "t", "fp", kStart, milliseconds(1)).state, KeyState::kDone);
    EXPECT_EQ(store.Claim("k0", "t", "fp", kStart, milliseconds(1)).state, KeyState::kClaimed);
}

TEST(IdempotencyStoreTest, ClaimsInFlightAreNeverDroppedForRoom) {
    IdempotencyStore store(8 * 1024);
    store.Claim("running", "t", "fp", kStart, milliseconds(60'000));
    for (int i = 0; i < 50; ++i) {
        const std::string key = "k" + std::to_string(i);
        store.Claim(key, "t", "fp", kStart, milliseconds(5000));
        store.Complete(key, Answer(1000), kStart + milliseconds(10'000));
    }
    EXPECT_EQ(store.Claim("running", "t", "fp", kStart, milliseconds(1)).state,
              KeyState::kInFlight);
}

TEST(IdempotencyStoreTest, AnAnswerLargerThanTheWholeStoreIsNotKeptButTheKeyStillRan) {
    IdempotencyStore store(4 * 1024);
    store.Claim("big", "t", "fp", kStart, milliseconds(5000));
    store.Complete("big", Answer(8 * 1024), kStart + milliseconds(60'000));
    EXPECT_LE(store.Bytes(), 4u * 1024);
    EXPECT_EQ(store.Claim("big", "t", "fp", kStart, milliseconds(1)).state, KeyState::kUnavailable);
}

TEST(IdempotencyStoreTest, OneClientsLargeAnswersNeverDropAnotherClientsKey) {
    // Twelve 900 KB answers of one client in a 10 MiB store: room is made from the client that
    // holds the most, so the other client's key keeps its answer and its retry never runs again.
    IdempotencyStore store(10 << 20);
    store.Claim("b:key", "tenant-b", "fp", kStart, milliseconds(5000));
    store.Complete("b:key", Answer(10'000), kStart + milliseconds(1000));  // expires first
    for (int i = 0; i < 12; ++i) {
        const std::string key = "a:" + std::to_string(i);
        store.Claim(key, "tenant-a", "fp", kStart, milliseconds(5000));
        store.Complete(key, Answer(900 * 1024), kStart + milliseconds(60'000 + i));
        EXPECT_LE(store.Bytes(), 10u << 20);
    }
    EXPECT_EQ(store.Claim("b:key", "tenant-b", "fp", kStart, milliseconds(1)).state,
              KeyState::kDone);
    EXPECT_GT(store.BytesOf("tenant-b"), 10'000u);
    // The heavy client lost its own oldest answers instead.
    EXPECT_EQ(store.Claim("a:0", "tenant-a", "fp", kStart, milliseconds(1)).state,
              KeyState::kClaimed);
    EXPECT_EQ(store.Claim("a:11", "tenant-a", "fp", kStart, milliseconds(1)).state,
              KeyState::kDone);
}

TEST(IdempotencyStoreTest, EveryClientsBytesAreAccountedAndFreed) {
    IdempotencyStore store(1 << 20);
    store.Claim("k", "t", "fp", kStart, milliseconds(5000));
    store.Complete("k", Answer(100), kStart + milliseconds(1000));
    EXPECT_EQ(store.BytesOf("t"), store.Bytes());
    store.Claim("other", "u", "fp", kStart + milliseconds(1000), milliseconds(5000));
    EXPECT_EQ(store.BytesOf("t"), 0u);  // expired
    store.Release("other");
    EXPECT_EQ(store.Bytes(), 0u);
    EXPECT_EQ(store.BytesOf("u"), 0u);
}

}  // namespace idempotency_store_test
}  // namespace switchyard::answers
