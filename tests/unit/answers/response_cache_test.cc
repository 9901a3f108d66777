#include "answers/response_cache.h"

#include <gtest/gtest.h>

namespace switchyard::answers {
namespace response_cache_test {

using std::chrono::milliseconds;
const ResponseCache::TimePoint kStart{std::chrono::seconds(1000)};

std::shared_ptr<const StoredAnswer> Answer(std::string body) {
    auto answer = std::make_shared<StoredAnswer>();
    answer->status = 200;
    answer->body = std::move(body);
    return answer;
}

TEST(ResponseCacheTest, AFindReturnsWhatWasPutWithinItsAge) {
    ResponseCache cache;
    cache.Put("g", "k", Answer("a"), kStart, 10);
    ASSERT_NE(cache.Find("g", "k", kStart + milliseconds(1000), milliseconds(1000)), nullptr);
    EXPECT_EQ(cache.Find("g", "k", kStart, milliseconds(1000))->body, "a");
    EXPECT_EQ(cache.Find("other", "k", kStart, milliseconds(1000)), nullptr);
    EXPECT_EQ(cache.Find("g", "k", kStart + milliseconds(1001), milliseconds(1000)), nullptr);
    EXPECT_EQ(cache.Entries(), 0u);  // an expired entry found is dropped
}

TEST(ResponseCacheTest, EachGroupKeepsItsMostRecentlyUsedEntries) {
    ResponseCache cache;
    cache.Put("g", "a", Answer("a"), kStart, 2);
    cache.Put("g", "b", Answer("b"), kStart, 2);
    ASSERT_NE(cache.Find("g", "a", kStart, milliseconds(1000)), nullptr);  // a used after b
    cache.Put("g", "c", Answer("c"), kStart, 2);
    EXPECT_NE(cache.Find("g", "a", kStart, milliseconds(1000)), nullptr);
    EXPECT_EQ(cache.Find("g", "b", kStart, milliseconds(1000)), nullptr);
    EXPECT_NE(cache.Find("g", "c", kStart, milliseconds(1000)), nullptr);
    cache.Put("h", "a", Answer("other group"), kStart, 1);
    EXPECT_EQ(cache.Entries(), 3u);
    EXPECT_EQ(cache.Bytes(), 1u + 1u + 11u);
}

TEST(ResponseCacheTest, PuttingAKeyAgainReplacesItsAnswer) {
    ResponseCache cache;
    cache.Put("g", "k", Answer("old"), kStart, 5);
    cache.Put("g", "k", Answer("new"), kStart + milliseconds(10), 5);
    EXPECT_EQ(cache.Entries(), 1u);
    EXPECT_EQ(cache.Find("g", "k", kStart + milliseconds(10), milliseconds(1))->body, "new");
}

}  // namespace response_cache_test
}  // namespace switchyard::answers
