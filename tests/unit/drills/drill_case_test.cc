#include "drills/drill_case.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "config/config_loader.h"
#include "drills/drill_entries.h"
#include "drills/drill_report.h"

namespace switchyard::drills {
namespace drill_case_test {

namespace json = boost::json;

DrillCase Parsed(std::string_view line) {
    auto parsed = ParseCase(line, "chat");
    if (auto* problem = std::get_if<std::string>(&parsed)) ADD_FAILURE() << *problem;
    return std::get<DrillCase>(std::move(parsed));
}

std::string Problem(std::string_view line) {
    auto parsed = ParseCase(line, "chat");
    const auto* problem = std::get_if<std::string>(&parsed);
    return problem != nullptr ? *problem : "(parsed)";
}

TEST(DrillCaseTest, ReadsTheRequestInItsApiWithTheGroupAsModelAndNoStream) {
    const DrillCase chat = Parsed(
        R"({"id":"a","request":{"model":"x","stream":true,"stream_options":{},"messages":[]}})");
    EXPECT_EQ(chat.id, "a");
    EXPECT_EQ(chat.wire, api::Wire::kOpenAi);
    EXPECT_EQ(json::parse(chat.body), json::parse(R"({"model":"chat","messages":[]})"));
    EXPECT_EQ(Parsed(R"({"id":"r","request":{"input":"hi"}})").wire, api::Wire::kResponses);
    EXPECT_EQ(
        Parsed(R"({"id":"m","api":"messages","request":{"max_tokens":9,"messages":[]}})").wire,
        api::Wire::kAnthropic);
}

TEST(DrillCaseTest, RefusesWhatCannotRunWithTheReason) {
    EXPECT_EQ(Problem("[1]"), "a case must be one JSON object");
    EXPECT_EQ(Problem(R"({"request":{}})"), "'id' must be a non-empty string");
    EXPECT_EQ(Problem(R"({"id":"a"})"),
              "'request' must be an object (a chat, messages or responses body)");
    EXPECT_EQ(Problem(R"({"id":"a","request":{},"api":"batch"})"),
              "'api' must be \"chat\", \"messages\" or \"responses\"");
    EXPECT_EQ(Problem(R"({"id":"a","request":{},"want":1})"),
              "unknown member 'want' (id, request, expect, api)");
    EXPECT_EQ(Problem(R"({"id":"a","request":{},"expect":{"equals":"x"}})"),
              "unknown expectation 'equals' (contains, not_contains, regex, json_schema, "
              "max_latency_ms, max_cost)");
    EXPECT_EQ(Problem(R"({"id":"a","request":{},"expect":{"contains":[1]}})"),
              "expect.contains must be a string or a non-empty array of strings");
    EXPECT_EQ(Problem(R"({"id":"a","request":{},"expect":{"max_cost":-1}})"),
              "expect.max_cost must be a number >= 0");
    EXPECT_NE(Problem(R"({"id":"a","request":{},"expect":{"regex":"(?<=a)b"}})")
                  .find("expect.regex '(?<=a)b' cannot be run"),
              std::string::npos);
    EXPECT_NE(Problem(R"({"id":"a","request":{},"expect":{"json_schema":{"type":"nope"}}})")
                  .find("expect.json_schema cannot be checked"),
              std::string::npos);
}

TEST(DrillCaseTest, AFileNeedsUniqueIdsAndSaysWhichLine) {
    const CaseFile good =
        ParseCases("{\"id\":\"a\",\"request\":{}}\n\n{\"id\":\"b\",\"request\":{}}\r\n", "chat");
    ASSERT_TRUE(good.problems.empty());
    ASSERT_EQ(good.cases.size(), 2u);
    EXPECT_EQ(good.cases[1].id, "b");
    const CaseFile bad =
        ParseCases("{\"id\":\"a\",\"request\":{}}\n{\"id\":\"a\",\"request\":{}}\nnope\n", "chat");
    EXPECT_TRUE(bad.cases.empty());
    ASSERT_EQ(bad.problems.size(), 2u);
    EXPECT_EQ(bad.problems[0], "line 2: the id 'a' is used twice");
    EXPECT_EQ(bad.problems[1], "line 3: a case must be one JSON object");
    EXPECT_EQ(ParseCases("\n", "chat").problems, std::vector<std::string>{"no cases"});
}

TEST(DrillCaseTest, EveryExpectationIsHeldAgainstTheAnswer) {
    const DrillCase c = Parsed(R"({"id":"a","request":{},"expect":{
        "contains":["Mock","reply"],"not_contains":"sorry","regex":"^Mock .* from [a-z]+\\.$",
        "json_schema":{"type":"string"},"max_latency_ms":100,"max_cost":0.5}})");
    Observed good{std::string("Mock reply from gpt."), 50, 0.25};
    // The text is no JSON: only the schema fails.
    EXPECT_EQ(Unmet(c.expect, good),
              std::vector<std::string>{"does not match the JSON schema: the answer is not JSON"});
    Observed bad{std::string("sorry, no"), 150, 0.75};
    const std::vector<std::string> unmet = Unmet(c.expect, bad);
    ASSERT_EQ(unmet.size(), 7u);
    EXPECT_EQ(unmet[0], "does not contain \"Mock\"");
    EXPECT_EQ(unmet[2], "contains \"sorry\"");
    EXPECT_EQ(unmet[3], "does not match /^Mock .* from [a-z]+\\.$/");
    EXPECT_EQ(unmet[5], "took 150 ms, more than 100");
    EXPECT_EQ(unmet[6], "cost $0.750000, more than $0.500000");
    Observed toolCall{std::nullopt, 1, std::nullopt};
    const std::vector<std::string> silent = Unmet(c.expect, toolCall);
    ASSERT_EQ(silent.size(), 2u);
    EXPECT_EQ(silent[0], "the answer has no text (a tool call or a refusal)");
    EXPECT_EQ(silent[1], "its cost is unknown (no usage reported)");
    EXPECT_TRUE(Unmet(Expectation{}, toolCall).empty());  // no expectations: any answer passes
}

TEST(DrillCaseTest, EntriesAreTheWholeChainInOrderEachGroupOnce) {
    const config::LoadResult loaded =
        config::LoadConfigText(R"(
models:
  - name: chat
    deployments:
      - {name: a, provider: openai, model: a, api_base: "http://h:1/v1"}
      - {name: b, provider: openai, model: b, api_base: "http://h:1/v1"}
    fallbacks: [backup]
    context_window_fallbacks: [long]
    content_policy_fallbacks: [backup, safe]
  - name: backup
    deployments: [{name: c, provider: openai, model: c, api_base: "http://h:1/v1"}]
    fallbacks: [last]
  - name: last
    deployments: [{name: d, provider: openai, model: d, api_base: "http://h:1/v1"}]
  - name: long
    deployments: [{name: e, provider: openai, model: e, api_base: "http://h:1/v1"}]
  - name: safe
    deployments: [{name: f, provider: openai, model: f, api_base: "http://h:1/v1"}]
)",
                               "d.yaml", config::ProcessEnvironment());
    ASSERT_TRUE(loaded.config) << loaded.problems.front().ToString();
    const std::vector<DrillEntry> entries =
        EntriesOf(*loaded.config, *loaded.config->FindGroup("chat"));
    std::vector<std::string> seen;
    for (const DrillEntry& e : entries) {
        seen.push_back(e.deployment->name + "@" + std::to_string(e.depth) + ":" +
                       std::string(e.stage));
    }
    EXPECT_EQ(seen, (std::vector<std::string>{"a@0:primary", "b@0:primary", "c@1:fallback",
                                              "d@2:fallback", "e@3:context_window",
                                              "f@4:content_policy"}));
}

TEST(DrillCaseTest, TheReportSaysWhatFailedWhere) {
    DrillReport report;
    report.group = "chat";
    EntryReport entry;
    entry.group = "chat";
    entry.deployment = "a<b";
    entry.stage = "primary";
    CaseResult failed;
    failed.id = "c1";
    failed.status = 500;
    failed.error_class = "server_error";
    failed.error = "boom";
    entry.cases = {failed};
    entry.failed = 1;
    report.entries = {entry};
    EXPECT_FALSE(report.Passed());
    const json::value parsed = json::parse(ReportJson(report));
    EXPECT_EQ(parsed.at("passed"), false);
    EXPECT_EQ(parsed.at("entries").at(0).at("cases").at(0).at("error_class"), "server_error");
    EXPECT_NE(ReportTable(report).find("FAIL chat / a<b case c1: 500 server_error: boom"),
              std::string::npos);
    const std::string html = ReportHtml(report);
    EXPECT_NE(html.find("a&lt;b"), std::string::npos);
    EXPECT_EQ(html.find("a<b"), std::string::npos);
    EXPECT_FALSE(DrillReport{}.Passed());  // no entry ran: nothing was shown to work
}

}  // namespace drill_case_test
}  // namespace switchyard::drills
