#include "config/config_loader.h"

#include <gtest/gtest.h>

#include <map>

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
    EXPECT_TRUE(HasProblem(result, 5, "duplicate model group name 'a'")) << AllProblems(result);
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

}  // namespace
}  // namespace switchyard::config
