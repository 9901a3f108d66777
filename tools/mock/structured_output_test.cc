#include "structured_output.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <string>

namespace switchyard::mock {
namespace {
namespace json = boost::json;

std::string Tool(std::string_view schema) {
    const json::value parsed = json::parse(schema);
    return ToolArguments(&parsed);
}

std::string Structured(std::string_view schema) {
    return StructuredReply(json::parse(schema), false);
}

TEST(StructuredReply, EveryPropertyWithTheValuesOfItsType) {
    // The answer tests of the gateway compare against exactly this document.
    EXPECT_EQ(
        json::parse(Structured(
            R"({"type":"object","properties":{"city":{"type":"string"},)"
            R"("temperature":{"type":"number"},"conditions":{"enum":["sunny","rain"]}},)"
            R"("required":["city","temperature","conditions"],"additionalProperties":false})")),
        json::parse(R"({"city":"text","temperature":1.5,"conditions":"sunny"})"));
    // Structured output fills optional properties too.
    EXPECT_EQ(Structured(R"({"type":"object","properties":{"a":{"type":"integer"},)"
                         R"("b":{"type":"boolean"}},"required":["a"]})"),
              R"({"a":1,"b":true})");
}

TEST(StructuredReply, InvalidOutputBreaksTheSchema) {
    EXPECT_EQ(StructuredReply(json::parse(R"({"type":"object","required":["a"]})"), true), "{}");
    EXPECT_EQ(StructuredReply(json::parse(R"({"type":"object"})"), true), R"("not an object")");
    EXPECT_EQ(StructuredReply(json::parse(R"({"type":"string"})"), true), "12345");
    EXPECT_EQ(StructuredReply(json::parse(R"({"type":"integer"})"), true), R"("not valid")");
}

TEST(ToolArguments, RequiredPropertiesEachOfItsType) {
    EXPECT_EQ(Tool(R"({"type":"object","properties":{"s":{"type":"string"},)"
                   R"("i":{"type":"integer"},"n":{"type":"number"},"b":{"type":"boolean"},)"
                   R"("z":{"type":"null"},"optional":{"type":"string"}},)"
                   R"("required":["s","i","n","b","z"]})"),
              R"({"s":"value","i":1,"n":1,"b":true,"z":null})");
    // Without `required`, every property.
    EXPECT_EQ(Tool(R"({"type":"object","properties":{"query":{"type":"string"}}})"),
              R"({"query":"value"})");
    EXPECT_EQ(Tool(R"({"type":"object","properties":{"q":{"type":"string"}},"required":[]})"),
              "{}");
    // A required name with no schema of its own.
    EXPECT_EQ(Tool(R"({"type":"object","required":["x"]})"), R"({"x":"value"})");
}

TEST(ToolArguments, EnumConstAndChoices) {
    EXPECT_EQ(Tool(R"({"type":"object","properties":{"unit":{"type":"string",)"
                   R"("enum":["celsius","fahrenheit"]},"kind":{"const":"fixed"},)"
                   R"("n":{"enum":[7,8]}}})"),
              R"({"unit":"celsius","kind":"fixed","n":7})");
    // Optional values (pydantic's anyOf [X, null], nullable type lists) get the value.
    EXPECT_EQ(Tool(R"({"type":"object","properties":{"a":{"anyOf":[{"type":"null"},)"
                   R"({"type":"integer","minimum":4}]},"b":{"type":["null","boolean"]},)"
                   R"("c":{"oneOf":[{"type":"string"}]},"d":{"allOf":[{"type":"integer"}]}}})"),
              R"({"a":4,"b":true,"c":"value","d":1})");
}

TEST(ToolArguments, NumberBounds) {
    EXPECT_EQ(Tool(R"({"properties":{"a":{"type":"integer","minimum":10},)"
                   R"("b":{"type":"integer","minimum":2.5},)"
                   R"("c":{"type":"integer","exclusiveMinimum":5},)"
                   R"("d":{"type":"integer","maximum":-3},)"
                   R"("e":{"type":"integer","exclusiveMaximum":1},)"
                   R"("f":{"type":"number","minimum":0.25},)"
                   R"("g":{"type":"number","maximum":0.5},)"
                   R"("h":{"type":"number","exclusiveMinimum":2}}})"),
              R"({"a":10,"b":3,"c":6,"d":-3,"e":0,"f":2.5E-1,"g":5E-1,"h":3})");
}

TEST(ToolArguments, StringFormatsAndLengths) {
    EXPECT_EQ(Tool(R"({"properties":{"t":{"type":"string","format":"date-time"},)"
                   R"("e":{"type":"string","format":"email"},)"
                   R"("u":{"type":"string","format":"uuid"},)"
                   R"("x":{"type":"string","format":"unknown-format"}}})"),
              R"({"t":"2024-01-01T00:00:00Z","e":"user@example.com",)"
              R"("u":"00000000-0000-4000-8000-000000000000","x":"value"})");
    EXPECT_EQ(Tool(R"({"properties":{"long":{"type":"string","minLength":12},)"
                   R"("short":{"type":"string","maxLength":3}}})"),
              R"({"long":"valuevalueva","short":"val"})");
}

TEST(ToolArguments, ArraysAndNestedObjects) {
    EXPECT_EQ(Tool(R"({"type":"object","properties":{"tags":{"type":"array",)"
                   R"("items":{"type":"string"}},"pair":{"type":"array","minItems":2,)"
                   R"("items":{"type":"integer"}},"tuple":{"type":"array","prefixItems":)"
                   R"([{"type":"string"},{"type":"boolean"}]},"empty":{"type":"array"},)"
                   R"("place":{"type":"object","properties":{"lat":{"type":"number"},)"
                   R"("name":{"type":"string"}},"required":["lat"]}}})"),
              R"({"tags":["value"],"pair":[1,1],"tuple":["value",true],"empty":[],)"
              R"("place":{"lat":1}})");
}

TEST(ToolArguments, LocalReferences) {
    EXPECT_EQ(Tool(R"({"type":"object","properties":{"p":{"$ref":"#/$defs/Point"},)"
                   R"("q":{"$ref":"#/definitions/Q"},"r":{"$ref":"https://x/y.json"}},)"
                   R"("$defs":{"Point":{"type":"object","properties":{"x":{"type":"integer"}}}},)"
                   R"("definitions":{"Q":{"enum":["only"]}}})"),
              R"({"p":{"x":1},"q":"only","r":"value"})");
}

TEST(ToolArguments, SelfReferenceAndMultiplicationAreBounded) {
    // A tree whose children are required: nesting stops at the depth limit with null.
    const std::string tree =
        Tool(R"({"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#"}}},)"
             R"("required":["children"]})");
    EXPECT_NE(tree.find("null"), std::string::npos);
    EXPECT_LT(tree.size(), 2000U);
    // 1000^3 values asked for: generation stops at the value budget.
    const std::string cube =
        Tool(R"({"properties":{"a":{"type":"array","minItems":1000,"items":{"type":"array",)"
             R"("minItems":1000,"items":{"type":"array","minItems":1000,)"
             R"("items":{"type":"integer"}}}}}})");
    EXPECT_LT(cube.size(), 200'000U);
}

TEST(ToolArguments, ArgumentsAreAlwaysAnObject) {
    EXPECT_EQ(ToolArguments(nullptr), "{}");
    EXPECT_EQ(Tool("{}"), "{}");
    EXPECT_EQ(Tool(R"({"type":"string"})"), "{}");
    EXPECT_EQ(Tool("true"), "{}");
    EXPECT_EQ(Tool(R"({"type":"object"})"), "{}");
}

TEST(SchemaExample, DeterministicAcrossCalls) {
    const json::value schema = json::parse(
        R"({"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"}}})");
    const std::string first = json::serialize(SchemaExample(schema, SchemaFill::kToolArguments));
    EXPECT_EQ(first, R"({"b":"value","a":1})");  // The schema's order of properties.
    EXPECT_EQ(json::serialize(SchemaExample(schema, SchemaFill::kToolArguments)), first);
}

}  // namespace
}  // namespace switchyard::mock
