#include "config/litellm_import.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "config/config_loader.h"

namespace switchyard::config {
namespace {

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

}  // namespace
}  // namespace switchyard::config
