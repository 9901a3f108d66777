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
}

}  // namespace
}  // namespace switchyard::answers
