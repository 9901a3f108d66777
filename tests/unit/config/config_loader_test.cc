#include "config/config_loader.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "policy/outcome.h"

namespace switchyard::config {
namespace config_loader_test {

EnvLookup FakeEnv(std::map<std::string, std::string> values) {
    return [values = std::move(values)](std::string_view name) -> std::optional<std::string> {
        const auto it = values.find(std::string(name));
        if (it == values.end()) return std::nullopt;
        return it->second;
    };
}

bool HasProblem(const LoadResult& result, int line, std::string_view fragment) {
    for (const auto& p : result.problems) {
        if (p.line == line && p.message.find(fragment) != std::string::npos) return true;
    }
    return false;
}

std::string AllProblems(const LoadResult& result) {
    std::string out;
    for (const auto& p : result.problems) out += p.ToString() + "\n";
    return out;
}

TEST(ConfigLoaderTest, TheDurableStoreIsTheDefaultInTheDataDirectory) {
    constexpr std::string_view kModels = "models: [{name: m, deployments: [{model: x}]}]\n";
    LoadResult result = LoadConfigText(kModels, "a.yaml", FakeEnv({}));
    ASSERT_TRUE(result.problems.empty()) << AllProblems(result);
    EXPECT_EQ(result.config->state.backend, StateConfig::Backend::kSqlite);
    EXPECT_EQ(result.config->state.path, "switchyard-state.db");
    result = LoadConfigText(kModels, "a.yaml", FakeEnv({{"SWITCHYARD_DATA_DIR", "/var/lib/sy"}}));
    EXPECT_EQ(result.config->state.path, "/var/lib/sy/switchyard-state.db");
    result = LoadConfigText(std::string("state: {path: /data/s.db}\n") + std::string(kModels),
                            "a.yaml", FakeEnv({{"SWITCHYARD_DATA_DIR", "/var/lib/sy"}}));
    EXPECT_EQ(result.config->state.path, "/data/s.db");
    result = LoadConfigText(std::string("state: {backend: memory}\n") + std::string(kModels),
                            "a.yaml", FakeEnv({}));
    EXPECT_EQ(result.config->state.backend, StateConfig::Backend::kMemory);
    result =
        LoadConfigText(std::string("state: {backend: memory, path: x.db}\n") + std::string(kModels),
                       "a.yaml", FakeEnv({}));
    EXPECT_TRUE(HasProblem(result, 1, "'path' is read with backend 'sqlite' only"))
        << AllProblems(result);
    result = LoadConfigText(std::string("state: {backend: disk}\n") + std::string(kModels),
                            "a.yaml", FakeEnv({}));
    EXPECT_TRUE(HasProblem(result, 1, "'backend' must be 'sqlite', 'memory' or 'redis'"))
        << AllProblems(result);
}

TEST(ConfigLoaderTest, LoadsAFullConfig) {
    constexpr std::string_view kYaml = R"(
server:
  listen: "0.0.0.0:8080"
  workers: 3
  max_body_bytes: 2048
  master_key: os.environ/MASTER
timeouts: {connect_ms: 100, first_byte_ms: 200, total_ms: 300}
log: {access: off}
models:
  - name: chat
    deployments:
      - {provider: openai, model: gpt-4.1, api_key: os.environ/OPENAI_KEY, weight: 2}
      - {name: backup, model: gpt-4.1, api_base: "http://127.0.0.1:9000/v1"}
)";
    const LoadResult result = LoadConfigText(
        kYaml, "test.yaml", FakeEnv({{"MASTER", "m-secret"}, {"OPENAI_KEY", "sk-1"}}));
    ASSERT_TRUE(result.problems.empty()) << AllProblems(result);
    const Config& c = *result.config;
    EXPECT_EQ(c.server.listen_host, "0.0.0.0");
    EXPECT_EQ(c.server.listen_port, 8080);
    EXPECT_EQ(c.server.workers, 3u);
    EXPECT_EQ(c.server.max_body_bytes, 2048u);
    EXPECT_EQ(c.server.master_key.Reveal(), "m-secret");
    EXPECT_EQ(c.server.master_key.Origin(), "env MASTER");
    EXPECT_EQ(c.timeouts.connect.count(), 100);
    EXPECT_EQ(c.timeouts.total.count(), 300);
    EXPECT_EQ(c.log.access, "off");
    ASSERT_EQ(c.models.size(), 1u);
    const ModelGroup* chat = c.FindGroup("chat");
    ASSERT_NE(chat, nullptr);
    ASSERT_EQ(chat->deployments.size(), 2u);
    EXPECT_EQ(chat->deployments[0].name, "gpt-4.1@api.openai.com");
    EXPECT_TRUE(chat->deployments[0].base_url.tls);
    EXPECT_EQ(chat->deployments[0].api_key.Reveal(), "sk-1");
    EXPECT_DOUBLE_EQ(chat->deployments[0].weight, 2.0);
    EXPECT_EQ(chat->deployments[0].line, 12);
    EXPECT_EQ(chat->deployments[1].name, "backup");
    EXPECT_EQ(chat->deployments[1].base_url.port, 9000);
    EXPECT_EQ(c.FindGroup("other"), nullptr);
}

TEST(ConfigLoaderTest, ReportsEveryProblemWithItsLine) {
    constexpr std::string_view kYaml = R"(server:
  listen: "nowhere"
  workerz: 2
models:
  - name: a
    deployments:
      - {model: m, api_key: os.environ/MISSING_KEY, weight: -1}
      - {provider: bedrock, model: m, api_base: "ftp://x"}
  - name: b
    deployments: []
  - name: a
    deployments:
      - {api_base: "http://h:1"}
)";
    const LoadResult result = LoadConfigText(kYaml, "bad.yaml", FakeEnv({}));
    EXPECT_EQ(result.config, nullptr);
    EXPECT_TRUE(HasProblem(result, 2, "'listen' must be HOST:PORT")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 3, "unknown key 'workerz'")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 7, "MISSING_KEY is not set")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 7, "'weight' must be greater than 0")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 8, "unsupported provider 'bedrock'")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 8, "invalid api_base")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 10, "needs a non-empty 'deployments'")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 13, "missing required key 'model'")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 11, "duplicate model group name 'a'")) << AllProblems(result);
    EXPECT_GE(result.problems.size(), 9u);
    EXPECT_EQ(result.problems[0].ToString().rfind("bad.yaml:", 0), 0u);
}

TEST(ConfigLoaderTest, ReportsSyntaxErrorsAndWrongShapes) {
    LoadResult result = LoadConfigText("models: [\n  {name: x\n", "syntax.yaml", FakeEnv({}));
    ASSERT_EQ(result.problems.size(), 1u);
    EXPECT_GT(result.problems[0].line, 0);

    result = LoadConfigText("- just a list\n", "shape.yaml", FakeEnv({}));
    EXPECT_TRUE(HasProblem(result, 1, "the top level must be a mapping")) << AllProblems(result);

    result = LoadConfigText("server: {}\n", "nomodels.yaml", FakeEnv({}));
    EXPECT_TRUE(HasProblem(result, 1, "missing required key 'models'")) << AllProblems(result);

    result = LoadConfigText("models: []\nserver: {workers: many}\n", "types.yaml", FakeEnv({}));
    EXPECT_TRUE(HasProblem(result, 2, "'workers' must be an integer")) << AllProblems(result);
}

TEST(ConfigLoaderTest, ProblemMessagesNeverContainSecretValues) {
    constexpr std::string_view kYaml = R"(models:
  - name: a
    deployments:
      - {model: m, api_key: os.environ/KEY, api_base: "bad"}
)";
    const LoadResult result = LoadConfigText(kYaml, "s.yaml", FakeEnv({{"KEY", "sk-very-secret"}}));
    ASSERT_FALSE(result.problems.empty());
    EXPECT_EQ(AllProblems(result).find("sk-very-secret"), std::string::npos);
}

TEST(ConfigLoaderTest, LoadsClientKeysHashedLanesAndDeploymentLimits) {
    constexpr std::string_view kYaml = R"(models:
  - name: a
    deployments:
      - {model: m, api_base: "http://127.0.0.1:1/v1", limits: {rpm: 60, tpm: 40000}}
  - name: b
    deployments: [{model: m, api_base: "http://127.0.0.1:1/v1"}]
limits:
  self_throttle: false
  burst_ms: 2000
  lanes:
    - {name: chat, share: 1}
    - {name: backfill, share: 0.3, max_queue: 5, slow_start_ms: 30000}
keys:
  - {name: app, key: os.environ/APP_KEY, rpm: 600, tpm: 100000, monthly_budget: 25.5,
     models: [a], lane: backfill, fallbacks: false, stream_mode: background}
  - {name: old, key_sha256: "AA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"}
)";
    const LoadResult result =
        LoadConfigText(kYaml, "k.yaml", FakeEnv({{"APP_KEY", "sk-app-0123456789abcdef"}}));
    ASSERT_TRUE(result.config) << AllProblems(result);
    const Config& c = *result.config;
    EXPECT_EQ(c.models[0].deployments[0].limits.rpm, 60);
    EXPECT_EQ(c.models[0].deployments[0].limits.tpm, 40000);
    EXPECT_FALSE(c.limits.self_throttle);
    EXPECT_EQ(c.limits.burst, Millis(2000));
    ASSERT_EQ(c.limits.lanes.size(), 2u);
    EXPECT_EQ(c.limits.lanes[1].max_queue, 5u);
    EXPECT_EQ(c.limits.lanes[1].slow_start, Millis(30000));
    ASSERT_EQ(c.keys.size(), 2u);
    const ClientKey& app = c.keys[0];
    // Only the key's SHA-256 is kept.
    EXPECT_EQ(app.sha256, "2723a16ded038f26f4face19e2eae2f286dce341a9aacbc059a5c3533966f945");
    EXPECT_EQ(app.rpm, 600);
    EXPECT_EQ(app.tpm, 100000);
    EXPECT_DOUBLE_EQ(app.monthly_budget, 25.5);
    EXPECT_EQ(app.models, std::vector<std::string>{"a"});
    EXPECT_EQ(app.lane, 1u);
    EXPECT_FALSE(app.fallbacks);
    EXPECT_EQ(app.stream_mode, StreamMode::kBackground);
    EXPECT_EQ(c.keys[1].sha256,
              "aa7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");  // lowercased
}

TEST(ConfigLoaderTest, RejectsPlaintextKeysAndUnknownLanesAndGroups) {
    constexpr std::string_view kYaml = R"(models:
  - name: a
    deployments: [{model: m, api_base: "http://127.0.0.1:1/v1"}]
keys:
  - {name: inline, key: sk-plain-text-key}
  - {name: lane, key: os.environ/K, lane: nowhere}
  - {name: group, key: os.environ/K2, models: [zzz]}
  - {name: none}
  - {name: short, key_sha256: abc}
)";
    const LoadResult result = LoadConfigText(
        kYaml, "k.yaml",
        FakeEnv({{"K", "sk-one-0123456789abcdef"}, {"K2", "sk-two-0123456789abcdef"}}));
    EXPECT_TRUE(HasProblem(result, 5, "plaintext keys are not accepted")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 6, "unknown lane 'nowhere'")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 7, "unknown model group 'zzz'")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 8, "needs 'key' or 'key_sha256'")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 9, "64 hex digits")) << AllProblems(result);
    EXPECT_EQ(AllProblems(result).find("sk-plain-text-key"), std::string::npos);
}

TEST(ConfigLoaderTest, LoadsTelemetry) {
    constexpr std::string_view kYaml = R"(
telemetry:
  otlp_endpoint: "http://collector.local:4318"
  service_name: edge-gateway
  sample_ratio: 0.25
  headers: {x-api-key: os.environ/COLLECTOR_KEY}
  export_interval_ms: 200
models:
  - name: g
    deployments: [{provider: openai, model: m, api_base: "http://127.0.0.1:1/v1"}]
)";
    const LoadResult result =
        LoadConfigText(kYaml, "t.yaml", FakeEnv({{"COLLECTOR_KEY", "collector-secret"}}));
    ASSERT_TRUE(result.config) << AllProblems(result);
    const TelemetryConfig& t = result.config->telemetry;
    EXPECT_TRUE(t.Enabled());
    EXPECT_EQ(t.collector.host, "collector.local");
    EXPECT_EQ(t.collector.port, 4318);
    EXPECT_EQ(t.traces_path, "/v1/traces");
    EXPECT_EQ(t.service_name, "edge-gateway");
    EXPECT_DOUBLE_EQ(t.sample_ratio, 0.25);
    ASSERT_EQ(t.headers.size(), 1u);
    EXPECT_EQ(t.headers[0].first, "x-api-key");
    EXPECT_EQ(t.headers[0].second.Reveal(), "collector-secret");
    EXPECT_EQ(t.export_interval.count(), 200);
    // Without the section, no traces.
    const LoadResult plain = LoadConfigText(R"(
models:
  - name: g
    deployments: [{provider: openai, model: m, api_base: "http://127.0.0.1:1/v1"}]
)",
                                            "t.yaml", FakeEnv({}));
    ASSERT_TRUE(plain.config);
    EXPECT_FALSE(plain.config->telemetry.Enabled());
}

TEST(ConfigLoaderTest, RefusesBadTelemetry) {
    constexpr std::string_view kYaml = R"(
telemetry:
  otlp_endpoint: "https://collector.example:4318/v1/traces"
  sample_ratio: 1.5
  headers: {x-key: os.environ/MISSING}
  exporter: otlp
models:
  - name: g
    deployments: [{provider: openai, model: m, api_base: "http://127.0.0.1:1/v1"}]
)";
    const LoadResult result = LoadConfigText(kYaml, "t.yaml", FakeEnv({}));
    EXPECT_FALSE(result.config);
    EXPECT_TRUE(HasProblem(result, 3, "otlp_endpoint must be http://")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 4, "'sample_ratio' must be between 0 and 1"));
    EXPECT_TRUE(HasProblem(result, 5, "MISSING is not set"));
    EXPECT_TRUE(HasProblem(result, 6, "unknown key 'exporter'"));
}

TEST(ConfigLoaderTest, EmbeddedQuickstartIsValid) {
    const LoadResult result =
        LoadConfigText(EmbeddedDefaultConfig(), "quickstart.yaml", FakeEnv({}));
    ASSERT_TRUE(result.problems.empty()) << AllProblems(result);
    EXPECT_EQ(result.config->server.listen_port, 4000);
    ASSERT_NE(result.config->FindGroup("gpt-4o-mini"), nullptr);
    EXPECT_EQ(result.config->FindGroup("gpt-4o-mini")->deployments[0].base_url.port, 4010);
}

TEST(ConfigLoaderTest, DuplicateDefaultNamesGetSuffixes) {
    constexpr std::string_view kYaml = R"(models:
  - name: a
    deployments:
      - {model: m, api_base: "http://h:1"}
      - {model: m, api_base: "http://h:1"}
)";
    const LoadResult result = LoadConfigText(kYaml, "d.yaml", FakeEnv({}));
    ASSERT_TRUE(result.problems.empty()) << AllProblems(result);
    EXPECT_EQ(result.config->models[0].deployments[0].name, "m@h:1");
    EXPECT_EQ(result.config->models[0].deployments[1].name, "m@h:1#2");
}

TEST(ConfigLoaderTest, ResilienceDefaults) {
    const LoadResult result = LoadConfigText(
        "models:\n  - {name: a, deployments: [{model: m, api_base: \"http://h:1\"}]}\n", "d.yaml",
        FakeEnv({}));
    ASSERT_TRUE(result.problems.empty()) << AllProblems(result);
    const Config& c = *result.config;
    const RetryConfig defaults;
    EXPECT_EQ(c.retry.max_attempts, defaults.max_attempts);
    EXPECT_EQ(c.retry.base, defaults.base);
    EXPECT_EQ(c.retry.cap, defaults.cap);
    EXPECT_EQ(c.retry.deadline, defaults.deadline);
    EXPECT_EQ(c.retry.class_retries.values, defaults.class_retries.values);
    EXPECT_FALSE(c.retry.num_retries);
    EXPECT_DOUBLE_EQ(c.retry.budget_max_tokens, 100);
    EXPECT_DOUBLE_EQ(c.retry.budget_token_ratio, 0.1);
    EXPECT_DOUBLE_EQ(c.health.allowed_failure_rate, 0.2);
    EXPECT_EQ(c.degradation.mode, DegradationConfig::Mode::kError);
    const ModelGroup& a = c.models[0];
    EXPECT_TRUE(a.fallbacks.empty());
    EXPECT_TRUE(a.context_window_fallbacks.empty());
    EXPECT_TRUE(a.content_policy_fallbacks.empty());
    EXPECT_FALSE(a.system_prompt);
    EXPECT_TRUE(a.params.empty());
}

TEST(ConfigLoaderTest, OnlyRetryableClassesHaveRetriesByDefault) {
    const RetryConfig defaults;
    for (std::size_t i = 0; i < policy::kErrorClassCount; ++i) {
        const auto c = static_cast<policy::ErrorClass>(i);
        const bool retryable = std::find(std::begin(kRetryableClasses), std::end(kRetryableClasses),
                                         c) != std::end(kRetryableClasses);
        if (!retryable) {
            EXPECT_EQ(defaults.class_retries[c], 0) << policy::Name(c);
        }
    }
    EXPECT_EQ(defaults.class_retries[policy::ErrorClass::kTimeout], 1);
}

TEST(ConfigLoaderTest, ClassRetriesOfAClassThatIsNeverRetriedIsAnError) {
    const LoadResult result = LoadConfigText(R"(retry:
  class_retries: {bad_request: 2}
models:
  - name: a
    deployments: [{name: a1, model: m, api_base: "http://h:1/v1"}]
)",
                                             "r.yaml", FakeEnv({}));
    ASSERT_EQ(result.problems.size(), 1u) << AllProblems(result);
    EXPECT_NE(result.problems[0].message.find("unknown error class 'bad_request'"),
              std::string::npos)
        << result.problems[0].message;
    EXPECT_EQ(result.problems[0].line, 2);
}

TEST(ConfigLoaderTest, LoadsRetryDegradationAndFallbacks) {
    constexpr std::string_view kYaml = R"(retry:
  max_attempts: 4
  num_retries: 2
  base_ms: 250
  cap_ms: 8000
  deadline_ms: 30000
  class_retries: {rate_limited: 5, timeout: 0, connection: 1}
  budget: {max_tokens: 20, token_ratio: 0.25}
degradation:
  mode: static
  content: "We are busy; please try again shortly."
models:
  - name: smart
    fallbacks: [cheap, other]
    context_window_fallbacks: [long]
    content_policy_fallbacks: [safe, cheap]
    deployments:
      - {name: s1, model: gpt-4.1, api_base: "http://h:1/v1"}
      - {name: s2, model: gpt-4.1, api_base: "http://h:2/v1"}
  - name: cheap
    prompt: {system: "Answer briefly.\nNo markdown."}
    params:
      temperature: 0.2
      max_tokens: 512
      logprobs: true
      user: fallback
      quoted_number: "7"
      seed: -3
    deployments:
      - {name: c1, model: gpt-4.1-mini, api_base: "http://h:1/v1"}
  - name: other
    deployments: [{name: o1, model: o, api_base: "http://h:3/v1"}]
  - name: long
    deployments: [{name: l1, model: l, api_base: "http://h:3/v1"}]
  - name: safe
    deployments: [{name: f1, model: f, api_base: "http://h:3/v1"}]
)";
    const LoadResult result = LoadConfigText(kYaml, "r.yaml", FakeEnv({}));
    ASSERT_TRUE(result.problems.empty()) << AllProblems(result);
    const Config& c = *result.config;
    EXPECT_EQ(c.retry.max_attempts, 4);
    EXPECT_EQ(c.retry.base.count(), 250);
    EXPECT_EQ(c.retry.cap.count(), 8000);
    EXPECT_EQ(c.retry.deadline.count(), 30000);
    EXPECT_EQ(c.retry.num_retries, 2);
    using policy::ErrorClass;
    EXPECT_EQ(c.retry.class_retries[ErrorClass::kRateLimited], 5);
    EXPECT_EQ(c.retry.class_retries[ErrorClass::kTimeout], 0);
    EXPECT_EQ(c.retry.class_retries[ErrorClass::kConnection], 1);
    EXPECT_EQ(c.retry.class_retries[ErrorClass::kOverloaded],
              RetryConfig{}.class_retries[ErrorClass::kOverloaded])
        << "classes not named keep their default";
    EXPECT_DOUBLE_EQ(c.retry.budget_max_tokens, 20);
    EXPECT_DOUBLE_EQ(c.retry.budget_token_ratio, 0.25);
    EXPECT_EQ(c.degradation.mode, DegradationConfig::Mode::kStatic);
    EXPECT_EQ(c.degradation.content, "We are busy; please try again shortly.");

    const ModelGroup& smart = *c.FindGroup("smart");
    EXPECT_EQ(smart.fallbacks, (std::vector<std::string>{"cheap", "other"}));
    EXPECT_EQ(smart.context_window_fallbacks, (std::vector<std::string>{"long"}));
    EXPECT_EQ(smart.content_policy_fallbacks, (std::vector<std::string>{"safe", "cheap"}));
    EXPECT_FALSE(smart.system_prompt);

    const ModelGroup& cheap = *c.FindGroup("cheap");
    ASSERT_TRUE(cheap.system_prompt);
    EXPECT_EQ(*cheap.system_prompt, "Answer briefly.\nNo markdown.");
    const std::vector<std::pair<std::string, std::string>> params = {
        {"temperature", "0.2"},   {"max_tokens", "512"},      {"logprobs", "true"},
        {"user", "\"fallback\""}, {"quoted_number", "\"7\""}, {"seed", "-3"}};
    EXPECT_EQ(cheap.params, params);

    // Deployment indexes number all deployments of the config in order.
    EXPECT_EQ(c.deployment_count, 6u);
    std::size_t expected = 0;
    for (const ModelGroup& g : c.models) {
        for (const Deployment& d : g.deployments) EXPECT_EQ(d.index, expected++) << d.name;
    }
    EXPECT_EQ(smart.deployments[1].index, 1u);
    EXPECT_EQ(c.FindGroup("safe")->deployments[0].index, 5u);
}

TEST(ConfigLoaderTest, ParamsAreJsonText) {
    constexpr std::string_view kYaml = R"(models:
  - name: a
    params:
      p1: 0.5
      p2: 1e3
      p3: -0.25
      p4: "text \"quoted\" \\ \t"
      p5: true
      p6: "true"
      p7: 12abc
    deployments: [{model: m, api_base: "http://h:1"}]
)";
    const LoadResult result = LoadConfigText(kYaml, "p.yaml", FakeEnv({}));
    ASSERT_TRUE(result.problems.empty()) << AllProblems(result);
    const ModelGroup& a = result.config->models[0];
    ASSERT_EQ(a.params.size(), 7u);
    std::vector<boost::json::value> values;
    for (const auto& [name, json] : a.params) {
        boost::system::error_code ec;
        values.push_back(boost::json::parse(json, ec));
        EXPECT_FALSE(ec) << name << ": " << json << " is not JSON";
    }
    EXPECT_DOUBLE_EQ(values[0].as_double(), 0.5);
    EXPECT_DOUBLE_EQ(values[1].as_double(), 1000);
    EXPECT_DOUBLE_EQ(values[2].as_double(), -0.25);
    EXPECT_EQ(values[3].as_string(), "text \"quoted\" \\ \t");
    EXPECT_EQ(values[4], boost::json::value(true));
    EXPECT_EQ(values[5].as_string(), "true") << "a quoted scalar stays a string";
    EXPECT_EQ(values[6].as_string(), "12abc");
}

// A YAML number spelled in a way JSON does not allow must still reach the provider as a number.
TEST(ConfigLoaderTest, ParamsInEveryNumberSpellingAreValidJson) {
    constexpr std::string_view kYaml = R"(models:
  - name: a
    params: {p1: .5, p2: +1, p3: 1., p4: 010}
    deployments: [{model: m, api_base: "http://h:1"}]
)";
    const LoadResult result = LoadConfigText(kYaml, "p.yaml", FakeEnv({}));
    ASSERT_TRUE(result.problems.empty()) << AllProblems(result);
    for (const auto& [name, json] : result.config->models[0].params) {
        boost::system::error_code ec;
        boost::json::parse(json, ec);
        EXPECT_FALSE(ec) << name << ": " << json << " is not JSON";
    }
}

TEST(ConfigLoaderTest, ReportsResilienceProblemsWithTheirLines) {
    constexpr std::string_view kYaml = R"(retry:
  max_attempts: 0
  class_retries:
    rate_limited: 2
    flaky: 3
    timeout: 99
  budget: {max_tokens: 0, token_ratio: -1, refill: 2}
degradation:
  mode: cached
models:
  - name: a
    params:
      temperature: 0.2
      model: other
      messages: x
      stream: true
      stop: [x, y]
    prompt: {system: "s", user: "u"}
    deployments: [{model: m, api_base: "http://h:1"}]
)";
    const LoadResult result = LoadConfigText(kYaml, "bad.yaml", FakeEnv({}));
    EXPECT_EQ(result.config, nullptr);
    EXPECT_TRUE(HasProblem(result, 2, "'max_attempts' must be between 1 and 100"))
        << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 5, "unknown error class 'flaky'")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 5, "rate_limited")) << "lists the known classes";
    EXPECT_TRUE(HasProblem(result, 6, "'timeout' must be between 0 and 20")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 7, "'max_tokens' must be greater than 0"))
        << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 7, "'token_ratio' must be greater than 0"))
        << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 7, "unknown key 'refill'")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 9, "'mode' must be 'error' or 'static'")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 14, "'params' cannot set 'model'")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 15, "'params' cannot set 'messages'")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 16, "'params' cannot set 'stream'")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 17, "'params.stop' must be a scalar")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 18, "unknown key 'user'")) << AllProblems(result);
    EXPECT_EQ(result.problems.size(), 12u) << AllProblems(result);
}

TEST(ConfigLoaderTest, StaticDegradationNeedsContent) {
    constexpr std::string_view kYaml = R"(models:
  - {name: a, deployments: [{model: m, api_base: "http://h:1"}]}
degradation:
  mode: static
)";
    const LoadResult result = LoadConfigText(kYaml, "s.yaml", FakeEnv({}));
    EXPECT_EQ(result.config, nullptr);
    EXPECT_TRUE(HasProblem(result, 4, "missing required key 'content'")) << AllProblems(result);
    EXPECT_EQ(result.problems.size(), 1u) << AllProblems(result);
}

TEST(ConfigLoaderTest, FallbackListsMustBeListsOfNames) {
    constexpr std::string_view kYaml = R"(models:
  - name: a
    fallbacks: b
    context_window_fallbacks: [{name: b}]
    content_policy_fallbacks: {b: 1}
    deployments: [{model: m, api_base: "http://h:1"}]
  - {name: b, deployments: [{model: m, api_base: "http://h:2"}]}
)";
    const LoadResult result = LoadConfigText(kYaml, "l.yaml", FakeEnv({}));
    EXPECT_EQ(result.config, nullptr);
    EXPECT_TRUE(HasProblem(result, 3, "'fallbacks' must be a list")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 4, "'context_window_fallbacks' entries must be model group"))
        << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 5, "'content_policy_fallbacks' must be a list"))
        << AllProblems(result);
}

constexpr std::string_view kBadFallbacks = R"(models:
  - name: a
    deployments: [{model: m, api_base: "http://h:1"}]
  - name: b
    fallbacks: [a, ghost]
    deployments: [{model: m, api_base: "http://h:2"}]
  - name: c
    context_window_fallbacks: [a]
    content_policy_fallbacks: [c]
    deployments: [{model: m, api_base: "http://h:3"}]
)";

bool HasMessage(const LoadResult& result, std::string_view fragment) {
    for (const auto& p : result.problems) {
        if (p.line > 0 && p.message.find(fragment) != std::string::npos) return true;
    }
    return false;
}

TEST(ConfigLoaderTest, ReportsUnknownFallbackTargetsAndSelfFallback) {
    const LoadResult result = LoadConfigText(kBadFallbacks, "f.yaml", FakeEnv({}));
    EXPECT_EQ(result.config, nullptr);
    EXPECT_TRUE(HasMessage(result, "model group 'b' falls back to unknown group 'ghost'"))
        << AllProblems(result);
    EXPECT_TRUE(HasMessage(result, "model group 'c' cannot fall back to itself"))
        << AllProblems(result);
    EXPECT_EQ(result.problems.size(), 2u) << AllProblems(result);
}

// Fallback problems are reported at the offending list, not at the `models` key.
TEST(ConfigLoaderTest, FallbackProblemsPointAtTheEntry) {
    const LoadResult result = LoadConfigText(kBadFallbacks, "f.yaml", FakeEnv({}));
    EXPECT_TRUE(HasProblem(result, 5, "falls back to unknown group 'ghost'"))
        << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 9, "cannot fall back to itself")) << AllProblems(result);
}

TEST(ConfigLoaderTest, ReadsTheCooldownsFailureRate) {
    const std::string models =
        "models:\n  - {name: a, deployments: [{model: m, api_base: \"http://h:1\"}]}\n";
    const LoadResult result = LoadConfigText(
        "health: {allowed_fails: 5, allowed_failure_rate: 0.35}\n" + models, "h.yaml", FakeEnv({}));
    ASSERT_TRUE(result.problems.empty()) << AllProblems(result);
    EXPECT_EQ(result.config->health.allowed_fails, 5);
    EXPECT_DOUBLE_EQ(result.config->health.allowed_failure_rate, 0.35);
    const LoadResult zero =
        LoadConfigText("health: {allowed_failure_rate: 0}\n" + models, "h.yaml", FakeEnv({}));
    ASSERT_TRUE(zero.problems.empty()) << AllProblems(zero);
    EXPECT_DOUBLE_EQ(zero.config->health.allowed_failure_rate, 0);
    const LoadResult over =
        LoadConfigText("health: {allowed_failure_rate: 1.5}\n" + models, "h.yaml", FakeEnv({}));
    ASSERT_EQ(over.problems.size(), 1u);
    EXPECT_NE(over.problems[0].message.find("allowed_failure_rate"), std::string::npos);
}

TEST(ConfigLoaderTest, ReadsRegionsAndResidency) {
    const std::string sha(64, 'a');
    std::string text = R"(
keys:
  - {name: app, key_sha256: "SHA", residency: [eu]}
models:
  - name: a
    residency: [eu, us-east]
    deployments: [{model: m, api_base: "http://h:1", region: eu}]
  - name: b
    deployments: [{model: m, api_base: "http://h:1"}]
)";
    text.replace(text.find("SHA"), 3, sha);
    const LoadResult loaded = LoadConfigText(text, "r.yaml", FakeEnv({}));
    ASSERT_TRUE(loaded.problems.empty()) << AllProblems(loaded);
    const Config& c = *loaded.config;
    EXPECT_EQ(c.models[0].deployments[0].region, "eu");
    EXPECT_EQ(c.models[0].residency, (std::vector<std::string>{"eu", "us-east"}));
    EXPECT_EQ(c.models[1].deployments[0].region, "");
    EXPECT_TRUE(c.models[1].residency.empty());
    EXPECT_EQ(c.keys[0].residency, (std::vector<std::string>{"eu"}));

    const LoadResult bad = LoadConfigText(R"(
models:
  - name: a
    residency: [EU]
    deployments: [{model: m, api_base: "http://h:1", region: "eu west"}]
)",
                                          "r.yaml", FakeEnv({}));
    ASSERT_EQ(bad.problems.size(), 2u) << AllProblems(bad);
    EXPECT_NE(AllProblems(bad).find("'residency' entries must be regions"), std::string::npos);
    EXPECT_NE(AllProblems(bad).find("'region' must be"), std::string::npos);
}

}  // namespace config_loader_test
}  // namespace switchyard::config

namespace switchyard::config {
namespace config_loader_test {

TEST(ConfigLoaderTest, ReadsKeptAnswersAndOutputValidation) {
    constexpr std::string_view kYaml = R"(idempotency: {ttl_s: 60, max_answer_bytes: 2048}
models:
  - name: a
    cache: {serve: always, ttl_s: 30, max_entries: 5, shared: true}
    validation:
      on_invalid: annotate
      schema: {type: object, required: [x], properties: {x: {type: integer, minimum: 1.5}}}
    deployments: [{model: m}]
  - name: b
    validation: {schema: '{"type":"array"}'}
    deployments: [{model: m}]
)";
    const LoadResult result = LoadConfigText(kYaml, "ok.yaml", FakeEnv({}));
    ASSERT_NE(result.config, nullptr) << AllProblems(result);
    const Config& config = *result.config;
    EXPECT_EQ(config.idempotency.ttl, std::chrono::seconds(60));
    EXPECT_EQ(config.idempotency.max_answer_bytes, 2048u);
    const ModelGroup& a = config.models[0];
    ASSERT_TRUE(a.cache);
    EXPECT_EQ(a.cache->serve, CacheConfig::Serve::kAlways);
    EXPECT_EQ(a.cache->max_entries, 5u);
    EXPECT_TRUE(a.cache->shared);
    EXPECT_EQ(a.validation.on_invalid, ValidationConfig::OnInvalid::kAnnotate);
    EXPECT_EQ(a.validation.schema,
              R"({"type":"object","required":["x"],"properties":{"x":{"type":"integer",)"
              R"("minimum":1.5}}})");
    EXPECT_EQ(config.models[1].validation.schema, R"({"type":"array"})");
    EXPECT_FALSE(config.models[1].cache);
}

TEST(ConfigLoaderTest, RefusesWrongKeptAnswerAndValidationSettings) {
    constexpr std::string_view kYaml = R"(idempotency: {ttl_s: 0}
models:
  - name: a
    cache: {serve: sometimes, max_entries: 0}
    validation: {on_invalid: shrug, schema: "not json"}
    deployments: [{model: m}]
)";
    const LoadResult result = LoadConfigText(kYaml, "bad.yaml", FakeEnv({}));
    EXPECT_EQ(result.config, nullptr);
    EXPECT_TRUE(HasProblem(result, 1, "'ttl_s' must be between 1")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 4, "cache 'serve' must be")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 4, "'max_entries' must be between 1")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 5, "'on_invalid' must be")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 5, "must be a JSON Schema object")) << AllProblems(result);
}

// Every value the config sends out in a request header (an upstream's api_key and
// anthropic-version, the collector's headers) is refused with a control character in it: a CR or
// LF would end the header and start one of the file's choosing. The problem names the setting and
// where the value came from, never the value.
TEST(ConfigLoaderTest, HeaderValuesWithControlCharactersAreRefused) {
    constexpr std::string_view kYaml = R"(telemetry:
  otlp_endpoint: "http://collector.local:4318"
  headers:
    x-api-key: os.environ/COLLECTOR_KEY
    x-tenant: "acme\0evil"
models:
  - name: a
    deployments:
      - {model: m, api_base: "http://h:1/v1", api_key: "sk-inline\r\nX-Injected: yes"}
      - {model: m, api_base: "http://h:2/v1", api_key: os.environ/OPENAI_KEY}
  - name: b
    deployments:
      - {provider: anthropic, model: c, anthropic_version: "2023-06-01\nX-Injected: yes"}
      - {provider: anthropic, model: c, api_key: "sk-tab\tinside"}
)";
    const LoadResult result =
        LoadConfigText(kYaml, "h.yaml",
                       FakeEnv({{"COLLECTOR_KEY", "collector-secret\r\nX-Injected: yes"},
                                {"OPENAI_KEY", "sk-from-env\n"}}));
    EXPECT_EQ(result.config, nullptr);
    constexpr std::string_view kWhy =
        ": contains a control character (CR, LF or another); header values cannot carry it";
    const auto problem = [&](int line, std::string field) {
        return HasProblem(result, line, field + std::string(kWhy));
    };
    EXPECT_TRUE(problem(4, "telemetry.headers.x-api-key (environment variable COLLECTOR_KEY)"))
        << AllProblems(result);
    EXPECT_TRUE(problem(5, "telemetry.headers.x-tenant")) << AllProblems(result);
    EXPECT_TRUE(problem(9, "models[0].deployments[0].api_key")) << AllProblems(result);
    EXPECT_TRUE(problem(10, "models[0].deployments[1].api_key (environment variable OPENAI_KEY)"))
        << AllProblems(result);
    EXPECT_TRUE(problem(13, "models[1].deployments[0].anthropic_version")) << AllProblems(result);
    EXPECT_TRUE(problem(14, "models[1].deployments[1].api_key")) << AllProblems(result);
    EXPECT_EQ(result.problems.size(), 6u) << AllProblems(result);
    for (const char* secret : {"sk-inline", "collector-secret", "sk-from-env", "evil", "sk-tab"}) {
        EXPECT_EQ(AllProblems(result).find(secret), std::string::npos) << secret;
    }
}

// RFC 9110 section 5.6.2: a header name is a token; "x(key)" passed as a safe name before.
TEST(ConfigLoaderTest, TelemetryHeaderNamesAreTokens) {
    constexpr std::string_view kYaml = R"yaml(telemetry:
  otlp_endpoint: "http://collector.local:4318"
  headers:
    "x key": v
    "x(key)": v
    "bad:name": v
    "x-ok_1.2!#$%&'*+^`|~": v
models:
  - {name: a, deployments: [{model: m, api_base: "http://h:1"}]}
)yaml";
    const LoadResult result = LoadConfigText(kYaml, "n.yaml", FakeEnv({}));
    EXPECT_EQ(result.config, nullptr);
    constexpr std::string_view kWhy = "' is not a header name (RFC 9110 token characters only)";
    EXPECT_TRUE(HasProblem(result, 4, "telemetry.headers: 'x%20key" + std::string(kWhy)))
        << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 5, "telemetry.headers: 'x(key)" + std::string(kWhy)))
        << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 6, "telemetry.headers: 'bad:name" + std::string(kWhy)))
        << AllProblems(result);
    EXPECT_EQ(result.problems.size(), 3u) << AllProblems(result);
}

// A base URL becomes a request line and a Host header as written: a CR, LF or space in it would
// split them. The problem does not repeat the URL, which may carry a secret.
TEST(ConfigLoaderTest, UrlsAreVisibleAsciiAndNeverShown) {
    constexpr std::string_view kYaml = R"(alerts:
  webhook_url: "https://hooks.example/T0 B0/secret-token"
telemetry:
  otlp_endpoint: "http://collector\r\nX-Injected: yes"
models:
  - name: a
    deployments:
      - {model: m, api_base: "http://h:1/v1\r\nX-Injected: yes"}
      - {model: m, api_base: "http://h:1/v1/caf\u00e9"}
      - {model: m, api_base: "https://user:secret-pass@h/v1"}
)";
    const LoadResult result = LoadConfigText(kYaml, "u.yaml", FakeEnv({}));
    EXPECT_EQ(result.config, nullptr);
    constexpr std::string_view kWhy =
        ": contains a space, a control character or a non-ASCII byte; a URL here must be visible "
        "ASCII (percent-encode the rest)";
    EXPECT_TRUE(HasProblem(result, 2, "alerts.webhook_url" + std::string(kWhy)))
        << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 4, "telemetry.otlp_endpoint" + std::string(kWhy)))
        << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 8, "models[0].deployments[0].api_base" + std::string(kWhy)))
        << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 9, "models[0].deployments[1].api_base" + std::string(kWhy)))
        << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 10, "invalid api_base: must not contain credentials"))
        << AllProblems(result);
    EXPECT_EQ(result.problems.size(), 5u) << AllProblems(result);
    for (const char* secret : {"secret-token", "X-Injected", "secret-pass"}) {
        EXPECT_EQ(AllProblems(result).find(secret), std::string::npos) << secret;
    }
}

// Ten lines of nested aliases name 10^10 strings: the schema's conversion to JSON ran out of
// memory (std::bad_alloc out of `switchyard check`; a SIGHUP reload killed the gateway).
constexpr std::string_view kAliasBomb = R"(models:
  - name: a
    deployments: [{model: m, api_base: "http://h:1"}]
    validation:
      schema:
        a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]
        b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]
        c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]
        d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]
        e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]
        f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]
        g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]
        h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g,*g]
        i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h,*h]
        j: &j [*i,*i,*i,*i,*i,*i,*i,*i,*i,*i]
)";

TEST(ConfigLoaderRegressionTest, AYamlAliasBombInASchemaRanOutOfMemory) {
    const LoadResult result = LoadConfigText(kAliasBomb, "bomb.yaml", FakeEnv({}));
    EXPECT_EQ(result.config, nullptr);
    ASSERT_EQ(result.problems.size(), 1u) << AllProblems(result);
    EXPECT_EQ(result.problems[0].ToString(),
              "bomb.yaml:5: models[0].validation.schema: expands the document past 200000 YAML "
              "nodes (YAML aliases?)");
}

// An alias inside its own anchor is a node that contains itself: converting it recursed until
// the stack overflowed.
TEST(ConfigLoaderRegressionTest, AnAliasInsideItsOwnAnchorOverflowedTheStack) {
    constexpr std::string_view kYaml = R"(models:
  - name: a
    deployments: [{model: m, api_base: "http://h:1"}]
    validation:
      schema: &s {type: object, properties: {next: *s}}
)";
    const LoadResult result = LoadConfigText(kYaml, "cycle.yaml", FakeEnv({}));
    ASSERT_EQ(result.problems.size(), 1u) << AllProblems(result);
    EXPECT_EQ(result.problems[0].ToString(),
              "cycle.yaml:5: models[0].validation.schema: nests deeper than 128 levels (a YAML "
              "alias inside its own anchor?)");
}

// Within the document's bounds, a schema still may not grow past 1 MiB of JSON, whether a few
// aliases of a long string make it so or it is written out as JSON text.
TEST(ConfigLoaderTest, ASchemaIsAtMostOneMebibyteOfJson) {
    std::string yaml = R"(models:
  - name: a
    deployments: [{model: m, api_base: "http://h:1"}]
    validation:
      schema:
        type: object
        description: &long ")" +
                       std::string(64 * 1024, 'x') + R"("
        properties:
)";
    for (int i = 0; i < 20; ++i)
        yaml += "          p" + std::to_string(i) + ": {description: *long}\n";
    LoadResult result = LoadConfigText(yaml, "s.yaml", FakeEnv({}));
    EXPECT_TRUE(HasProblem(
        result, 6,
        "models[0].validation.schema: expands to more than 1 MiB of JSON (YAML aliases?)"))
        << AllProblems(result);
    EXPECT_EQ(result.problems.size(), 1u) << AllProblems(result);

    const std::string text =
        R"({"type":"string","description":")" + std::string(1 << 20, 'x') + R"("})";
    result = LoadConfigText(R"(models:
  - name: a
    deployments: [{model: m, api_base: "http://h:1"}]
    validation: {schema: ')" + text +
                                "'}\n",
                            "s.yaml", FakeEnv({}));
    EXPECT_TRUE(HasProblem(result, 4, "models[0].validation.schema: more than 1 MiB of JSON"))
        << AllProblems(result);
}

// .inf and .nan are numbers to YAML; as a weight or a price they broke the arithmetic they feed.
// A whole number past 64 bits is out of range, not "not an integer".
TEST(ConfigLoaderTest, NumbersAreFiniteAndIntegersInRange) {
    constexpr std::string_view kYaml = R"(server: {workers: 99999999999999999999}
retry:
  budget: {max_tokens: .inf}
models:
  - name: a
    deployments:
      - {model: m, api_base: "http://h:1", weight: .inf, input_price: .nan}
keys:
  - {name: k, key_sha256: "AA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD",
     monthly_budget: .inf, rpm: -99999999999999999999}
)";
    const LoadResult result = LoadConfigText(kYaml, "n.yaml", FakeEnv({}));
    EXPECT_EQ(result.config, nullptr);
    EXPECT_TRUE(HasProblem(result, 1, "'workers' must be between 0 and 256"))
        << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 3, "'max_tokens' must be a finite number"))
        << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 7, "'weight' must be a finite number")) << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 7, "'input_price' must be a finite number"))
        << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 10, "'monthly_budget' must be a finite number"))
        << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 10, "'rpm' must be between")) << AllProblems(result);
    EXPECT_EQ(result.problems.size(), 6u) << AllProblems(result);
}

// The text is bounded before it is parsed, and a file is read no further than that bound:
// `switchyard check /dev/zero` read until memory ran out.
TEST(ConfigLoaderRegressionTest, AnEndlessFileWasReadUntilMemoryRanOut) {
    const LoadResult file = LoadConfigFile("/dev/zero", FakeEnv({}));
    ASSERT_EQ(file.problems.size(), 1u) << AllProblems(file);
    EXPECT_EQ(file.problems[0].ToString(), "/dev/zero:0: larger than 4 MiB");

    const std::string text = "models: []\n# " + std::string(5 << 20, 'x') + "\n";
    const LoadResult big = LoadConfigText(text, "big.yaml", FakeEnv({}));
    ASSERT_EQ(big.problems.size(), 1u) << AllProblems(big);
    EXPECT_EQ(big.problems[0].ToString(), "big.yaml:0: larger than 4 MiB");
}

// `ca_file` is checked by opening it: a FIFO blocked `switchyard check` in open(), and a device
// passed as readable.
TEST(ConfigLoaderRegressionTest, ACaFileThatIsAFifoBlockedCheck) {
    const std::string fifo = testing::TempDir() + "switchyard-ca-fifo";
    std::remove(fifo.c_str());
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    const std::string yaml = R"(models:
  - name: a
    deployments:
      - {model: m, api_base: "https://h:1", ca_file: ")" +
                             fifo + R"("}
      - {model: m, api_base: "https://h:2", ca_file: /dev/null}
)";
    const LoadResult result = LoadConfigText(yaml, "ca.yaml", FakeEnv({}));
    std::remove(fifo.c_str());
    EXPECT_TRUE(HasProblem(result, 4, "ca_file '" + fifo + "' cannot be read"))
        << AllProblems(result);
    EXPECT_TRUE(HasProblem(result, 5, "ca_file '/dev/null' cannot be read")) << AllProblems(result);
}

// The regressions below took minutes: a lookup per entry that scanned all entries. The
// wall-clock bound is a loose backstop for sanitizer builds on a busy machine; the fixed code
// takes well under a second in a debug build, the old one over 40 s.
constexpr auto kLinear = std::chrono::seconds(20);

TEST(ConfigLoaderRegressionTest, ManyUnnamedDeploymentsOfOneModelWereNamedInQuadraticTime) {
    constexpr int kCount = 14'000;
    std::string yaml = R"(models:
  - name: a
    deployments: [&d {model: m, api_base: "http://h:1"})";
    for (int i = 1; i < kCount; ++i) yaml += ", *d";
    yaml += "]\n";
    const auto start = std::chrono::steady_clock::now();
    const LoadResult result = LoadConfigText(yaml, "d.yaml", FakeEnv({}));
    EXPECT_LT(std::chrono::steady_clock::now() - start, kLinear);
    ASSERT_TRUE(result.config) << AllProblems(result);
    const auto& deployments = result.config->models[0].deployments;
    ASSERT_EQ(deployments.size(), static_cast<std::size_t>(kCount));
    EXPECT_EQ(deployments[0].name, "m@h:1");
    EXPECT_EQ(deployments[1].name, "m@h:1#2");
    EXPECT_EQ(deployments.back().name, "m@h:1#" + std::to_string(kCount));
}

TEST(ConfigLoaderRegressionTest, ManyTelemetryHeadersWereReadInQuadraticTime) {
    constexpr int kCount = 24'000;
    std::string yaml = "telemetry:\n  otlp_endpoint: \"http://collector:4318\"\n  headers:\n";
    for (int i = 0; i < kCount; ++i) yaml += "    x-h" + std::to_string(i) + ": v\n";
    yaml += "models:\n  - {name: a, deployments: [{model: m, api_base: \"http://h:1\"}]}\n";
    const auto start = std::chrono::steady_clock::now();
    const LoadResult result = LoadConfigText(yaml, "t.yaml", FakeEnv({}));
    EXPECT_LT(std::chrono::steady_clock::now() - start, kLinear);
    ASSERT_TRUE(result.config) << AllProblems(result);
    ASSERT_EQ(result.config->telemetry.headers.size(), static_cast<std::size_t>(kCount));
    EXPECT_EQ(result.config->telemetry.headers.back().first, "x-h" + std::to_string(kCount - 1));
}

// Every client key is checked against every lane (and a refusal lists them all): lanes are a
// handful of workload classes, and at most 64.
TEST(ConfigLoaderTest, LanesAreAtMost64) {
    std::string yaml = "limits:\n  lanes:\n";
    for (int i = 0; i < 65; ++i) yaml += "    - {name: l" + std::to_string(i) + "}\n";
    yaml += "models:\n  - {name: a, deployments: [{model: m, api_base: \"http://h:1\"}]}\n";
    const LoadResult result = LoadConfigText(yaml, "l.yaml", FakeEnv({}));
    ASSERT_EQ(result.problems.size(), 1u) << AllProblems(result);
    EXPECT_EQ(result.problems[0].ToString(), "l.yaml:3: 'lanes' may list at most 64 lanes");
}

// Documents of every odd shape are problems with lines, never an exception: a reload of such a
// file is refused and the running config keeps serving.
TEST(ConfigLoaderTest, OddShapesAreProblemsNeverExceptions) {
    const std::vector<std::string> sections = {
        "server",    "timeouts",    "log",         "retry",  "health", "alerts", "state",
        "telemetry", "degradation", "idempotency", "limits", "keys",   "models"};
    const std::vector<std::string> values = {
        "7", "[1, [2]]", "{a: {b: c}}", "~", "!!binary aGVsbG8=", "{? [x] : y}", "*anchor"};
    for (const std::string& section : sections) {
        for (const std::string& value : values) {
            const std::string yaml = "anchors: &anchor {x: [1, 2]}\n" + section + ": " + value +
                                     "\nmodels: [{name: a, deployments: [{model: m}]}]\n";
            LoadResult result;
            EXPECT_NO_THROW(result = LoadConfigText(yaml, "odd.yaml", FakeEnv({}))) << yaml;
            EXPECT_NE(result.config == nullptr, result.problems.empty()) << yaml;
            EXPECT_FALSE(result.problems.empty()) << yaml;
        }
    }
}

}  // namespace config_loader_test
}  // namespace switchyard::config
