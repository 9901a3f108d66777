#include "config/key_request.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "config/client_key.h"
#include "core/sha256.h"

namespace switchyard::config {
namespace key_request_test {

constexpr std::string_view kMaster = "test-master-key-0123456789";

// Model groups a and b, the default lanes (interactive, batch), and a master key.
config::Config TestConfig() {
    config::Config config;
    config.server.master_key = config::Secret(std::string(kMaster), "inline");
    config.models.resize(2);
    config.models[0].name = "a";
    config.models[1].name = "b";
    return config;
}

// The key a body asks for; a test failure when it is refused.
KeyRequest Accepted(std::string_view body) {
    auto parsed = ParseKeyRequest(body, TestConfig());
    if (const auto* error = std::get_if<core::LocalError>(&parsed)) {
        ADD_FAILURE() << body << " refused: " << error->message;
        return {};
    }
    return std::get<KeyRequest>(std::move(parsed));
}

// The refusal of a body; a test failure when it is accepted.
core::LocalError Refused(std::string_view body) {
    auto parsed = ParseKeyRequest(body, TestConfig());
    if (const auto* error = std::get_if<core::LocalError>(&parsed)) return *error;
    ADD_FAILURE() << body << " accepted";
    return {};
}

TEST(KeyRequestTest, ANameAloneGetsAGeneratedKeyAndTheDefaults) {
    const KeyRequest request = Accepted(R"({"name": "app"})");
    EXPECT_EQ(request.key.name, "app");
    EXPECT_EQ(request.plaintext.rfind("sk-sy-", 0), 0u);
    EXPECT_EQ(request.key.sha256, core::Sha256Hex(request.plaintext));
    EXPECT_EQ(request.key.lane_name, "interactive");
    EXPECT_EQ(request.key.lane, 0u);
    EXPECT_TRUE(request.key.fallbacks);
    EXPECT_EQ(request.key.stream_mode, std::nullopt);
}

TEST(KeyRequestTest, ReadsEveryField) {
    const KeyRequest request = Accepted(
        R"({"name": "app", "key": "sk-chosen-0123456789", "rpm": 60, "tpm": 1000,
            "monthly_budget": 2.5, "models": ["a", "b"], "lane": "batch", "fallbacks": false,
            "stream_mode": "background", "slow_start_ms": 30000})");
    EXPECT_TRUE(request.plaintext.empty()) << "a chosen key is never echoed";
    EXPECT_EQ(request.key.sha256, core::Sha256Hex("sk-chosen-0123456789"));
    EXPECT_EQ(request.key.rpm, 60);
    EXPECT_EQ(request.key.tpm, 1000);
    EXPECT_DOUBLE_EQ(request.key.monthly_budget, 2.5);
    EXPECT_EQ(request.key.models, (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(request.key.lane_name, "batch");
    EXPECT_EQ(request.key.lane, 1u);
    EXPECT_FALSE(request.key.fallbacks);
    EXPECT_EQ(request.key.stream_mode, config::StreamMode::kBackground);
    EXPECT_EQ(request.key.slow_start, config::Millis(30000));
}

TEST(KeyRequestTest, CountsJustInsideAreAcceptedAndJustOutsideRefused) {
    const std::pair<const char*, std::int64_t> bounds[] = {
        {"rpm", config::kMaxKeyRpm},
        {"tpm", config::kMaxKeyTpm},
        {"slow_start_ms", config::kMaxKeySlowStartMs}};
    for (const auto& [field, max] : bounds) {
        const std::string name(field);
        for (const std::int64_t inside : {std::int64_t{0}, max}) {
            Accepted(R"({"name": "k", ")" + name + "\": " + std::to_string(inside) + "}");
        }
        for (const std::string& outside :
             {std::string("-1"), std::to_string(max + 1), std::string("1e30"),
              std::string("18446744073709551615")}) {
            const core::LocalError error =
                Refused(R"({"name": "k", ")" + name + "\": " + outside + "}");
            EXPECT_EQ(error.kind, core::ErrorKind::kInvalidRequest);
            EXPECT_EQ(error.param, name);
            EXPECT_EQ(error.message, "'" + name + "' must be a whole number from 0 to " +
                                         std::to_string(max) + ".")
                << outside;
        }
        for (const char* not_whole : {"1.5", "\"5\"", "true", "[]"}) {
            const core::LocalError error =
                Refused(R"({"name": "k", ")" + name + "\": " + not_whole + "}");
            EXPECT_EQ(error.param, name);
            EXPECT_EQ(error.message, "'" + name + "' must be a whole number.") << not_whole;
        }
    }
    EXPECT_EQ(Accepted(R"({"name": "k", "rpm": 5.0})").key.rpm, 5) << "a whole double";
}

TEST(KeyRequestTest, MonthlyBudgetNameKeyModelsAndLane) {
    EXPECT_DOUBLE_EQ(Accepted(R"({"name": "k", "monthly_budget": 0})").key.monthly_budget, 0);
    core::LocalError error = Refused(R"({"name": "k", "monthly_budget": -0.01})");
    EXPECT_EQ(error.param, "monthly_budget");
    EXPECT_EQ(error.message, "'monthly_budget' must be a number >= 0.");

    Accepted(R"({"name": ")" + std::string(256, 'n') + "\"}");
    for (const std::string& body :
         {R"({"name": ")" + std::string(257, 'n') + "\"}", std::string(R"({"name": "a b"})"),
          std::string(R"({"name": 1})"), std::string(R"({"rpm": 1})")}) {
        error = Refused(body);
        EXPECT_EQ(error.param, "name");
        EXPECT_EQ(error.message,
                  "'name' must be 1 to 256 visible ASCII characters without spaces, quotes or "
                  "backslashes.");
    }

    EXPECT_TRUE(
        Accepted(R"({"name": "k", "key": ")" + std::string(16, 'k') + "\"}").plaintext.empty());
    error = Refused(R"({"name": "k", "key": ")" + std::string(15, 'k') + "\"}");
    EXPECT_EQ(error.param, "key");
    EXPECT_EQ(error.message,
              "'key' must be at least 16 characters long (or omit it to have one generated).");
    error = Refused(R"({"name": "k", "key": ")" + std::string(kMaster) + "\"}");
    EXPECT_EQ(error.param, "key");
    EXPECT_EQ(error.message,
              "'key' is the master key, which is never limited: it cannot be a client key.");

    error = Refused(R"({"name": "k", "models": ["a", "zzz"]})");
    EXPECT_EQ(error.param, "models");
    EXPECT_EQ(error.message, "'models' names unknown model group 'zzz'.");
    EXPECT_EQ(Refused(R"({"name": "k", "models": [1]})").param, "models");
    EXPECT_EQ(Refused(R"({"name": "k", "models": "a"})").param, "models");

    error = Refused(R"({"name": "k", "lane": "nowhere"})");
    EXPECT_EQ(error.param, "lane");
    EXPECT_EQ(error.message,
              "'lane' names unknown lane 'nowhere' (configured: interactive, batch).");
    EXPECT_EQ(Refused(R"({"name": "k", "lane": 1})").param, "lane");
}

TEST(KeyRequestTest, StreamModeIsOneOfTwo) {
    EXPECT_EQ(Accepted(R"({"name": "k", "stream_mode": "interactive"})").key.stream_mode,
              config::StreamMode::kInteractive);
    EXPECT_EQ(Accepted(R"({"name": "k", "stream_mode": null})").key.stream_mode, std::nullopt);
    for (const char* bad : {R"("Background")", R"("")", "1"}) {
        const core::LocalError error =
            Refused(std::string(R"({"name": "k", "stream_mode": )") + bad + "}");
        EXPECT_EQ(error.param, "stream_mode");
        EXPECT_EQ(error.message, "'stream_mode' must be 'interactive' or 'background'.");
    }
}

TEST(KeyRequestTest, UnknownFieldsAndNonObjectsAreRefused) {
    core::LocalError error = Refused(R"({"name": "k", "colour": 1})");
    EXPECT_EQ(error.kind, core::ErrorKind::kInvalidRequest);
    EXPECT_EQ(error.param, "colour");
    EXPECT_EQ(Refused(R"({"name":)").kind, core::ErrorKind::kMalformedJson);
    EXPECT_EQ(Refused("[]").kind, core::ErrorKind::kMalformedJson);
}

// How a key added on one replica travels to the others: the body reads back as the same key.
TEST(KeyRequestTest, AKeysBodyReadsBackAsTheSameKey) {
    const KeyRequest original = Accepted(
        R"({"name": "app", "key": "app-key-0123456789", "rpm": 60, "tpm": 1000,
            "monthly_budget": 2.5, "models": ["b"], "lane": "batch", "fallbacks": false,
            "stream_mode": "background", "slow_start_ms": 5000})");
    const KeyRequest copy = Accepted(boost::json::serialize(KeyRequestBody(original.key)));
    EXPECT_EQ(copy.plaintext, "") << "a key given by its hash is never generated";
    EXPECT_EQ(copy.key.sha256, core::Sha256Hex("app-key-0123456789"));
    EXPECT_EQ(copy.key.name, "app");
    EXPECT_EQ(copy.key.rpm, 60);
    EXPECT_EQ(copy.key.tpm, 1000);
    EXPECT_EQ(copy.key.monthly_budget, 2.5);
    EXPECT_EQ(copy.key.models, std::vector<std::string>{"b"});
    EXPECT_EQ(copy.key.lane_name, "batch");
    EXPECT_EQ(copy.key.lane, 1u);
    EXPECT_FALSE(copy.key.fallbacks);
    EXPECT_EQ(copy.key.stream_mode, config::StreamMode::kBackground);
    EXPECT_EQ(copy.key.slow_start, config::Millis(5000));
}

TEST(KeyRequestTest, AHashIsSixtyFourHexDigitsAndNotBesideAKey) {
    const std::string upper(64, 'A');
    EXPECT_EQ(Accepted(R"({"name": "h", "key_sha256": ")" + upper + "\"}").key.sha256,
              std::string(64, 'a'));
    EXPECT_EQ(Refused(R"({"name": "h", "key_sha256": "abc"})").param, "key_sha256");
    EXPECT_EQ(Refused(R"({"name": "h", "key_sha256": ")" + std::string(64, 'g') + "\"}").param,
              "key_sha256");
    EXPECT_EQ(Refused(R"({"name": "h", "key_sha256": 5})").param, "key_sha256");
    EXPECT_EQ(Refused(R"({"name": "h", "key": "app-key-0123456789", "key_sha256": ")" +
                      std::string(64, 'a') + "\"}")
                  .param,
              "key_sha256");
}

}  // namespace key_request_test
}  // namespace switchyard::config
