#include "config/config_loader.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "policy/outcome.h"

namespace switchyard::config {
namespace {

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

}  // namespace
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

}  // namespace switchyard::config

namespace switchyard::config {
namespace {

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

}  // namespace
}  // namespace switchyard::config
