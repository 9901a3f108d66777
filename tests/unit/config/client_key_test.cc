#include "config/client_key.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "config/config_loader.h"
#include "core/sha256.h"

namespace switchyard::config {
namespace client_key_test {

constexpr std::string_view kMaster = "test-master-key-0123456789";
constexpr std::string_view kPlaintext = "sk-test-0123456789abcdef";

// Model groups a and b, the default lanes (interactive, batch), and a master key.
Config TestConfig() {
    Config config;
    config.server.master_key = Secret(std::string(kMaster), "inline");
    config.models.resize(2);
    config.models[0].name = "a";
    config.models[1].name = "b";
    return config;
}

ClientKey ValidKey() {
    ClientKey key;
    key.name = "app";
    key.sha256 = core::Sha256Hex(kPlaintext);
    return key;
}

std::vector<std::string> Fields(const std::vector<ClientKeyProblem>& problems) {
    std::vector<std::string> out;
    for (const auto& p : problems) out.push_back(p.field);
    return out;
}

TEST(ClientKeyTest, ParsesExactlyTheTwoStreamModes) {
    EXPECT_EQ(ParseStreamMode("interactive"), StreamMode::kInteractive);
    EXPECT_EQ(ParseStreamMode("background"), StreamMode::kBackground);
    for (const std::string_view other :
         {"", "Interactive", "BACKGROUND", " background", "background ", "bg", "stream"}) {
        EXPECT_EQ(ParseStreamMode(other), std::nullopt) << "'" << other << "'";
    }
}

TEST(ClientKeyTest, NamesEachStreamModeAsItIsParsed) {
    EXPECT_EQ(Name(StreamMode::kInteractive), "interactive");
    EXPECT_EQ(Name(StreamMode::kBackground), "background");
    for (const StreamMode mode : {StreamMode::kInteractive, StreamMode::kBackground}) {
        EXPECT_EQ(ParseStreamMode(Name(mode)), mode);
    }
}

TEST(ClientKeyTest, AKeyTextNeedsSixteenCharacters) {
    EXPECT_EQ(ValidateKeyText(std::string(kMinKeyLength, 'k')), std::nullopt);
    const auto problem = ValidateKeyText(std::string(kMinKeyLength - 1, 'k'));
    ASSERT_TRUE(problem);
    EXPECT_EQ(problem->field, "key");
    EXPECT_EQ(problem->message, "'key' must be at least 16 characters long");
}

TEST(ClientKeyTest, TheDefaultsAreValid) {
    EXPECT_TRUE(ValidateClientKey(ValidKey(), TestConfig()).empty());
}

TEST(ClientKeyTest, EachCountIsBoundedFromZeroToItsMaximum) {
    const Config config = TestConfig();
    struct Bound {
        const char* field;
        std::int64_t max;
        void (*set)(ClientKey&, std::int64_t);
    };
    const Bound bounds[] = {
        {"rpm", kMaxKeyRpm, [](ClientKey& k, std::int64_t v) { k.rpm = v; }},
        {"tpm", kMaxKeyTpm, [](ClientKey& k, std::int64_t v) { k.tpm = v; }},
        {"slow_start_ms", kMaxKeySlowStartMs,
         [](ClientKey& k, std::int64_t v) { k.slow_start = Millis(v); }},
    };
    for (const Bound& bound : bounds) {
        for (const std::int64_t inside : {std::int64_t{0}, bound.max}) {
            ClientKey key = ValidKey();
            bound.set(key, inside);
            EXPECT_TRUE(ValidateClientKey(key, config).empty()) << bound.field << " " << inside;
        }
        for (const std::int64_t outside : {std::int64_t{-1}, bound.max + 1}) {
            ClientKey key = ValidKey();
            bound.set(key, outside);
            const auto problems = ValidateClientKey(key, config);
            ASSERT_EQ(problems.size(), 1u) << bound.field << " " << outside;
            EXPECT_EQ(problems[0].field, bound.field);
            EXPECT_EQ(problems[0].message, "'" + std::string(bound.field) +
                                               "' must be a whole number from 0 to " +
                                               std::to_string(bound.max));
        }
    }
    EXPECT_EQ(kMaxKeyRpm, 1'000'000'000);
    EXPECT_EQ(kMaxKeyTpm, 1'000'000'000'000);
    EXPECT_EQ(kMaxKeySlowStartMs, 86'400'000);
}

TEST(ClientKeyTest, AMonthlyBudgetIsAtLeastZero) {
    const Config config = TestConfig();
    ClientKey key = ValidKey();
    for (const double inside : {0.0, 0.01, 1e12}) {
        key.monthly_budget = inside;
        EXPECT_TRUE(ValidateClientKey(key, config).empty()) << inside;
    }
    for (const double outside : {-0.01, -1.0, std::nan("")}) {
        key.monthly_budget = outside;
        const auto problems = ValidateClientKey(key, config);
        ASSERT_EQ(problems.size(), 1u) << outside;
        EXPECT_EQ(problems[0].field, "monthly_budget");
        EXPECT_EQ(problems[0].message, "'monthly_budget' must be a number >= 0");
    }
}

TEST(ClientKeyTest, ANameIsASafeNameOfAtMost256Characters) {
    const Config config = TestConfig();
    ClientKey key = ValidKey();
    for (const std::string& inside :
         {std::string("a"), std::string(256, 'n'), std::string("team:a+b/c")}) {
        key.name = inside;
        EXPECT_TRUE(ValidateClientKey(key, config).empty()) << inside;
    }
    for (const std::string& outside :
         {std::string(), std::string(257, 'n'), std::string("a b"), std::string("a\"b"),
          std::string("a\\b"), std::string("a\nb")}) {
        key.name = outside;
        const auto problems = ValidateClientKey(key, config);
        ASSERT_EQ(problems.size(), 1u) << outside;
        EXPECT_EQ(problems[0].field, "name");
        EXPECT_EQ(problems[0].message,
                  "'name' must be 1 to 256 visible ASCII characters without spaces, quotes or "
                  "backslashes");
    }
}

TEST(ClientKeyTest, TheMasterKeyIsNoClientKey) {
    Config config = TestConfig();
    ClientKey key = ValidKey();
    key.sha256 = core::Sha256Hex(kMaster);
    const auto problems = ValidateClientKey(key, config);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].field, "key");
    EXPECT_NE(problems[0].message.find("is the master key"), std::string::npos);
    config.server.master_key = Secret();
    EXPECT_TRUE(ValidateClientKey(key, config).empty()) << "without a master key it is any key";
}

TEST(ClientKeyTest, ModelsAndTheLaneMustBeThoseOfTheConfig) {
    const Config config = TestConfig();
    ClientKey key = ValidKey();
    key.models = {"a", "b"};
    key.lane_name = "batch";
    EXPECT_TRUE(ValidateClientKey(key, config).empty());
    key.models = {"a", "zzz", "yyy"};
    key.lane_name = "nowhere";
    const auto problems = ValidateClientKey(key, config);
    EXPECT_EQ(Fields(problems), (std::vector<std::string>{"models", "models", "lane"}));
    ASSERT_EQ(problems.size(), 3u);
    EXPECT_EQ(problems[0].message, "'models' names unknown model group 'zzz'");
    EXPECT_EQ(problems[1].message, "'models' names unknown model group 'yyy'");
    EXPECT_EQ(problems[2].message,
              "'lane' names unknown lane 'nowhere' (configured: interactive, batch)");
}

TEST(ClientKeyTest, EveryProblemIsListedInFieldOrder) {
    ClientKey key;
    key.name = "";
    key.sha256 = core::Sha256Hex(kMaster);
    key.rpm = -1;
    key.tpm = -1;
    key.slow_start = Millis(-1);
    key.monthly_budget = -1;
    key.models = {"zzz"};
    key.lane_name = "nowhere";
    EXPECT_EQ(Fields(ValidateClientKey(key, TestConfig())),
              (std::vector<std::string>{"name", "key", "rpm", "tpm", "slow_start_ms",
                                        "monthly_budget", "models", "lane"}));
}

// The config file's keys go through the same bounds: each value just inside loads, just outside
// is a problem at its line.
class ClientKeyYamlTest : public ::testing::Test {
  protected:
    // A config whose one key (line 6) is `name`, its key text from the environment, and `fields`.
    static LoadResult Load(const std::string& fields,
                           const std::string& key = std::string(kPlaintext),
                           const std::string& name = "k") {
        const std::string yaml = R"(server: {master_key: os.environ/MASTER}
models:
  - name: a
    deployments: [{model: m, api_base: "http://127.0.0.1:1/v1"}]
keys:
  - {name: )" + name + ", key: os.environ/K" +
                                 fields + R"(}
)";
        return LoadConfigText(yaml, "k.yaml",
                              [key](std::string_view name) -> std::optional<std::string> {
                                  if (name == "MASTER") return std::string(kMaster);
                                  if (name == "K") return key;
                                  return std::nullopt;
                              });
    }

    static std::string Problems(const LoadResult& result) {
        std::string out;
        for (const auto& p : result.problems) out += p.ToString() + "\n";
        return out;
    }

    // Exactly one problem, at the key's line, saying `message`.
    static void ExpectOneProblem(const LoadResult& result, std::string_view message) {
        ASSERT_EQ(result.problems.size(), 1u) << Problems(result);
        EXPECT_EQ(result.problems[0].line, 6);
        EXPECT_EQ(result.problems[0].message, message);
    }
};

TEST_F(ClientKeyYamlTest, CountsJustInsideLoadAndJustOutsideAreRefused) {
    const std::pair<const char*, std::int64_t> bounds[] = {
        {"rpm", kMaxKeyRpm}, {"tpm", kMaxKeyTpm}, {"slow_start_ms", kMaxKeySlowStartMs}};
    for (const auto& [field, max] : bounds) {
        for (const std::int64_t inside : {std::int64_t{0}, max}) {
            const LoadResult result =
                Load(", " + std::string(field) + ": " + std::to_string(inside));
            EXPECT_TRUE(result.config) << field << " " << inside << "\n" << Problems(result);
        }
        for (const std::int64_t outside : {std::int64_t{-1}, max + 1}) {
            SCOPED_TRACE(std::string(field) + " " + std::to_string(outside));
            ExpectOneProblem(Load(", " + std::string(field) + ": " + std::to_string(outside)),
                             "'" + std::string(field) + "' must be a whole number from 0 to " +
                                 std::to_string(max));
        }
    }
    const LoadResult ok = Load(", rpm: 1000000000, tpm: 1000000000000, slow_start_ms: 86400000");
    ASSERT_TRUE(ok.config) << Problems(ok);
    EXPECT_EQ(ok.config->keys[0].rpm, kMaxKeyRpm);
    EXPECT_EQ(ok.config->keys[0].tpm, kMaxKeyTpm);
    EXPECT_EQ(ok.config->keys[0].slow_start, Millis(kMaxKeySlowStartMs));
}

TEST_F(ClientKeyYamlTest, AnUnreadableCountIsReportedOnce) {
    ExpectOneProblem(Load(", rpm: many"), "'rpm' must be an integer");
    ExpectOneProblem(Load("", std::string(kPlaintext), "[x]"), "'name' must be a string");
}

TEST_F(ClientKeyYamlTest, MonthlyBudgetNameKeyModelsAndLane) {
    EXPECT_TRUE(Load(", monthly_budget: 0").config);
    ExpectOneProblem(Load(", monthly_budget: -0.01"), "'monthly_budget' must be a number >= 0");
    EXPECT_TRUE(Load("", std::string(kPlaintext), std::string(256, 'n')).config);
    ExpectOneProblem(Load("", std::string(kPlaintext), std::string(257, 'n')),
                     "'name' must be 1 to 256 visible ASCII characters without spaces, quotes "
                     "or backslashes");
    EXPECT_TRUE(Load("", std::string(16, 'k')).config);
    ExpectOneProblem(Load("", std::string(15, 'k')), "'key' must be at least 16 characters long");
    ExpectOneProblem(Load("", std::string(kMaster)),
                     "'key' is the master key, which is never limited: it cannot be a client key");
    EXPECT_TRUE(Load(", models: [a], lane: batch").config);
    ExpectOneProblem(Load(", models: [zzz]"), "'models' names unknown model group 'zzz'");
    ExpectOneProblem(Load(", lane: nowhere"),
                     "'lane' names unknown lane 'nowhere' (configured: interactive, batch)");
}

TEST_F(ClientKeyYamlTest, StreamModeIsOneOfTwo) {
    const LoadResult background = Load(", stream_mode: background");
    ASSERT_TRUE(background.config) << Problems(background);
    EXPECT_EQ(background.config->keys[0].stream_mode, StreamMode::kBackground);
    ExpectOneProblem(Load(", stream_mode: Background"),
                     "'stream_mode' must be 'interactive' or 'background'");
}

}  // namespace client_key_test
}  // namespace switchyard::config
