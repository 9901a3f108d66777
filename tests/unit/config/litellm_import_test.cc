#include "config/litellm_import.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "config/config_loader.h"

namespace switchyard::config {
namespace litellm_import_test {

using policy::ErrorClass;

// The LiteLLM block of docs/resilience.md's source, verbatim (shared with the integration test).
std::string ArticleBlock() {
    std::ifstream in(std::string(SWITCHYARD_SOURCE_DIR) +
                     "/tests/fixtures/litellm_article_block.yaml");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

constexpr std::string_view kModelList = R"(model_list:
  - model_name: support-primary
    litellm_params:
      model: openai/gpt-4o
      api_base: http://127.0.0.1:9/v1
      api_key: os.environ/OPENAI_API_KEY
  - model_name: support-secondary
    litellm_params:
      model: anthropic/claude-sonnet-4-5
      api_key: os.environ/ANTHROPIC_API_KEY
)";

EnvLookup FakeEnv() {
    return [](std::string_view) -> std::optional<std::string> { return "sk-test-key"; };
}

bool Mentions(const LiteLlmImport& imported, std::string_view text) {
    return std::any_of(
        imported.unmapped.begin(), imported.unmapped.end(),
        [&](const std::string& note) { return note.find(text) != std::string::npos; });
}

bool HasProblemAbout(const LoadResult& result, std::string_view text) {
    return std::any_of(result.problems.begin(), result.problems.end(),
                       [&](const Problem& p) { return p.message.find(text) != std::string::npos; });
}

std::string AllProblems(const LoadResult& result) {
    std::string all;
    for (const auto& p : result.problems) all += p.ToString() + "\n";
    return all;
}

TEST(LiteLlmImportTest, TheArticleBlockImportsUnchangedAndKeepsItsMeaning) {
    ASSERT_NE(ArticleBlock().find("RateLimitErrorRetries: 3"), std::string::npos);
    const std::string file = std::string(kModelList) + ArticleBlock();
    ASSERT_TRUE(LooksLikeLiteLlm(file));
    const LiteLlmImport imported = ImportLiteLlm(file);
    ASSERT_TRUE(imported.error.empty()) << imported.error;
    const LoadResult loaded = LoadConfigText(imported.yaml, "imported.yaml", FakeEnv());
    ASSERT_TRUE(loaded.problems.empty()) << AllProblems(loaded) << imported.yaml;
    const Config& c = *loaded.config;
    // allowed_fails per minute, cooldown_time in seconds.
    EXPECT_EQ(c.health.allowed_fails, 3);
    EXPECT_EQ(c.health.window, std::chrono::minutes(1));
    EXPECT_EQ(c.health.cooldown, std::chrono::seconds(30));
    // Retries first on the group (LiteLLM's meaning), per class: 3 for rate limits, 2 otherwise.
    ASSERT_TRUE(c.retry.num_retries);
    EXPECT_EQ(*c.retry.num_retries, 3);
    EXPECT_EQ(c.retry.class_retries[ErrorClass::kRateLimited], 3);
    EXPECT_EQ(c.retry.class_retries[ErrorClass::kServerError], 2);
    EXPECT_EQ(c.retry.class_retries[ErrorClass::kOverloaded], 2);
    EXPECT_EQ(c.retry.class_retries[ErrorClass::kBadRequest], 0) << "never retried";
    EXPECT_EQ(c.retry.class_retries[ErrorClass::kAuth], 0);
    EXPECT_GE(c.retry.max_attempts, 8) << "room for the retries of both groups";
    // The fallback and the deployments.
    const ModelGroup* primary = c.FindGroup("support-primary");
    ASSERT_NE(primary, nullptr);
    EXPECT_EQ(primary->fallbacks, std::vector<std::string>{"support-secondary"});
    ASSERT_EQ(primary->deployments.size(), 1u);
    EXPECT_EQ(primary->deployments[0].provider, Provider::kOpenAi);
    EXPECT_EQ(primary->deployments[0].model, "gpt-4o");
    EXPECT_EQ(c.FindGroup("support-secondary")->deployments[0].provider, Provider::kAnthropic);
    // What has no counterpart is said, not dropped.
    EXPECT_TRUE(Mentions(imported, "enable_pre_call_checks")) << imported.unmapped.size();
}

TEST(LiteLlmImportTest, TheBlockAloneSaysItsGroupsHaveNoDeployments) {
    const LiteLlmImport imported = ImportLiteLlm(ArticleBlock());
    ASSERT_TRUE(imported.error.empty());
    EXPECT_TRUE(Mentions(imported, "model group support-primary"));
    const LoadResult loaded = LoadConfigText(imported.yaml, "imported.yaml", FakeEnv());
    EXPECT_FALSE(loaded.problems.empty()) << "a config without deployments must not pass";
}

TEST(LiteLlmImportTest, ARealisticMultiProviderConfig) {
    constexpr std::string_view kFile = R"(model_list:
  - model_name: gpt-4o
    litellm_params:
      model: openai/gpt-4o
      api_key: os.environ/OPENAI_API_KEY
      rpm: 500
      tpm: 30000
      order: 2
  - model_name: gpt-4o
    litellm_params:
      model: openai/gpt-4o
      api_base: https://eu.example.com/v1
      api_key: os.environ/EU_KEY
      order: 1
  - model_name: gpt-4o
    litellm_params:
      model: azure/gpt-4o-deployment
      api_base: https://x.openai.azure.com
  - model_name: claude
    litellm_params:
      model: anthropic/claude-sonnet-4-5
      api_key: os.environ/ANTHROPIC_API_KEY
      rpm: 50
      tpm: 40000
    model_info:
      input_cost_per_token: 0.000003
      output_cost_per_token: 0.000015
  - model_name: claude-long
    litellm_params:
      model: claude-opus-4
  - model_name: embed
    litellm_params:
      model: text-embedding-3-small
    model_info:
      mode: embedding
router_settings:
  routing_strategy: least-busy
  timeout: 30
  num_retries: 1
  fallbacks: [{"gpt-4o": ["claude"]}]
  context_window_fallbacks: [{"claude": ["claude-long"]}]
litellm_settings:
  drop_params: true
general_settings:
  master_key: os.environ/LITELLM_MASTER_KEY
)";
    const LiteLlmImport imported = ImportLiteLlm(kFile);
    ASSERT_TRUE(imported.error.empty()) << imported.error;
    const LoadResult loaded = LoadConfigText(imported.yaml, "imported.yaml", FakeEnv());
    ASSERT_TRUE(loaded.problems.empty()) << AllProblems(loaded) << imported.yaml;
    const Config& c = *loaded.config;
    EXPECT_FALSE(c.server.master_key.Empty());
    EXPECT_EQ(c.timeouts.total, std::chrono::seconds(30));
    EXPECT_EQ(c.health.cooldown, std::chrono::seconds(5)) << "LiteLLM's default";
    const ModelGroup& gpt = *c.FindGroup("gpt-4o");
    EXPECT_EQ(gpt.strategy, Strategy::kPriority) << "order given";
    ASSERT_EQ(gpt.deployments.size(), 2u) << "the Azure one is not served";
    EXPECT_EQ(gpt.deployments[0].api_base, "https://eu.example.com/v1") << "order 1 first";
    EXPECT_EQ(gpt.deployments[1].limits.rpm, 500);
    EXPECT_EQ(gpt.deployments[1].limits.tpm, 30000);
    EXPECT_EQ(gpt.fallbacks, std::vector<std::string>{"claude"});
    const ModelGroup& claude = *c.FindGroup("claude");
    EXPECT_EQ(claude.strategy, Strategy::kLeastInFlight);
    EXPECT_EQ(claude.deployments[0].limits.itpm, 40000);
    EXPECT_DOUBLE_EQ(claude.deployments[0].input_price, 3.0) << "per million tokens";
    EXPECT_DOUBLE_EQ(claude.deployments[0].output_price, 15.0);
    EXPECT_EQ(claude.context_window_fallbacks, std::vector<std::string>{"claude-long"});
    EXPECT_EQ(c.FindGroup("claude-long")->deployments[0].provider, Provider::kAnthropic);
    EXPECT_EQ(c.FindGroup("embed")->mode, GroupMode::kEmbeddings);
    EXPECT_EQ(*c.retry.num_retries, 1);
    EXPECT_TRUE(Mentions(imported, "azure"));
    EXPECT_TRUE(Mentions(imported, "litellm_settings.drop_params"));
}

TEST(LiteLlmImportTest, SwitchyardConfigsAndGarbageAreNotLiteLlm) {
    EXPECT_FALSE(LooksLikeLiteLlm("models:\n  - name: a\n"));
    EXPECT_FALSE(LooksLikeLiteLlm("model_list: []\nmodels: []\n"));
    EXPECT_FALSE(LooksLikeLiteLlm("[1, 2"));
    EXPECT_FALSE(ImportLiteLlm("[1, 2").error.empty());
    EXPECT_FALSE(ImportLiteLlm("- a\n- b\n").error.empty());
}

// LiteLLM calls {api_base}/v1/messages for Anthropic; Switchyard calls {api_base}/messages. An
// origin copied as written sent requests to https://api.anthropic.com/messages.
TEST(LiteLlmImportTest, AnAnthropicApiBaseEndsInV1) {
    constexpr std::string_view kFile = R"(model_list:
  - model_name: origin
    litellm_params: {model: anthropic/claude-sonnet-4-5, api_base: "https://api.anthropic.com"}
  - model_name: slash
    litellm_params: {model: anthropic/claude-sonnet-4-5, api_base: "https://gw.example/anthropic/"}
  - model_name: full
    litellm_params: {model: anthropic/claude-sonnet-4-5, api_base: "https://gw.example/v1/messages"}
  - model_name: v1
    litellm_params: {model: claude-sonnet-4-5, api_base: "https://gw.example/v1"}
  - model_name: openai
    litellm_params: {model: openai/gpt-4o, api_base: "http://127.0.0.1:9"}
  - model_name: vllm
    litellm_params: {model: hosted_vllm/llama, api_base: "http://127.0.0.1:8000/v1"}
)";
    const LiteLlmImport imported = ImportLiteLlm(kFile);
    ASSERT_TRUE(imported.error.empty()) << imported.error;
    const LoadResult loaded = LoadConfigText(imported.yaml, "imported.yaml", FakeEnv());
    ASSERT_TRUE(loaded.problems.empty()) << AllProblems(loaded) << imported.yaml;
    const Config& c = *loaded.config;
    const auto deployment = [&](const char* group) { return c.FindGroup(group)->deployments[0]; };
    EXPECT_EQ(deployment("origin").api_base, "https://api.anthropic.com/v1");
    EXPECT_EQ(deployment("origin").base_url.path_prefix + "/messages", "/v1/messages");
    EXPECT_EQ(deployment("slash").api_base, "https://gw.example/anthropic/v1");
    EXPECT_EQ(deployment("full").api_base, "https://gw.example/v1");
    EXPECT_EQ(deployment("v1").api_base, "https://gw.example/v1");
    // OpenAI-compatible bases mean the same to both: {api_base}/chat/completions.
    EXPECT_EQ(deployment("openai").api_base, "http://127.0.0.1:9");
    EXPECT_EQ(deployment("vllm").api_base, "http://127.0.0.1:8000/v1");
}

// LiteLLM's Router takes num_retries, timeout, allowed_fails, fallbacks, ... from router_settings
// and from litellm_settings only where router_settings is silent; the import took whichever
// section came last in the file.
TEST(LiteLlmImportTest, RouterSettingsTakePrecedenceOverLiteLlmSettings) {
    constexpr std::string_view kRouter = R"(router_settings:
  num_retries: 2
  timeout: 30
  allowed_fails: 4
  cooldown_time: 10
  fallbacks: [{"a": ["b"]}]
)";
    constexpr std::string_view kLiteLlm = R"(litellm_settings:
  num_retries: 5
  request_timeout: 600
  allowed_fails: 1
  cooldown_time: 60
  fallbacks: [{"a": ["c"]}]
  retry_after: 3
)";
    const std::string models = R"(model_list:
  - {model_name: a, litellm_params: {model: openai/gpt-4o, api_base: "http://127.0.0.1:9/v1"}}
  - {model_name: b, litellm_params: {model: openai/gpt-4o, api_base: "http://127.0.0.1:9/v1"}}
  - {model_name: c, litellm_params: {model: openai/gpt-4o, api_base: "http://127.0.0.1:9/v1"}}
)";
    for (const std::string& file : {models + std::string(kLiteLlm) + std::string(kRouter),
                                    models + std::string(kRouter) + std::string(kLiteLlm)}) {
        const LiteLlmImport imported = ImportLiteLlm(file);
        ASSERT_TRUE(imported.error.empty()) << imported.error;
        const LoadResult loaded = LoadConfigText(imported.yaml, "imported.yaml", FakeEnv());
        ASSERT_TRUE(loaded.problems.empty()) << AllProblems(loaded) << imported.yaml;
        const Config& c = *loaded.config;
        EXPECT_EQ(c.retry.num_retries, 2) << file;
        EXPECT_EQ(c.timeouts.total, std::chrono::seconds(30)) << file;
        EXPECT_EQ(c.health.allowed_fails, 4) << file;
        EXPECT_EQ(c.health.cooldown, std::chrono::seconds(10)) << file;
        EXPECT_EQ(c.FindGroup("a")->fallbacks, std::vector<std::string>{"b"}) << file;
        // The report says which value was taken and which ignored.
        constexpr std::string_view kWhy =
            " is taken instead, as LiteLLM's Router gives router_settings precedence over "
            "litellm_settings";
        for (const char* note :
             {"litellm_settings.num_retries: ignored (5): router_settings.num_retries (2)",
              "litellm_settings.request_timeout: ignored (600): router_settings.timeout (30)",
              "litellm_settings.allowed_fails: ignored (1): router_settings.allowed_fails (4)",
              "litellm_settings.cooldown_time: ignored (60): router_settings.cooldown_time (10)",
              "litellm_settings.fallbacks: ignored: router_settings.fallbacks"}) {
            EXPECT_TRUE(Mentions(imported, std::string(note) + std::string(kWhy))) << note;
        }
        EXPECT_TRUE(Mentions(imported, "litellm_settings.retry_after: no counterpart"));
    }
}

// litellm_settings.cache turns on each group's response cache (docs/answers.md), serving every
// exact repeat as LiteLLM does, with LiteLLM's TTL; what it does beyond that is reported.
TEST(LiteLlmImportTest, TheLiteLlmCacheBecomesTheGroupsCaches) {
    const std::string models = R"(model_list:
  - {model_name: chat, litellm_params: {model: openai/gpt-4o, api_base: "http://127.0.0.1:9/v1"}}
  - model_name: embed
    litellm_params: {model: openai/text-embedding-3-small, api_base: "http://127.0.0.1:9/v1"}
    model_info: {mode: embedding}
)";
    const auto import_with = [&](std::string_view settings) {
        const LiteLlmImport imported = ImportLiteLlm(models + std::string(settings));
        EXPECT_TRUE(imported.error.empty()) << imported.error;
        const LoadResult loaded = LoadConfigText(imported.yaml, "imported.yaml", FakeEnv());
        EXPECT_TRUE(loaded.problems.empty()) << AllProblems(loaded) << imported.yaml;
        return std::make_pair(imported, loaded.config);
    };

    auto [redis, config] = import_with(R"(litellm_settings:
  cache: true
  cache_params:
    type: redis
    host: redis.internal
    password: os.environ/REDIS_PASSWORD
    ttl: 600
    supported_call_types: [acompletion, completion]
)");
    ASSERT_TRUE(config);
    const ModelGroup& chat = *config->FindGroup("chat");
    ASSERT_TRUE(chat.cache);
    EXPECT_EQ(chat.cache->serve, CacheConfig::Serve::kAlways);
    EXPECT_EQ(chat.cache->ttl, std::chrono::seconds(600));
    EXPECT_FALSE(config->FindGroup("embed")->cache) << "embeddings are not a supported call type";
    EXPECT_TRUE(Mentions(redis, "litellm_settings.cache_params.type: 'redis': Switchyard keeps"));
    EXPECT_TRUE(Mentions(redis, "litellm_settings.cache_params.host: no counterpart"));
    EXPECT_TRUE(Mentions(redis, "litellm_settings.cache_params.password: no counterpart"));
    EXPECT_FALSE(Mentions(redis, "litellm_settings.cache: no counterpart"));

    auto [semantic, semantic_config] = import_with(R"(litellm_settings:
  cache: True
  cache_params: {type: redis-semantic, similarity_threshold: 0.8}
)");
    ASSERT_TRUE(semantic_config);
    EXPECT_TRUE(semantic_config->FindGroup("chat")->cache);
    EXPECT_TRUE(semantic_config->FindGroup("embed")->cache);
    EXPECT_EQ(semantic_config->FindGroup("chat")->cache->ttl, CacheConfig{}.ttl);
    EXPECT_TRUE(Mentions(semantic, "semantic caching has no counterpart"));
    EXPECT_TRUE(Mentions(semantic, "litellm_settings.cache_params.ttl: not set"));

    auto [off, off_config] = import_with(R"(litellm_settings:
  cache: true
  cache_params: {type: local, mode: default_off}
)");
    ASSERT_TRUE(off_config);
    EXPECT_FALSE(off_config->FindGroup("chat")->cache) << "LiteLLM caches only when asked";
    EXPECT_TRUE(Mentions(off, "litellm_settings.cache_params.mode: default_off"));

    auto [none, none_config] = import_with("litellm_settings: {cache_params: {ttl: 60}}\n");
    ASSERT_TRUE(none_config);
    EXPECT_FALSE(none_config->FindGroup("chat")->cache);
    EXPECT_TRUE(Mentions(none, "litellm_settings.cache is not true"));
}

// What a LiteLLM file can do to the importer: an alias bomb, numbers past every bound.
TEST(LiteLlmImportTest, HostileFilesAreErrorsNotCrashes) {
    std::string bomb =
        "model_list: []\nlitellm_settings:\n  x: &a [\"l\",\"l\",\"l\",\"l\",\"l\"]\n";
    for (char level = 'b'; level <= 'm'; ++level) {
        bomb += std::string("  ") + level + ": &" + level + " [*" + char(level - 1) + ",*" +
                char(level - 1) + ",*" + char(level - 1) + ",*" + char(level - 1) + ",*" +
                char(level - 1) + "]\n";
    }
    ASSERT_TRUE(LooksLikeLiteLlm(bomb));
    const LiteLlmImport exploded = ImportLiteLlm(bomb);
    EXPECT_NE(exploded.error.find("expands the document past 200000 YAML nodes"), std::string::npos)
        << exploded.error;

    const LiteLlmImport huge = ImportLiteLlm(std::string(kModelList) + R"(router_settings:
  num_retries: 1000000000000000
  timeout: 1e300
  cooldown_time: .inf
  fallbacks: [{"support-primary": ["support-secondary", "support-secondary", "support-secondary"]}]
)");
    ASSERT_TRUE(huge.error.empty()) << huge.error;
    const LoadResult loaded = LoadConfigText(huge.yaml, "imported.yaml", FakeEnv());
    EXPECT_TRUE(HasProblemAbout(loaded, "'total_ms' must be between")) << AllProblems(loaded);
    EXPECT_EQ(loaded.problems.size(), 1u) << AllProblems(loaded) << huge.yaml;
}

}  // namespace litellm_import_test
}  // namespace switchyard::config
