#include "engine/request_options.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace switchyard::engine {
namespace request_options_test {

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

// The options of a request that is not refused.
RequestOptions Read(const config::Config& config, const HeaderLookup& header,
                    const config::ClientKey* key, bool stream, std::int64_t max_tokens) {
    auto read = ReadRequestOptions(config, header, key, stream, max_tokens);
    if (const auto* error = std::get_if<core::LocalError>(&read)) {
        ADD_FAILURE() << "refused: " << error->message;
        return {};
    }
    return std::get<RequestOptions>(read);
}

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
    const RequestOptions o = Read(c, Headers{}.Lookup(), nullptr, false, 0);
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
    const RequestOptions o = Read(Base(), h.Lookup(), nullptr, true, 0);
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
    const RequestOptions o = Read(Base(), h.Lookup(), nullptr, false, 0);
    EXPECT_EQ(o.deadline, milliseconds(45'000));
    EXPECT_EQ(o.timeouts.chunk, milliseconds(10'000));
    EXPECT_TRUE(o.policy.retries);
}

TEST(RequestOptionsTest, AClientRetryGetsNoRetriesOfItsOwn) {
    Headers h;
    h.values = {{"x-stainless-retry-count", "1"}};
    const RequestOptions o = Read(Base(), h.Lookup(), nullptr, false, 0);
    EXPECT_EQ(o.client_retry_count, 1);
    EXPECT_FALSE(o.policy.retries);
    h.values = {{"x-stainless-retry-count", "0"}};
    EXPECT_TRUE(Read(Base(), h.Lookup(), nullptr, false, 0).policy.retries)
        << "the SDK's first attempt";
}

TEST(RequestOptionsTest, StreamModeFromServerKeyAndHeaderInThatOrder) {
    config::Config c = Base();
    c.server.stream_mode = config::StreamMode::kBackground;
    EXPECT_TRUE(Read(c, Headers{}.Lookup(), nullptr, true, 0).background);
    config::ClientKey key;
    key.stream_mode = config::StreamMode::kInteractive;
    EXPECT_FALSE(Read(c, Headers{}.Lookup(), &key, true, 0).background);
    Headers h;
    h.values = {{"x-switchyard-stream-mode", "background"}};
    EXPECT_TRUE(Read(c, h.Lookup(), &key, true, 0).background);
}

TEST(RequestOptionsTest, EachStreamModeHeaderValueOverridesTheKey) {
    config::Config c = Base();
    config::ClientKey key;
    key.stream_mode = config::StreamMode::kBackground;
    Headers h;
    h.values = {{"x-switchyard-stream-mode", "interactive"}};
    EXPECT_FALSE(Read(c, h.Lookup(), &key, true, 0).background);
    h.values = {{"x-switchyard-stream-mode", "background"}};
    EXPECT_TRUE(Read(c, h.Lookup(), nullptr, true, 0).background);
}

TEST(RequestOptionsTest, AnUnknownStreamModeHeaderIsAnInvalidRequestNamingTheHeader) {
    for (const char* value : {"", "Background", "bg", "background ", "interactive,background"}) {
        Headers h;
        h.values = {{"x-switchyard-stream-mode", value}};
        const auto read = ReadRequestOptions(Base(), h.Lookup(), nullptr, true, 0);
        const auto* error = std::get_if<core::LocalError>(&read);
        ASSERT_NE(error, nullptr) << "'" << value << "' was accepted";
        EXPECT_EQ(error->kind, core::ErrorKind::kInvalidRequest);
        EXPECT_EQ(error->param, "x-switchyard-stream-mode");
        EXPECT_NE(error->message.find("x-switchyard-stream-mode"), std::string::npos)
            << error->message;
        EXPECT_NE(error->message.find("'interactive' or 'background'"), std::string::npos)
            << error->message;
    }
    Headers h;
    h.values = {{"x-switchyard-stream-mode", "bad\"value\r"}};
    const auto read = ReadRequestOptions(Base(), h.Lookup(), nullptr, true, 0);
    ASSERT_TRUE(std::holds_alternative<core::LocalError>(read));
    EXPECT_NE(std::get<core::LocalError>(read).message.find("'bad%22value%0D'"), std::string::npos)
        << "the value is echoed printable: " << std::get<core::LocalError>(read).message;
}

TEST(RequestOptionsTest, LongGenerationsAreStreamedUpstream) {
    const config::Config c = Base();
    EXPECT_FALSE(Read(c, Headers{}.Lookup(), nullptr, false, 21'333).stream_upstream);
    EXPECT_TRUE(Read(c, Headers{}.Lookup(), nullptr, false, 21'334).stream_upstream);
    EXPECT_FALSE(Read(c, Headers{}.Lookup(), nullptr, true, 50'000).stream_upstream)
        << "a streaming request streams anyway";
    Headers h;
    h.values = {{"x-switchyard-stream-upstream", "1"}};
    EXPECT_TRUE(Read(c, h.Lookup(), nullptr, false, 10).stream_upstream);
}

TEST(RequestOptionsTest, FallbacksOffByHeaderOrKey) {
    Headers h;
    h.values = {{"x-switchyard-no-fallbacks", "1"}};
    EXPECT_FALSE(Read(Base(), h.Lookup(), nullptr, false, 0).fallbacks);
    config::ClientKey key;
    key.fallbacks = false;
    EXPECT_FALSE(Read(Base(), Headers{}.Lookup(), &key, false, 0).fallbacks);
}

TEST(RequestOptionsTest, ResidencyFromTheKeyAndTheHeaderNarrowsToBoth) {
    const Headers none;
    EXPECT_FALSE(Read(Base(), none.Lookup(), nullptr, false, 0).residency) << "no constraint";
    config::ClientKey key;
    key.residency = {"eu", "us"};
    const auto from_key = Read(Base(), none.Lookup(), &key, false, 0).residency;
    ASSERT_TRUE(from_key);
    EXPECT_EQ(*from_key, (std::vector<std::string>{"eu", "us"}));
    Headers eu;
    eu.values["x-switchyard-residency"] = "EU";
    const auto both = Read(Base(), eu.Lookup(), &key, false, 0).residency;
    ASSERT_TRUE(both);
    EXPECT_EQ(*both, (std::vector<std::string>{"eu"}));
    Headers apac;
    apac.values["x-switchyard-residency"] = "apac";
    const auto neither = Read(Base(), apac.Lookup(), &key, false, 0).residency;
    ASSERT_TRUE(neither);
    EXPECT_TRUE(neither->empty());
}

TEST(RequestOptionsTest, AMalformedResidencyHeaderIsAnInvalidRequestNamingIt) {
    Headers h;
    h.values["x-switchyard-residency"] = "eu;us";
    const auto read = ReadRequestOptions(Base(), h.Lookup(), nullptr, false, 0);
    const auto* error = std::get_if<core::LocalError>(&read);
    ASSERT_NE(error, nullptr);
    EXPECT_EQ(error->kind, core::ErrorKind::kInvalidRequest);
    EXPECT_NE(error->message.find("x-switchyard-residency"), std::string::npos);
}

}  // namespace request_options_test
}  // namespace switchyard::engine
