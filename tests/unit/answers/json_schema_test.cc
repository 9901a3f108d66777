#include "answers/json_schema.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace switchyard::answers {
namespace json_schema_test {

namespace json = boost::json;
using Result = SchemaVerdict::Result;

JsonSchema Compiled(std::string_view schema) {
    auto compiled = JsonSchema::Compile(json::parse(schema));
    if (const auto* why = std::get_if<std::string>(&compiled)) {
        ADD_FAILURE() << schema << ": " << *why;
        return std::get<JsonSchema>(JsonSchema::Compile(json::value(false)));
    }
    return std::get<JsonSchema>(std::move(compiled));
}

SchemaVerdict Check(std::string_view schema, std::string_view document,
                    std::size_t max_steps = 1'000'000) {
    json::parse_options options;
    options.max_depth = 256;
    return Compiled(schema).Validate(json::parse(document, {}, options), max_steps);
}

// Why `schema` does not compile ("" when it does: a test failure).
std::string Refusal(std::string_view schema) {
    auto compiled = JsonSchema::Compile(json::parse(schema));
    if (const auto* why = std::get_if<std::string>(&compiled)) return *why;
    ADD_FAILURE() << schema << " compiled";
    return "";
}

struct Case {
    std::string_view schema;
    std::string_view document;
    bool passes;
};

void ExpectVerdicts(std::initializer_list<Case> cases) {
    for (const Case& c : cases) {
        const SchemaVerdict verdict = Check(c.schema, c.document);
        EXPECT_EQ(verdict.result, c.passes ? Result::kPassed : Result::kFailed)
            << c.schema << " on " << c.document << ": " << verdict.problem;
        EXPECT_EQ(verdict.problem.empty(), c.passes) << c.schema << " on " << c.document;
    }
}

TEST(JsonSchemaTest, BooleanSchemasAllowEverythingOrNothing) {
    ExpectVerdicts({
        {"true", R"({"a":[1]})", true},
        {"false", "null", false},
        {"{}", "17", true},
        {R"({"properties":{"a":false}})", R"({"b":1})", true},
        {R"({"properties":{"a":false}})", R"({"a":1})", false},
        {R"({"items":true})", "[1,2]", true},
    });
}

TEST(JsonSchemaTest, TypesAreStrictAndIntegersIncludeWholeDoubles) {
    ExpectVerdicts({
        {R"({"type":"integer"})", "1", true},
        {R"({"type":"integer"})", "1.0", true},
        {R"({"type":"integer"})", "1e2", true},
        {R"({"type":"integer"})", "-9223372036854775808", true},
        {R"({"type":"integer"})", "18446744073709551615", true},
        {R"({"type":"integer"})", "1.5", false},
        {R"({"type":"integer"})", "\"1\"", false},
        {R"({"type":"number"})", "1", true},
        {R"({"type":"number"})", "\"21\"", false},
        {R"({"type":"string"})", "\"\"", true},
        {R"({"type":"boolean"})", "0", false},
        {R"({"type":"null"})", "null", true},
        {R"({"type":"object"})", "[]", false},
        {R"({"type":"array"})", "[]", true},
        {R"({"type":["string","null"]})", "null", true},
        {R"({"type":["string","null"]})", "3", false},
        {R"({"type":[]})", "3", false},
    });
    EXPECT_EQ(Check(R"({"type":["string","null"]})", "3").problem,
              "<root>: is an integer, not null or string");
}

TEST(JsonSchemaTest, EnumAndConstCompareDeeplyWithNumbersByValue) {
    ExpectVerdicts({
        {R"({"enum":[1,"a",{"x":[1,2]},null]})", "1.0", true},
        {R"({"enum":[1,"a",{"x":[1,2]},null]})", "\"a\"", true},
        {R"({"enum":[1,"a",{"x":[1,2]},null]})", R"({"x":[1,2.0]})", true},
        {R"({"enum":[1,"a",{"x":[1,2]},null]})", R"({"x":[2,1]})", false},
        {R"({"enum":[1,"a",{"x":[1,2]},null]})", R"({"x":[1,2],"y":0})", false},
        {R"({"enum":[1,"a",{"x":[1,2]},null]})", "null", true},
        {R"({"enum":[1,"a",{"x":[1,2]},null]})", "\"1\"", false},
        {R"({"enum":[]})", "1", false},
        {R"({"const":{"a":1,"b":[true]}})", R"({"b":[true],"a":1.0})", true},
        {R"({"const":{"a":1,"b":[true]}})", R"({"b":[false],"a":1})", false},
        {R"({"const":0})", "-0.0", true},
        {R"({"const":0})", "false", false},
        {R"({"const":9007199254740993})", "9007199254740992.0", false},
        {R"({"const":18446744073709551615})", "18446744073709551615", true},
        {R"({"const":"x","enum":["x","y"]})", "\"y\"", false},
    });
    EXPECT_EQ(Check(R"({"const":{"a":1}})", R"({"a":2})").problem, R"(<root>: is not {"a":1})");
}

TEST(JsonSchemaTest, NumberBoundsAndMultiplesCompareExactly) {
    ExpectVerdicts({
        {R"({"maximum":10})", "10", true},
        {R"({"maximum":10})", "10.5", false},
        {R"({"maximum":10})", "\"11\"", true},  // bounds apply to numbers only
        {R"({"minimum":-1.5})", "-1.5", true},
        {R"({"minimum":-1.5})", "-2", false},
        {R"({"exclusiveMaximum":10})", "9.99", true},
        {R"({"exclusiveMaximum":10})", "10", false},
        {R"({"exclusiveMinimum":0})", "0", false},
        {R"({"exclusiveMinimum":0})", "1e-300", true},
        // draft 4's boolean form makes maximum/minimum exclusive
        {R"({"maximum":10,"exclusiveMaximum":true})", "10", false},
        {R"({"maximum":10,"exclusiveMaximum":false})", "10", true},
        {R"({"minimum":0,"exclusiveMinimum":true})", "0.0", false},
        {R"({"maximum":9007199254740992})", "9007199254740993", false},
        {R"({"minimum":18446744073709551615})", "18446744073709551615", true},
        {R"({"maximum":-1})", "18446744073709551615", false},
        {R"({"multipleOf":3})", "-9", true},
        {R"({"multipleOf":3})", "10", false},
        {R"({"multipleOf":3})", "9.0", true},
        {R"({"multipleOf":0.1})", "0.3", true},
        {R"({"multipleOf":0.1})", "0.35", false},
        {R"({"multipleOf":0.01})", "19.99", true},
        {R"({"multipleOf":2})", "-9223372036854775808", true},
        {R"({"multipleOf":0.5})", "1e308", true},
    });
    EXPECT_EQ(Check(R"({"maximum":10})", "11").problem, "<root>: is greater than 10");
    EXPECT_EQ(Check(R"({"multipleOf":0.5})", "0.7").problem, "<root>: is not a multiple of 0.5");
}

TEST(JsonSchemaTest, StringLengthsCountCodePoints) {
    ExpectVerdicts({
        {R"({"maxLength":1})", "\"é\"", true},               // 2 bytes
        {R"({"maxLength":1})", "\"\\ud83d\\ude00\"", true},  // 4 bytes
        {R"({"maxLength":1})", "\"ab\"", false},
        {R"({"minLength":2})", "\"é\"", false},
        {R"({"minLength":2})", "\"éé\"", true},
        {R"({"minLength":2})", "5", true},
        {R"({"minLength":0,"maxLength":0})", "\"\"", true},
    });
}

TEST(JsonSchemaTest, PatternsSearchAnywhereUnlessAnchored) {
    ExpectVerdicts({
        {R"({"pattern":"b"})", "\"abc\"", true},
        {R"({"pattern":"^b"})", "\"abc\"", false},
        {R"({"pattern":"c$"})", "\"abc\"", true},
        {R"({"pattern":"c$"})", "\"abc\\n\"", false},  // `$` is the end of the text
        {R"({"pattern":"^\\d{3}-\\d{4}$"})", "\"555-1234\"", true},
        {R"({"pattern":"^\\d{3}-\\d{4}$"})", "\"555-12345\"", false},
        {R"({"pattern":"^\\u0041+$"})", "\"AAA\"", true},  // ECMA-262 \u escape
        {R"({"pattern":"^(?<year>\\d{4})$"})", "\"2024\"", true},
        {R"({"pattern":"^[(?<]+$"})", "\"(?<\"", true},  // not a group inside a class
        {R"({"pattern":"^.$"})", "\"é\"", true},         // one code point, not one byte
        {R"({"pattern":"^\\p{L}+$"})", "\"Zürich\"", true},
        {R"({"pattern":"x"})", "17", true},  // patterns apply to strings only
    });
}

TEST(JsonSchemaTest, DateAndTimeFormatsFollowRfc3339) {
    const char* const kDate = R"({"format":"date"})";
    const char* const kTime = R"({"format":"time"})";
    const char* const kDateTime = R"({"format":"date-time"})";
    ExpectVerdicts({
        {kDate, "\"2024-02-29\"", true},
        {kDate, "\"2000-02-29\"", true},
        {kDate, "\"1900-02-29\"", false},
        {kDate, "\"2023-02-29\"", false},
        {kDate, "\"2024-04-31\"", false},
        {kDate, "\"2024-12-31\"", true},
        {kDate, "\"2024-13-01\"", false},
        {kDate, "\"2024-00-10\"", false},
        {kDate, "\"2024-1-01\"", false},
        {kDate, "\"2024-01-01x\"", false},
        {kTime, "\"12:00:00Z\"", true},
        {kTime, "\"12:00:00.123456+05:30\"", true},
        {kTime, "\"23:59:60Z\"", true},       // a leap second
        {kTime, "\"15:59:60-08:00\"", true},  // 23:59:60 UTC
        {kTime, "\"12:00:60Z\"", false},
        {kTime, "\"12:00:00\"", false},  // the offset is required
        {kTime, "\"24:00:00Z\"", false},
        {kTime, "\"12:60:00Z\"", false},
        {kTime, "\"12:00:00.Z\"", false},
        {kTime, "\"12:00:00+24:00\"", false},
        {kDateTime, "\"2024-01-01T12:00:00.5+02:00\"", true},
        {kDateTime, "\"2024-01-01t12:00:00z\"", true},
        {kDateTime, "\"2024-01-01 12:00:00Z\"", false},
        {kDateTime, "\"2024-02-30T12:00:00Z\"", false},
        {kDateTime, "\"2024-01-01\"", false},
        {R"({"format":"email"})", "\"not an email\"", true},  // other formats pass
        {kDate, "20240101", true},                            // formats apply to strings only
    });
}

TEST(JsonSchemaTest, ItemsApplyPerPositionOrToEveryItem) {
    ExpectVerdicts({
        {R"({"items":{"type":"integer"}})", "[1,2,3]", true},
        {R"({"items":{"type":"integer"}})", "[1,\"2\"]", false},
        {R"({"items":[{"type":"string"},{"type":"integer"}]})", R"(["a",1,null])", true},
        {R"({"items":[{"type":"string"},{"type":"integer"}]})", R"([1])", false},
        {R"({"items":[{"type":"string"}],"additionalItems":false})", R"(["a"])", true},
        {R"({"items":[{"type":"string"}],"additionalItems":false})", R"(["a","b"])", false},
        {R"({"items":[],"additionalItems":{"type":"null"}})", R"([null,1])", false},
        {R"({"items":{"type":"string"},"additionalItems":false})", R"(["a","b"])", true},
        {R"({"additionalItems":false})", "[1,2]", true},  // without an items array: ignored
        {R"({"minItems":2})", "[1]", false},
        {R"({"minItems":2})", "[1,2]", true},
        {R"({"maxItems":1})", "[1,2]", false},
        {R"({"contains":{"type":"string"}})", R"([1,"x"])", true},
        {R"({"contains":{"type":"string"}})", R"([1,2])", false},
        {R"({"contains":{"type":"string"}})", "[]", false},
    });
    EXPECT_EQ(Check(R"({"items":[{},{"type":"integer"}]})", R"([1,"2"])").problem,
              "<root>[1]: is a string, not integer");
}

TEST(JsonSchemaTest, UniqueItemsCompareDeeplyWithNumbersByValue) {
    ExpectVerdicts({
        {R"({"uniqueItems":true})", "[1,2,3]", true},
        {R"({"uniqueItems":true})", "[1,2,1.0]", false},
        {R"({"uniqueItems":true})", R"([{"a":1,"b":2},{"b":2,"a":1}])", false},
        {R"({"uniqueItems":true})", R"([{"a":1},{"a":1,"b":2}])", true},
        {R"({"uniqueItems":true})", "[[1],[1,1]]", true},
        {R"({"uniqueItems":true})", R"([1,"1",true,null,[],{}])", true},
        {R"({"uniqueItems":true})", "[[],[]]", false},
        {R"({"uniqueItems":true})", R"(["ab","a"])", true},
        {R"({"uniqueItems":false})", "[1,1]", true},
    });
    EXPECT_EQ(
        Check(R"({"properties":{"t":{"uniqueItems":true}}})", R"({"t":["x","y","x"]})").problem,
        "<root>.t: has equal items at 0 and 2 (uniqueItems)");
}

TEST(JsonSchemaTest, ObjectKeywordsApplyToTheirMembers) {
    ExpectVerdicts({
        {R"({"required":["a","b"]})", R"({"a":1,"b":null})", true},
        {R"({"required":["a","b"]})", R"({"a":1})", false},
        {R"({"required":["a"]})", "[]", true},  // object keywords apply to objects only
        {R"({"properties":{"a":{"type":"string"}}})", R"({"a":"x","b":1})", true},
        {R"({"properties":{"a":{"type":"string"}}})", R"({"a":1})", false},
        {R"({"patternProperties":{"^x-":{"type":"integer"}}})", R"({"x-a":1,"y":"s"})", true},
        {R"({"patternProperties":{"^x-":{"type":"integer"}}})", R"({"x-a":"1"})", false},
        {R"({"properties":{"a":{}},"patternProperties":{"^b":{}},"additionalProperties":false})",
         R"({"a":1,"bc":2})", true},
        {R"({"properties":{"a":{}},"patternProperties":{"^b":{}},"additionalProperties":false})",
         R"({"a":1,"c":2})", false},
        {R"({"additionalProperties":{"type":"integer"}})", R"({"a":1,"b":2})", true},
        {R"({"additionalProperties":{"type":"integer"}})", R"({"a":1,"b":2.5})", false},
        {R"({"minProperties":1})", "{}", false},
        {R"({"maxProperties":1})", R"({"a":1,"b":2})", false},
        {R"({"propertyNames":{"maxLength":3}})", R"({"abc":1})", true},
        {R"({"propertyNames":{"maxLength":3}})", R"({"abcd":1})", false},
        {R"({"dependencies":{"a":["b"]}})", R"({"a":1,"b":2})", true},
        {R"({"dependencies":{"a":["b"]}})", R"({"a":1})", false},
        {R"({"dependencies":{"a":["b"]}})", R"({"b":1})", true},
        {R"({"dependencies":{"a":{"required":["c"]}}})", R"({"a":1,"c":1})", true},
        {R"({"dependencies":{"a":{"required":["c"]}}})", R"({"a":1})", false},
    });
    EXPECT_EQ(Check(R"({"dependencies":{"a":["b"]}})", R"({"a":1})").problem,
              R"(<root>.b: is required when "a" is present)");
    EXPECT_EQ(Check(R"({"propertyNames":{"pattern":"^[a-z]+$"}})", R"({"Ab":1})").problem,
              R"(<root>: has a property name "Ab" that does not match pattern "^[a-z]+$")");
    EXPECT_EQ(Check(R"({"properties":{"a b":{"type":"string"}}})", R"({"a b":1})").problem,
              R"(<root>["a b"]: is an integer, not string)");
}

TEST(JsonSchemaTest, CombinatorsApplyEveryAnyExactlyOneOrNone) {
    ExpectVerdicts({
        {R"({"allOf":[{"type":"integer"},{"minimum":2}]})", "3", true},
        {R"({"allOf":[{"type":"integer"},{"minimum":2}]})", "1", false},
        {R"({"anyOf":[{"type":"string"},{"minimum":2}]})", "\"a\"", true},
        {R"({"anyOf":[{"type":"string"},{"minimum":2}]})", "1", false},
        {R"({"oneOf":[{"type":"integer"},{"minimum":2}]})", "1", true},
        {R"({"oneOf":[{"type":"integer"},{"minimum":2}]})", "2.5", true},
        {R"({"oneOf":[{"type":"integer"},{"minimum":2}]})", "3", false},
        {R"({"oneOf":[{"type":"integer"},{"minimum":2}]})", "1.5", false},
        {R"({"not":{"type":"string"}})", "1", true},
        {R"({"not":{"type":"string"}})", "\"a\"", false},
        {R"({"if":{"type":"integer"},"then":{"minimum":0},"else":{"type":"string"}})", "5", true},
        {R"({"if":{"type":"integer"},"then":{"minimum":0},"else":{"type":"string"}})", "-5", false},
        {R"({"if":{"type":"integer"},"then":{"minimum":0},"else":{"type":"string"}})", "\"s\"",
         true},
        {R"({"if":{"type":"integer"},"then":{"minimum":0},"else":{"type":"string"}})", "1.5",
         false},
        {R"({"then":false})", "1", true},  // then without if means nothing
    });
    EXPECT_EQ(Check(R"({"anyOf":[{"type":"string"},{"type":"null"}]})", "1").problem,
              "<root>: matches none of the 2 schemas in anyOf");
    // A branch that got below the value says more than "none matched".
    EXPECT_EQ(
        Check(R"({"anyOf":[{"type":"string"},{"items":{"type":"null"}}]})", "[null,1]").problem,
        "<root>[1]: is an integer, not null");
    EXPECT_EQ(Check(R"({"oneOf":[{"type":"integer"},{"minimum":2}]})", "3").problem,
              "<root>: matches schemas 0 and 1 of oneOf, where only one may match");
}

TEST(JsonSchemaTest, LocalReferencesResolveAtCompileTime) {
    const char* const kTree = R"({"type":"object","required":["value"],
        "properties":{"value":{"type":"integer"},
                      "children":{"type":"array","items":{"$ref":"#"}}}})";
    ExpectVerdicts({
        {kTree, R"({"value":1,"children":[{"value":2,"children":[{"value":3}]}]})", true},
        {kTree, R"({"value":1,"children":[{"value":2,"children":[{"value":"3"}]}]})", false},
        {R"({"definitions":{"s":{"type":"string"}},"items":{"$ref":"#/definitions/s"}})",
         R"(["a"])", true},
        {R"({"$defs":{"s":{"type":"string"}},"items":{"$ref":"#/$defs/s"}})", "[1]", false},
        {R"({"$defs":{"a/b":{"type":"string"},"c~d":{"type":"null"}},
             "properties":{"x":{"$ref":"#/$defs/a~1b"},"y":{"$ref":"#/$defs/c~0d"}}})",
         R"({"x":"s","y":null})", true},
        {R"({"$defs":{"a/b":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a~1b"}}})",
         R"({"x":1})", false},
        // draft 7: keywords beside $ref are ignored
        {R"({"$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s","maxLength":1})", "\"long\"", true},
        {R"({"properties":{"a":{"type":"integer"},"b":{"$ref":"#/properties/a"}}})", R"({"b":1.5})",
         false},
        {R"({"items":[{"type":"null"},{"$ref":"#/items/0"}]})", "[null,null]", true},
        {R"({"$id":"https://example.com/s","type":"null"})", "null", true},  // at the root
    });
    EXPECT_EQ(
        Check(kTree, R"({"value":1,"children":[{"value":2,"children":[{"value":"3"}]}]})").problem,
        "<root>.children[0].children[0].value: is a string, not integer");
}

TEST(JsonSchemaTest, WhatCannotBeCheckedIsRefusedWithItsPlace) {
    EXPECT_EQ(Refusal("[]"), "the schema is not a JSON object");
    EXPECT_EQ(Refusal(R"({"properties":{"age":{"minimum":"0"}}})"),
              "#/properties/age: minimum is not a number");
    EXPECT_EQ(Refusal(R"({"items":[{},{"type":"float"}]})"),
              R"(#/items/1: type "float" is no JSON Schema type)");
    EXPECT_NE(Refusal(R"j({"pattern":"(?=a)"})j").find(R"j(pattern "(?=a)")j"), std::string::npos);
    EXPECT_NE(Refusal(R"({"pattern":"(?<!a)b"})").find("pattern"), std::string::npos);
    EXPECT_NE(Refusal(R"({"pattern":"(a)\\1"})").find("pattern"), std::string::npos);
    EXPECT_NE(Refusal(R"j({"patternProperties":{"(?!x)":{}}})j").find("pattern"),
              std::string::npos);
    EXPECT_NE(Refusal(R"({"$ref":"other.json#/a"})").find("leaves the schema"), std::string::npos);
    EXPECT_NE(Refusal(R"({"$ref":"#anchor"})").find("not a JSON pointer"), std::string::npos);
    EXPECT_NE(Refusal(R"({"properties":{"a":{"$id":"#a"}}})").find("$id"), std::string::npos);
    EXPECT_NE(Refusal(R"({"enum":[5],"$ref":"#/enum/0"})").find("neither an object nor"),
              std::string::npos);
    EXPECT_NE(Refusal(R"({"minLength":-1})").find("non-negative integer"), std::string::npos);
    EXPECT_NE(Refusal(R"({"maxItems":1.5})").find("non-negative integer"), std::string::npos);
    EXPECT_NE(Refusal(R"({"multipleOf":0})").find("greater than 0"), std::string::npos);
    EXPECT_NE(Refusal(R"({"enum":"a"})").find("enum"), std::string::npos);
    EXPECT_NE(Refusal(R"({"required":"a"})").find("required"), std::string::npos);
    EXPECT_NE(Refusal(R"({"anyOf":[]})").find("anyOf"), std::string::npos);
    EXPECT_NE(Refusal(R"({"uniqueItems":1})").find("uniqueItems"), std::string::npos);
    EXPECT_NE(Refusal(R"({"exclusiveMinimum":"0"})").find("exclusiveMinimum"), std::string::npos);
    EXPECT_NE(Refusal(R"({"if":{"$ref":"#"}})").find("without end"), std::string::npos);
    EXPECT_NE(Refusal(R"({"dependencies":{"a":{"$ref":"#"}}})").find("without end"),
              std::string::npos);
    // Each distinct pattern holds memory of its own: a schema may have 128.
    std::string many = "{\"properties\":{";
    for (int i = 0; i < 129; ++i) {
        many += (i ? ",\"p" : "\"p") + std::to_string(i) + "\":{\"pattern\":\"^" +
                std::to_string(i) + "$\"}";
    }
    EXPECT_NE(Refusal(many + "}}").find("more than 128 different patterns"), std::string::npos);
    // ... and the same pattern many times is one.
    std::string same = "{\"properties\":{";
    for (int i = 0; i < 500; ++i) {
        same += (i ? ",\"p" : "\"p") + std::to_string(i) + "\":{\"pattern\":\"^x$\"}";
    }
    EXPECT_EQ(Check(same + "}}", R"({"p7":"x","p9":"x"})").result, Result::kPassed);
    // Unknown keywords are annotations.
    EXPECT_EQ(Check(R"({"title":"t","x-extension":{"type":"string"},"examples":[1]})", "1").result,
              Result::kPassed);
}

TEST(JsonSchemaTest, EveryPieceOfWorkCountsAgainstTheBudget) {
    // A long string costs in proportion to its length...
    const std::string text = "\"" + std::string(1 << 20, 'a') + "\"";
    EXPECT_EQ(Check(R"({"pattern":"b"})", text, 100).result, Result::kSkipped);
    EXPECT_EQ(Check(R"({"pattern":"b"})", text, 100'000).result, Result::kFailed);
    EXPECT_EQ(Check(R"({"maxLength":5})", text, 100).result, Result::kSkipped);
    EXPECT_EQ(Check(R"({"enum":[")" + std::string(1 << 20, 'a') + "\"]}", text, 100).result,
              Result::kSkipped);
    EXPECT_EQ(Check(R"({"format":"date"})", text, 100).result, Result::kSkipped);
    // ... and so does a long array, an object's members and a long required list.
    std::string items = "[";
    for (int i = 0; i < 10'000; ++i) items += std::to_string(i) + ",";
    items += "0]";
    EXPECT_EQ(Check(R"({"uniqueItems":true})", items, 1'000).result, Result::kSkipped);
    EXPECT_EQ(Check(R"({"contains":{"type":"string"}})", items, 1'000).result, Result::kSkipped);
    std::string object = "{";
    for (int i = 0; i < 10'000; ++i) object += "\"k" + std::to_string(i) + "\":1,";
    object += "\"k\":1}";
    EXPECT_EQ(Check(R"({"additionalProperties":true})", object, 1'000).result, Result::kSkipped);
    EXPECT_EQ(Check(R"({"additionalProperties":true})", object, 100'000).result, Result::kPassed);
    std::string required = "{\"required\":[";
    for (int i = 0; i < 10'000; ++i) required += "\"k" + std::to_string(i) + "\",";
    required += "\"k\"]}";
    EXPECT_EQ(Check(required, object, 1'000).result, Result::kSkipped);
    EXPECT_EQ(Check(required, object, 100'000).result, Result::kPassed);
}

TEST(JsonSchemaTest, SchemasNestedTooDeepOnOneAnswerAreSkipped) {
    // 200 references in a row on each level of a 100-deep array: 20,000 schemas one inside
    // another, far past kMaxCheckDepth, though each level is within the compile-time cap.
    std::string defs;
    for (int i = 0; i < 200; ++i) {
        defs +=
            "\"d" + std::to_string(i) + "\":{\"$ref\":\"#/$defs/d" + std::to_string(i + 1) + "\"},";
    }
    defs += R"("d200":{"items":{"$ref":"#/$defs/d0"}})";
    const std::string schema = "{\"$ref\":\"#/$defs/d0\",\"$defs\":{" + defs + "}}";
    const std::string deep = std::string(100, '[') + std::string(100, ']');
    const SchemaVerdict verdict = Check(schema, deep);
    EXPECT_EQ(verdict.result, Result::kSkipped);
    EXPECT_NE(verdict.problem.find("deep"), std::string::npos) << verdict.problem;
    EXPECT_EQ(Check(schema, "[[[]]]").result, Result::kPassed);
}

TEST(JsonSchemaTest, OneCompiledSchemaChecksFromManyThreadsAlike) {
    const JsonSchema schema = Compiled(R"({"type":"array","uniqueItems":true,
        "items":{"type":"string","pattern":"^[a-z]+[0-9]*$","format":"date-time"}})");
    const json::value good = json::parse(R"(["abc"])");
    std::vector<std::thread> threads;
    std::vector<int> passed(4, 0);
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 200; ++i) {
                // "abc" matches the pattern and fails the format: the same verdict every time.
                const SchemaVerdict verdict = schema.Validate(good, 1'000);
                passed[t] += verdict.problem == R"(<root>[0]: is not a valid date-time (RFC 3339))";
            }
        });
    }
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(passed, std::vector<int>(4, 200));
}

}  // namespace json_schema_test
}  // namespace switchyard::answers
