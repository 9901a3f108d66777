#include "answers/output_schema.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <string>

namespace switchyard::answers {
namespace output_schema_test {

using Result = SchemaVerdict::Result;

std::shared_ptr<const OutputSchema> Compiled(std::string_view schema) {
    auto compiled = OutputSchema::Compile(boost::json::parse(schema));
    if (auto* why = std::get_if<std::string>(&compiled)) {
        ADD_FAILURE() << *why;
        return nullptr;
    }
    return std::get<std::shared_ptr<const OutputSchema>>(compiled);
}

bool Passes(const SchemaVerdict& verdict) { return verdict.result == Result::kPassed; }
bool Fails(const SchemaVerdict& verdict) {
    return verdict.result == Result::kFailed && !verdict.problem.empty();
}

// A JSON string of `count` characters cycling through `alphabet`, quoted.
std::string JsonString(std::size_t count, std::string_view alphabet, std::string_view tail = "") {
    std::string text = "\"";
    for (std::size_t i = 0; i < count; ++i) text.push_back(alphabet[i % alphabet.size()]);
    return text.append(tail).append("\"");
}

TEST(OutputSchemaTest, AMatchingDocumentPassesAndEachKindOfMissFailsWithWhere) {
    const auto schema = Compiled(R"({"type":"object","additionalProperties":false,
        "required":["city","temp"],
        "properties":{"city":{"type":"string"},"temp":{"type":"number"},
                      "tags":{"type":"array","items":{"enum":["a","b"]}}}})");
    ASSERT_NE(schema, nullptr);
    const SchemaVerdict passed = schema->Check(R"({"city":"Paris","temp":21.5,"tags":["a"]})");
    EXPECT_EQ(passed.result, Result::kPassed);
    EXPECT_EQ(passed.problem, "");
    EXPECT_TRUE(Fails(schema->Check(R"({"city":"Paris"})")));                        // required
    EXPECT_TRUE(Fails(schema->Check(R"({"city":"Paris","temp":"21"})")));            // type
    EXPECT_TRUE(Fails(schema->Check(R"({"city":"Paris","temp":1,"extra":true})")));  // additional
    EXPECT_TRUE(Fails(schema->Check(R"({"city":"Paris","temp":1,"tags":["c"]})")));  // enum
    const SchemaVerdict prose = schema->Check("Sure! Here is the JSON");
    EXPECT_EQ(prose.result, Result::kFailed);
    EXPECT_EQ(prose.problem, "the answer is not JSON");
    const SchemaVerdict where = schema->Check(R"({"city":"Paris","temp":1,"tags":["c"]})");
    ASSERT_TRUE(Fails(where));
    EXPECT_NE(where.problem.find("tags"), std::string::npos) << where.problem;
    EXPECT_EQ(where.problem, R"(<root>.tags[0]: is not one of ["a","b"])");
    EXPECT_EQ(schema->Check(R"({"city":"Paris"})").problem, "<root>.temp: is required");
    EXPECT_EQ(schema->Check(R"({"city":"Paris","temp":1,"extra":true})").problem,
              "<root>.extra: is not a property the schema allows (additionalProperties)");
}

TEST(OutputSchemaTest, ReferencesToDefinitionsAreFollowed) {
    const auto schema = Compiled(R"({"$ref":"#/$defs/point","$defs":{"point":{"type":"object",
        "required":["x"],"properties":{"x":{"type":"integer"}}}}})");
    ASSERT_NE(schema, nullptr);
    EXPECT_TRUE(Passes(schema->Check(R"({"x":1})")));
    EXPECT_TRUE(Fails(schema->Check(R"({"x":1.5})")));
}

TEST(OutputSchemaTest, WhatIsNoSchemaIsReportedNotFatal) {
    EXPECT_TRUE(
        std::holds_alternative<std::string>(OutputSchema::Compile(boost::json::parse("[]"))));
    EXPECT_TRUE(std::holds_alternative<std::string>(
        OutputSchema::Compile(boost::json::parse(R"({"type":17})"))));
    EXPECT_TRUE(std::holds_alternative<std::string>(
        OutputSchema::Compile(boost::json::parse(R"({"$ref":"#/nowhere"})"))));
    // Schemas that apply themselves to the same value without end would exhaust the stack, and
    // references that leave the document may lead anywhere: not compiled.
    const char* const kRefused[] = {
        R"({"$ref":"#"})",
        R"({"allOf":[{"$ref":"#"}]})",
        R"({"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"not":{"$ref":"#/$defs/a"}}},"$ref":"#/$defs/a"})",
        R"({"definitions":{"x":{"anyOf":[{"$ref":"#/definitions/x"}]}},"type":"object"})",
        R"({"$ref":"*"})",
        R"({"$id":"http://x/s","$ref":"http://x/s#"})",
        R"({"$ref":"#/"})",
        R"({"$ref":"#/$defs/missing"})",
        R"({"$ref":"#/%24defs/a","$defs":{"a":{}}})",
    };
    for (const char* refused : kRefused) {
        EXPECT_TRUE(
            std::holds_alternative<std::string>(OutputSchema::Compile(boost::json::parse(refused))))
            << refused;
    }
}

TEST(OutputSchemaTest, ChainsOfSchemasOnOneValueEndWithinTheCap) {
    // 300 definitions, each a $ref to the next: no cycle, but 300 deep on one value.
    std::string defs;
    for (int i = 0; i < 300; ++i) {
        defs += (i ? "," : "") + std::string("\"d") + std::to_string(i) +
                "\":{\"$ref\":\"#/$defs/d" + std::to_string(i + 1) + "\"}";
    }
    defs += ",\"d300\":{\"type\":\"object\"}";
    EXPECT_TRUE(std::holds_alternative<std::string>(OutputSchema::Compile(
        boost::json::parse("{\"$ref\":\"#/$defs/d0\",\"$defs\":{" + defs + "}}"))));
    // A recursive schema that descends into the value each time is fine.
    const auto tree = Compiled(R"({"$ref":"#/$defs/n","$defs":{"n":{"anyOf":[{"type":"null"},
        {"type":"array","items":{"$ref":"#/$defs/n"}}]}}})");
    ASSERT_NE(tree, nullptr);
    EXPECT_TRUE(Passes(tree->Check("[[[null]],null]")));
    EXPECT_TRUE(Fails(tree->Check("[[1]]")));
}

TEST(OutputSchemaTest, AnAnswerPastTheLimitsIsSkippedNotFailed) {
    const auto schema = Compiled(R"({"type":"array","items":{"type":"integer"}})");
    ASSERT_NE(schema, nullptr);
    const std::string answer = "[1,2,3,4,5,6,7,8,9,10]";
    EXPECT_TRUE(Passes(schema->Check(answer)));

    const SchemaVerdict long_text = schema->Check(answer, {.max_text_bytes = 8});
    EXPECT_EQ(long_text.result, Result::kSkipped);
    EXPECT_NE(long_text.problem.find("bytes"), std::string::npos) << long_text.problem;
    // Not even parsed: prose past the limit is skipped too, not "not JSON".
    EXPECT_EQ(schema->Check("Sure! Here is the JSON", {.max_text_bytes = 8}).result,
              Result::kSkipped);

    const SchemaVerdict costly = schema->Check(answer, {.max_steps = 5});
    EXPECT_EQ(costly.result, Result::kSkipped);
    EXPECT_NE(costly.problem.find("steps"), std::string::npos) << costly.problem;
    // The check is 1 visit for the array and 1 per item.
    EXPECT_TRUE(Passes(schema->Check(answer, {.max_steps = 11})));
    EXPECT_EQ(schema->Check(answer, {.max_steps = 10}).result, Result::kSkipped);
}

TEST(OutputSchemaTest, AnAnswerDeeperThanAnyRequestIsNotJson) {
    const auto schema = Compiled("{}");
    ASSERT_NE(schema, nullptr);
    const std::string deep = std::string(129, '[') + std::string(129, ']');
    EXPECT_EQ(schema->Check(deep).problem, "the answer is not JSON");
    const std::string fine = std::string(128, '[') + std::string(128, ']');
    EXPECT_TRUE(Passes(schema->Check(fine)));
}

// The regressions below are the inputs that stalled or crashed the gateway when patterns ran on
// std::regex (recursive backtracking) and uniqueItems compared every pair. Each must now finish
// with the right verdict inside a small fraction of the default step budget; the wall-clock
// bound is a loose backstop for sanitizer builds on a busy machine.
constexpr auto kQuick = std::chrono::seconds(3);

TEST(OutputSchemaRegressionTest, AlternationStarOn20000CharactersOverflowedTheStack) {
    const auto schema = Compiled(R"({"type":"string","pattern":"^(a|b)*$"})");
    ASSERT_NE(schema, nullptr);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(Passes(schema->Check(JsonString(20'000, "ab"), {.max_steps = 10'000})));
    EXPECT_TRUE(Fails(schema->Check(JsonString(20'000, "ab", "c"), {.max_steps = 10'000})));
    EXPECT_LT(std::chrono::steady_clock::now() - start, kQuick);
}

TEST(OutputSchemaRegressionTest, DotStarOn100000CharactersOverflowedTheStack) {
    const auto schema = Compiled(R"({"type":"string","pattern":".*"})");
    ASSERT_NE(schema, nullptr);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(Passes(schema->Check(JsonString(100'000, "xyz"), {.max_steps = 10'000})));
    EXPECT_LT(std::chrono::steady_clock::now() - start, kQuick);
}

TEST(OutputSchemaRegressionTest, NestedQuantifierOn28CharactersTookSeconds) {
    const auto schema = Compiled(R"({"type":"string","pattern":"^(a+)+$"})");
    ASSERT_NE(schema, nullptr);
    const auto start = std::chrono::steady_clock::now();
    const SchemaVerdict verdict = schema->Check(JsonString(28, "a", "!"), {.max_steps = 100});
    EXPECT_EQ(verdict.result, Result::kFailed);
    EXPECT_EQ(verdict.problem, R"(<root>: does not match pattern "^(a+)+$")");
    EXPECT_TRUE(Passes(schema->Check(JsonString(28, "a"), {.max_steps = 100})));
    EXPECT_LT(std::chrono::steady_clock::now() - start, kQuick);
}

TEST(OutputSchemaRegressionTest, UniqueItemsOver40000ItemsTookNineSeconds) {
    const auto schema = Compiled(R"({"type":"array","uniqueItems":true})");
    ASSERT_NE(schema, nullptr);
    std::string distinct = "[";
    for (int i = 0; i < 40'000; ++i) distinct += std::to_string(i) + ",";
    std::string duplicated = distinct + "39999.0]";  // equal by value to the last one
    distinct += "\"39999\"]";                        // a string is no number
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(Passes(schema->Check(distinct, {.max_steps = 400'000})));
    const SchemaVerdict verdict = schema->Check(duplicated, {.max_steps = 400'000});
    EXPECT_EQ(verdict.result, Result::kFailed);
    EXPECT_EQ(verdict.problem, "<root>: has equal items at 39999 and 40000 (uniqueItems)");
    EXPECT_LT(std::chrono::steady_clock::now() - start, kQuick);
}

TEST(OutputSchemaRegressionTest, DiamondOfReferencesWouldTake2To60Visits) {
    // d_i = allOf [d_{i+1}, d_{i+1}]: 120 schemas deep on one value, within the compile-time cap,
    // but 2^60 visits to finish.
    std::string defs;
    for (int i = 0; i < 60; ++i) {
        const std::string next = "{\"$ref\":\"#/$defs/d" + std::to_string(i + 1) + "\"}";
        defs += "\"d" + std::to_string(i) + "\":{\"allOf\":[" + next + "," + next + "]},";
    }
    defs += "\"d60\":{\"type\":\"integer\"}";
    const auto schema = Compiled("{\"$ref\":\"#/$defs/d0\",\"$defs\":{" + defs + "}}");
    ASSERT_NE(schema, nullptr);
    const auto start = std::chrono::steady_clock::now();
    const SchemaVerdict verdict = schema->Check("1");
    EXPECT_EQ(verdict.result, Result::kSkipped);
    EXPECT_NE(verdict.problem.find("1000000 steps"), std::string::npos) << verdict.problem;
    EXPECT_LT(std::chrono::steady_clock::now() - start, kQuick);
}

TEST(OutputSchemaRegressionTest, LookaheadPatternIsNoSchemaWeCanCheck) {
    auto compiled = OutputSchema::Compile(boost::json::parse(R"({"pattern":"^(?=.*\\d)\\w+$"})"));
    ASSERT_TRUE(std::holds_alternative<std::string>(compiled));
    EXPECT_NE(std::get<std::string>(compiled).find("pattern"), std::string::npos)
        << std::get<std::string>(compiled);
}

}  // namespace output_schema_test
}  // namespace switchyard::answers
