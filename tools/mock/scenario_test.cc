#include "scenario.h"

#include <gtest/gtest.h>

namespace switchyard::mock {
namespace {

std::shared_ptr<const Scenario> ParseOk(std::string_view text) {
    ParsedScenario parsed = ParseScenario(text);
    EXPECT_TRUE(parsed.ok()) << parsed.error;
    return parsed.scenario;
}

TEST(Scenario, FirstMatchingRuleWins) {
    const auto scenario = ParseOk(R"({"rules":[
        {"match":{"model":"a","path":"/v1/chat/completions"},"fault":"status=500"},
        {"match":{"model":"a"},"fault":"status=503"},
        {"fault":"chunks=2"}]})");
    ASSERT_EQ(scenario->rules().size(), 3u);
    EXPECT_EQ(scenario->Match("a", "/v1/chat/completions")->fault.status, 500);
    EXPECT_EQ(scenario->Match("a", "/chat/completions")->fault.status, 503);
    EXPECT_EQ(scenario->Match("b", "/v1/chat/completions")->fault.chunks, 2);
    EXPECT_EQ(scenario->Match("b", "/v1/chat/completions")->fault_text, "chunks=2");
}

TEST(Scenario, TimesLimitsARuleToItsFirstMatches) {
    const auto scenario = ParseOk(R"({"rules":[
        {"match":{"model":"a"},"fault":"status=429","times":2},
        {"match":{"model":"a"},"fault":"status=500","times":0}]})");
    EXPECT_EQ(scenario->Match("b", "/x"), nullptr);  // Does not consume rule 0.
    EXPECT_EQ(scenario->Match("a", "/x")->fault.status, 429);
    EXPECT_EQ(scenario->Match("a", "/x")->fault.status, 429);
    EXPECT_EQ(scenario->Match("a", "/x"), nullptr);
    EXPECT_EQ(scenario->Match("a", "/x"), nullptr);
}

TEST(Scenario, BatchRulesServeBatchCreationsOnly) {
    const auto scenario = ParseOk(R"({"rules":[
        {"match":{"model":"a"},"fault":"batch_refuse=queue_limit","times":1},
        {"match":{"model":"a"},"fault":"status=500","times":1},
        {"match":{"model":"a"},"fault":"batch_ms=10"}]})");
    // A request skips the batch rules and so leaves their times alone, and the other way round.
    EXPECT_EQ(scenario->Match("a", "/v1/chat/completions")->fault.status, 500);
    EXPECT_EQ(scenario->Match("a", "/v1/chat/completions"), nullptr);
    const ScenarioRule* first = scenario->Match("a", "/v1/batches", RuleScope::kBatch);
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(first->fault.batch_refuse, BatchRefusal::kQueueLimit);
    EXPECT_EQ(scenario->Match("a", "/v1/batches", RuleScope::kBatch)->fault.batch_ms,
              std::chrono::milliseconds(10));
    EXPECT_EQ(scenario->Match("b", "/v1/batches", RuleScope::kBatch), nullptr);
}

TEST(Scenario, EmptyRules) { EXPECT_EQ(ParseOk(R"({"rules":[]})")->Match("a", "/"), nullptr); }

TEST(Scenario, RejectsMalformedScenarios) {
    const std::pair<const char*, const char*> cases[] = {
        {"{", "not valid JSON"},
        {"[]", "must be a JSON object"},
        {"{}", "\"rules\" array"},
        {R"({"rules":{}})", "\"rules\" array"},
        {R"({"rules":[],"extra":1})", "unknown scenario field 'extra'"},
        {R"({"rules":[1]})", "rules[0]: must be an object"},
        {R"({"rules":[{"match":{}}]})", "rules[0]: fault is required"},
        {R"({"rules":[{"fault":"status=200"}]})", "rules[0]: fault: bad value for status"},
        {R"({"rules":[{"fault":""},{"fault":5}]})", "rules[1]: fault must be a string"},
        {R"({"rules":[{"fault":"","times":1.5}]})", "times must be a non-negative integer"},
        {R"({"rules":[{"fault":"","times":-1}]})", "times must be a non-negative integer"},
        {R"({"rules":[{"fault":"","match":{"model":1}}]})", "match.model must be a string"},
        {R"({"rules":[{"fault":"","match":{"method":"GET"}}]})", "unknown match field 'method'"},
        {R"({"rules":[{"fault":"","when":{}}]})", "unknown field 'when'"},
    };
    for (const auto& [text, expected] : cases) {
        const ParsedScenario parsed = ParseScenario(text);
        EXPECT_FALSE(parsed.ok()) << text;
        EXPECT_NE(parsed.error.find(expected), std::string::npos) << text << " -> " << parsed.error;
    }
}

TEST(ScenarioStore, SwapsWholeScenarios) {
    ScenarioStore store;
    EXPECT_EQ(store.Get(), nullptr);
    const auto first = ParseOk(R"({"rules":[{"fault":"status=500"}]})");
    store.Set(first);
    const auto held = store.Get();
    store.Set(nullptr);
    EXPECT_EQ(store.Get(), nullptr);
    EXPECT_EQ(held->Match("m", "/")->fault.status, 500) << "a held snapshot stays usable";
}

}  // namespace
}  // namespace switchyard::mock
