#include "answers/output_schema.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace switchyard::answers {
namespace {

std::shared_ptr<const OutputSchema> Compiled(std::string_view schema) {
    auto compiled = OutputSchema::Compile(boost::json::parse(schema));
    if (auto* why = std::get_if<std::string>(&compiled)) {
        ADD_FAILURE() << *why;
        return nullptr;
    }
    return std::get<std::shared_ptr<const OutputSchema>>(compiled);
}

TEST(OutputSchemaTest, AMatchingDocumentPassesAndEachKindOfMissFailsWithWhere) {
    const auto schema = Compiled(R"({"type":"object","additionalProperties":false,
        "required":["city","temp"],
        "properties":{"city":{"type":"string"},"temp":{"type":"number"},
                      "tags":{"type":"array","items":{"enum":["a","b"]}}}})");
    ASSERT_NE(schema, nullptr);
    EXPECT_EQ(schema->Check(R"({"city":"Paris","temp":21.5,"tags":["a"]})"), std::nullopt);
    EXPECT_TRUE(schema->Check(R"({"city":"Paris"})"));                        // required
    EXPECT_TRUE(schema->Check(R"({"city":"Paris","temp":"21"})"));            // type
    EXPECT_TRUE(schema->Check(R"({"city":"Paris","temp":1,"extra":true})"));  // additional
    EXPECT_TRUE(schema->Check(R"({"city":"Paris","temp":1,"tags":["c"]})"));  // enum
    EXPECT_EQ(schema->Check("Sure! Here is the JSON"), "the answer is not JSON");
    const auto where = schema->Check(R"({"city":"Paris","temp":1,"tags":["c"]})");
    ASSERT_TRUE(where);
    EXPECT_NE(where->find("tags"), std::string::npos) << *where;
}

TEST(OutputSchemaTest, ReferencesToDefinitionsAreFollowed) {
    const auto schema = Compiled(R"({"$ref":"#/$defs/point","$defs":{"point":{"type":"object",
        "required":["x"],"properties":{"x":{"type":"integer"}}}}})");
    ASSERT_NE(schema, nullptr);
    EXPECT_EQ(schema->Check(R"({"x":1})"), std::nullopt);
    EXPECT_TRUE(schema->Check(R"({"x":1.5})"));
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
    EXPECT_EQ(tree->Check("[[[null]],null]"), std::nullopt);
    EXPECT_TRUE(tree->Check("[[1]]"));
}

}  // namespace
}  // namespace switchyard::answers
