#include "engine/request_options.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace switchyard::engine {
namespace {

using std::chrono::milliseconds;

struct Headers {
    std::map<std::string, std::string, std::less<>> values;
    HeaderLookup Lookup() const {
        return [this](std::string_view name) -> std::optional<std::string_view> {
            const auto it = values.find(name);
            if (it == values.end()) return std::nullopt;
            return std::string_view(it->second);
        };
    }
};

config::Config Base() {
    config::Config c;
    c.retry.max_attempts = 5;
    c.retry.deadline = milliseconds(45'000);
    c.retry.num_retries = 2;
    c.timeouts.first_token = milliseconds(15'000);
    c.timeouts.chunk = milliseconds(10'000);
    return c;
}

TEST(RequestOptionsTest, TheConfigAppliesWhenNoHeaderSaysOtherwise) {
    const config::Config c = Base();
    const RequestOptions o = ReadRequestOptions(c, Headers{}.Lookup(), nullptr, false, 0);
    EXPECT_EQ(o.deadline, milliseconds(45'000));
    EXPECT_EQ(o.policy.max_attempts, 5);
    EXPECT_EQ(o.policy.stage_retries, 2);
    EXPECT_EQ(o.policy.class_retries.values, c.retry.class_retries.values);
    EXPECT_TRUE(o.policy.retries);
    EXPECT_TRUE(o.fallbacks);
    EXPECT_FALSE(o.background);
    EXPECT_FALSE(o.stream_upstream);
    EXPECT_EQ(o.client_retry_count, 0);
}

TEST(RequestOptionsTest, TimeoutHeadersOverrideWithinTenMinutes) {
    Headers h;
    h.values = {{"x-switchyard-deadline-ms", "1200"},
                {"x-switchyard-timeout-step-ms", "999999999"},
                {"x-switchyard-timeout-chunk-ms", "300"}};
    const RequestOptions o = ReadRequestOptions(Base(), h.Lookup(), nullptr, true, 0);
    EXPECT_EQ(o.deadline, milliseconds(1200));
    EXPECT_EQ(o.timeouts.total, milliseconds(600'000)) << "capped at ten minutes";
    EXPECT_EQ(o.timeouts.chunk, milliseconds(300));
    EXPECT_EQ(o.timeouts.first_token, milliseconds(300)) << "never longer than the chunk budget";
}

TEST(RequestOptionsTest, MalformedHeadersAreIgnored) {
    Headers h;
    h.values = {{"x-switchyard-deadline-ms", "12s"},
                {"x-switchyard-timeout-chunk-ms", "-5"},
                {"x-stainless-retry-count", "one"}};
    const RequestOptions o = ReadRequestOptions(Base(), h.Lookup(), nullptr, false, 0);
    EXPECT_EQ(o.deadline, milliseconds(45'000));
    EXPECT_EQ(o.timeouts.chunk, milliseconds(10'000));
    EXPECT_TRUE(o.policy.retries);
}

TEST(RequestOptionsTest, AClientRetryGetsNoRetriesOfItsOwn) {
    Headers h;
    h.values = {{"x-stainless-retry-count", "1"}};
    const RequestOptions o = ReadRequestOptions(Base(), h.Lookup(), nullptr, false, 0);
    EXPECT_EQ(o.client_retry_count, 1);
    EXPECT_FALSE(o.policy.retries);
    h.values = {{"x-stainless-retry-count", "0"}};
    EXPECT_TRUE(ReadRequestOptions(Base(), h.Lookup(), nullptr, false, 0).policy.retries)
        << "the SDK's first attempt";
}

TEST(RequestOptionsTest, StreamModeFromServerKeyAndHeaderInThatOrder) {
    config::Config c = Base();
    c.server.stream_mode = config::StreamMode::kBackground;
    EXPECT_TRUE(ReadRequestOptions(c, Headers{}.Lookup(), nullptr, true, 0).background);
    config::ClientKey key;
    key.stream_mode = config::StreamMode::kInteractive;
    EXPECT_FALSE(ReadRequestOptions(c, Headers{}.Lookup(), &key, true, 0).background);
    Headers h;
    h.values = {{"x-switchyard-stream-mode", "background"}};
    EXPECT_TRUE(ReadRequestOptions(c, h.Lookup(), &key, true, 0).background);
}

TEST(RequestOptionsTest, LongGenerationsAreStreamedUpstream) {
    const config::Config c = Base();
    EXPECT_FALSE(ReadRequestOptions(c, Headers{}.Lookup(), nullptr, false, 21'333).stream_upstream);
    EXPECT_TRUE(ReadRequestOptions(c, Headers{}.Lookup(), nullptr, false, 21'334).stream_upstream);
    EXPECT_FALSE(ReadRequestOptions(c, Headers{}.Lookup(), nullptr, true, 50'000).stream_upstream)
        << "a streaming request streams anyway";
    Headers h;
    h.values = {{"x-switchyard-stream-upstream", "1"}};
    EXPECT_TRUE(ReadRequestOptions(c, h.Lookup(), nullptr, false, 10).stream_upstream);
}

TEST(RequestOptionsTest, FallbacksOffByHeaderOrKey) {
    Headers h;
    h.values = {{"x-switchyard-no-fallbacks", "1"}};
    EXPECT_FALSE(ReadRequestOptions(Base(), h.Lookup(), nullptr, false, 0).fallbacks);
    config::ClientKey key;
    key.fallbacks = false;
    EXPECT_FALSE(ReadRequestOptions(Base(), Headers{}.Lookup(), &key, false, 0).fallbacks);
}

}  // namespace
}  // namespace switchyard::engine
