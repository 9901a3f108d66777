#include "answers/request_key.h"

#include <gtest/gtest.h>

namespace switchyard::answers {
namespace request_key_test {

TEST(RequestKeyTest, CanonicalJsonSortsMembersAndDropsWhitespaceAndWhoAsks) {
    EXPECT_EQ(CanonicalJson(R"({"b": 1, "a": [ {"y":2,"x":1} ], "user": "u", "metadata": {}})"),
              R"({"a":[{"x":1,"y":2}],"b":1})");
    // Only the top level's `user` is who asks; a nested one is content.
    EXPECT_EQ(CanonicalJson(R"({"m":{"user":"x"}})"), R"({"m":{"user":"x"}})");
}

TEST(RequestKeyTest, OneNumberHasOneSpelling) {
    EXPECT_EQ(CanonicalJson(R"({"t":1.0})"), CanonicalJson(R"({"t":1})"));
    EXPECT_EQ(CanonicalJson(R"({"t":1e0})"), CanonicalJson(R"({"t":1})"));
    EXPECT_NE(CanonicalJson(R"({"t":0.5})"), CanonicalJson(R"({"t":1})"));
    EXPECT_EQ(CanonicalJson(R"({"t":1e17})"), CanonicalJson(R"({"t":100000000000000000})"));
}

TEST(RequestKeyTest, IntegersBeyondADoubleKeepTheirDigits) {
    // A seed of 2^53 + 1 is another request than one of 2^53 (a double cannot tell them apart).
    EXPECT_NE(CanonicalJson(R"({"seed":9007199254740993})"),
              CanonicalJson(R"({"seed":9007199254740992})"));
    EXPECT_EQ(CanonicalJson(R"({"seed":9007199254740993})"), R"({"seed":9007199254740993})");
    EXPECT_EQ(CanonicalJson(R"({"seed":18446744073709551615})"),
              R"({"seed":18446744073709551615})");
}

TEST(RequestKeyTest, NumbersBeyondADoubleAreNoJsonToKey) {
    EXPECT_EQ(CanonicalJson(R"({"t":1e400})"), std::nullopt);
    EXPECT_EQ(CanonicalJson(R"({"t":0e777})"), CanonicalJson(R"({"t":0})"));
}

TEST(RequestKeyTest, TheCacheKeySeparatesGroupsRoutesScopesAndAnythingAsked) {
    const std::string body = R"({"model":"m","messages":[{"role":"user","content":"hi"}]})";
    const auto key = CacheKey("g", "/v1/chat/completions", "key:a", body);
    ASSERT_TRUE(key);
    EXPECT_EQ(key, CacheKey("g", "/v1/chat/completions", "key:a",
                            R"({"messages":[{"content":"hi","role":"user"}],"model":"m"})"));
    EXPECT_NE(key, CacheKey("h", "/v1/chat/completions", "key:a", body));
    EXPECT_NE(key, CacheKey("g", "/v1/messages", "key:a", body));
    EXPECT_NE(key, CacheKey("g", "/v1/chat/completions", "key:b", body));
    EXPECT_NE(
        key,
        CacheKey("g", "/v1/chat/completions", "key:a",
                 R"({"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]})"));
    EXPECT_FALSE(CacheKey("g", "/v1/chat/completions", "", "[1,2]"));
    EXPECT_FALSE(CacheKey("g", "/v1/chat/completions", "", "{not json"));
}

TEST(RequestKeyTest, TheFingerprintIsOfTheExactBytesAndRoute) {
    EXPECT_EQ(Fingerprint("/v1/chat/completions", "{}"), Fingerprint("/v1/chat/completions", "{}"));
    EXPECT_NE(Fingerprint("/v1/chat/completions", "{}"), Fingerprint("/v1/messages", "{}"));
    EXPECT_NE(Fingerprint("/v1/chat/completions", "{}"),
              Fingerprint("/v1/chat/completions", "{ }"));
    EXPECT_EQ(Fingerprint("/", "").size(), 64u);
}

}  // namespace request_key_test
}  // namespace switchyard::answers
