#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>

#include "contention.h"
#include "gateway_run.h"
#include "scenario.h"

namespace switchyard::sim {
namespace simulator_test {

// Writes `text` to a scenario file of its own and returns the path.
std::string ScenarioFile(const std::string& name, const std::string& text) {
    const auto path = std::filesystem::temp_directory_path() / ("switchyard-sim-" + name + ".yaml");
    std::ofstream(path) << text;
    return path.string();
}

double Figure(const RunResult& result, const std::string& name) {
    for (const auto& [n, v] : result.figures) {
        if (n == name) return v;
    }
    throw std::runtime_error("no figure " + name);
}

// Runs every variant of the scenario `text` once with seed 1, by variant name.
std::map<std::string, RunResult> RunVariants(const std::string& name, const std::string& text) {
    std::map<std::string, RunResult> results;
    for (const RunSpec& run : LoadScenario(ScenarioFile(name, text), {})) {
        results.emplace(run.variant, RunGatewayScenario(run.scenario, 1));
    }
    return results;
}

const char* kOneDeployment = R"(
name: one
duration_s: 60
gateway:
  models:
    - name: chat
      deployments:
        - {name: a, provider: openai, model: gpt-4.1, api_key: os.environ/K}
providers:
  a:
    latency_ms: {median: 300, p99: 900}
clients:
  - {name: app, model: chat, rate_per_s: 5}
)";

TEST(SimulatorTest, AHealthyDeploymentAnswersEveryRequestWithOneCall) {
    const auto runs = LoadScenario(ScenarioFile("healthy", kOneDeployment), {});
    ASSERT_EQ(runs.size(), 1u);
    const RunResult result = RunGatewayScenario(runs[0].scenario, 1);
    const double requests = Figure(result, "requests");
    EXPECT_GT(requests, 200);  // Poisson at 5/s for a minute
    EXPECT_EQ(Figure(result, "ok"), requests);
    EXPECT_EQ(Figure(result, "upstream_calls"), requests);
    EXPECT_EQ(Figure(result, "unfinished"), 0);
    // The latency model: a median near 300 ms.
    EXPECT_GT(Figure(result, "p50_ok_ms"), 250);
    EXPECT_LT(Figure(result, "p50_ok_ms"), 350);
}

TEST(SimulatorTest, TheSameSeedGivesTheSameRunAndAnotherSeedAnother) {
    const auto runs =
        LoadScenario(ScenarioFile("seeds", kOneDeployment),
                     {"providers.a.faults=[{fault: \"status=500; probability=0.3\"}]"});
    const RunResult first = RunGatewayScenario(runs[0].scenario, 7);
    const RunResult again = RunGatewayScenario(runs[0].scenario, 7);
    const RunResult other = RunGatewayScenario(runs[0].scenario, 8);
    EXPECT_EQ(first.figures, again.figures);
    EXPECT_NE(first.figures, other.figures);
}

TEST(SimulatorTest, FiveLayersOfThreeTriesMakeTwoHundredFortyThreeCalls) {
    const auto runs = LoadScenario(
        ScenarioFile("layers", kOneDeployment),
        {"providers.a.faults=[{fault: \"status=503\"}]", "clients.0.direct=a",
         "clients.0.model=\"\"",
         "clients.0.layers=[{max_retries: 2, backoff: none}, {max_retries: 2, backoff: none}, "
         "{max_retries: 2, backoff: none}, {max_retries: 2, backoff: none}, "
         "{max_retries: 2, backoff: none}]"});
    const RunResult result = RunGatewayScenario(runs[0].scenario, 1);
    EXPECT_EQ(Figure(result, "ok"), 0);
    EXPECT_DOUBLE_EQ(Figure(result, "upstream_per_request"), 243);
}

TEST(SimulatorTest, TheGatewaysShouldRetryFalseStopsTheSdkAndHealthStopsTheCalls) {
    // A full outage behind the gateway, the official SDK in front: the SDK does not retry the
    // gateway's give-ups, and cooldown and breaker soon answer without calling upstream.
    const auto runs =
        LoadScenario(ScenarioFile("outage", kOneDeployment),
                     {"providers.a.faults=[{fault: \"status=503\"}]", "clients.0.layers=[sdk]"});
    const RunResult result = RunGatewayScenario(runs[0].scenario, 1);
    EXPECT_EQ(Figure(result, "client_http_per_request"), 1);
    EXPECT_LT(Figure(result, "upstream_per_request"), 0.1);
}

TEST(SimulatorTest, AFallbackServesWhatThePrimaryCannot) {
    const auto runs = RunVariants("fallback", R"(
duration_s: 60
gateway:
  models:
    - name: chat
      fallbacks: [backup]
      deployments: [{name: a, provider: anthropic, model: claude-x, api_key: os.environ/K}]
    - name: backup
      deployments: [{name: b, provider: openai, model: gpt-4.1, api_key: os.environ/K}]
providers:
  a: {faults: [{from_s: 10, to_s: 40, fault: "status=529"}]}
clients:
  - {model: chat, rate_per_s: 5}
variants:
  - name: chain
  - name: alone
    set: {gateway.models.0.fallbacks: []}
)");
    ASSERT_EQ(runs.size(), 2u);
    const RunResult& chain = runs.at("chain");
    const RunResult& alone = runs.at("alone");
    EXPECT_EQ(Figure(chain, "availability_pct"), 100);
    EXPECT_GT(Figure(chain, "calls.b"), 100);
    EXPECT_LT(Figure(alone, "availability_pct"), 60);  // half the minute is the outage
    EXPECT_EQ(Figure(alone, "calls.b"), 0);
}

TEST(SimulatorTest, SelfThrottlingAvoidsTheProvidersRateLimit) {
    const auto runs = RunVariants("limits", R"(
duration_s: 20
gateway:
  models:
    - name: chat
      deployments: [{name: a, provider: openai, model: gpt-4.1, api_key: os.environ/K,
                     limits: {rpm: 120}}]
providers:
  a: {limits: "rpm=120"}
clients:
  - {model: chat, burst: 20}
variants:
  - name: throttled
  - name: unthrottled
    set: {gateway.limits: {self_throttle: false}}
)");
    ASSERT_EQ(runs.size(), 2u);
    const RunResult& throttled = runs.at("throttled");
    const RunResult& unthrottled = runs.at("unthrottled");
    EXPECT_EQ(Figure(throttled, "upstream_429"), 0);
    EXPECT_EQ(Figure(throttled, "ok"), 20);
    EXPECT_GT(Figure(unthrottled, "upstream_429"), 0);
}

TEST(SimulatorTest, AGroupsResidencyHoldsAlongTheChainAsInTheGateway) {
    const auto runs = RunVariants("residency", R"(
duration_s: 20
gateway:
  models:
    - name: chat
      residency: [eu]
      fallbacks: [backup]
      deployments: [{name: a, model: m, api_key: os.environ/K, region: eu}]
    - name: backup
      deployments: [{name: b, model: n, api_key: os.environ/K, region: us}]
providers:
  a: {faults: [{fault: "status=500"}]}
clients:
  - {model: chat, rate_per_s: 5}
variants:
  - name: eu-only
  - name: anywhere
    set: {gateway.models.0.residency: []}
)");
    ASSERT_EQ(runs.size(), 2u);
    const RunResult& eu = runs.at("eu-only");
    const RunResult& anywhere = runs.at("anywhere");
    EXPECT_EQ(Figure(eu, "calls.b"), 0);
    EXPECT_EQ(Figure(eu, "ok"), 0);
    EXPECT_EQ(Figure(anywhere, "availability_pct"), 100);
    EXPECT_GT(Figure(anywhere, "calls.b"), 50);
}

TEST(SimulatorTest, ScenarioMistakesAreNamed) {
    EXPECT_THROW(LoadScenario(ScenarioFile("typo", "name: x\ndurration_s: 5\n"), {}),
                 std::runtime_error);
    try {
        LoadScenario(ScenarioFile("fault", std::string(kOneDeployment) +
                                               "variants: [{name: v, set: {providers.a.faults: "
                                               "[{fault: \"status=7\"}]}}]\n"),
                     {});
        FAIL() << "a bad fault spec loads";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("providers.a.faults.0"), std::string::npos)
            << e.what();
    }
    const auto runs =
        LoadScenario(ScenarioFile("config", kOneDeployment), {"gateway.retry.max_attempts=0"});
    EXPECT_THROW(RunGatewayScenario(runs[0].scenario, 1), std::runtime_error);
}

TEST(ContentionTest, JitterCutsTheWorkOfContendingClients) {
    ContentionSpec spec;
    spec.clients = {50};
    spec.strategies = {"none", "exponential", "full", "equal", "decorrelated"};
    spec.repetitions = 10;
    const auto rows = RunContention(spec, 1);
    ASSERT_EQ(rows.size(), 5u);
    const auto calls = [&](const std::string& s) {
        for (const auto& r : rows) {
            if (r.strategy == s) return r;
        }
        throw std::runtime_error(s);
    };
    // Every client finishes with one successful write: at least 50 attempts each run.
    for (const auto& r : rows) EXPECT_GE(r.calls, 50) << r.strategy;
    // The published ordering: jitter does far less work than no jitter, exponential without
    // jitter takes far longer than everything else.
    EXPECT_LT(calls("full").calls, calls("exponential").calls * 0.7);
    EXPECT_LT(calls("full").calls, calls("none").calls * 0.7);
    EXPECT_GT(calls("exponential").time_ms, calls("full").time_ms * 3);
    EXPECT_GT(calls("equal").time_ms, calls("full").time_ms);
}

}  // namespace simulator_test
}  // namespace switchyard::sim
