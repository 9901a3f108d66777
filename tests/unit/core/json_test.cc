#include "core/json.h"

#include <gtest/gtest.h>

#include <array>
#include <boost/json/serialize.hpp>
#include <string>

namespace switchyard::core {
namespace json_test {

TEST(ParseJsonTest, NumbersAreWhatJsonCanWriteAgain) {
    boost::system::error_code ec;
    // The parser reads a zero with a huge exponent as NaN; it is 0.
    const boost::json::value zero = ParseJson(R"({"n":0e777,"m":[1.5e3]})", ec);
    ASSERT_FALSE(ec) << ec.message();
    EXPECT_EQ(boost::json::serialize(zero), R"({"n":0E0,"m":[1.5E3]})");
    // Beyond a double: written out it would be `Infinity`, no JSON.
    ParseJson(R"({"n":1e400})", ec);
    EXPECT_EQ(ec, boost::json::error::exponent_overflow);
    ParseJson(R"([-1E+400])", ec);
    EXPECT_EQ(ec, boost::json::error::exponent_overflow);
    // So is a number of 400 digits, with no exponent at all; 308 of them are still a double.
    ParseJson("{\"n\":" + std::string(400, '9') + "}", ec);
    EXPECT_EQ(ec, boost::json::error::exponent_overflow);
    ParseJson("[-" + std::string(400, '9') + ".5]", ec);
    EXPECT_EQ(ec, boost::json::error::exponent_overflow);
    ParseJson("[" + std::string(308, '9') + "]", ec);
    EXPECT_FALSE(ec) << ec.message();
    // Text that merely looks like an exponent is left alone.
    const boost::json::value text = ParseJson(R"({"s":"1e400 and 0e777"})", ec);
    ASSERT_FALSE(ec);
    EXPECT_EQ(text.at("s").as_string(), "1e400 and 0e777");
}

TEST(ReadObjectShapeTest, NamesTheKindOfEachTopLevelMember) {
    constexpr std::array<std::string_view, 3> names{"choices", "error", "usage"};
    const ObjectShape shape = ReadObjectShape(
        R"({"id":"x","choices":[{"error":{}}],"error":null,"usage":{"a":1}})", names);
    EXPECT_TRUE(shape.object);
    EXPECT_EQ(shape.members[0], JsonKind::kArray);
    EXPECT_EQ(shape.members[1], JsonKind::kNull);  // the nested "error" is not top-level
    EXPECT_EQ(shape.members[2], JsonKind::kObject);
    EXPECT_EQ(shape.members[3], JsonKind::kAbsent);

    const ObjectShape scalars =
        ReadObjectShape(R"({"choices":"s","error":1.5,"usage":true})", names);
    EXPECT_EQ(scalars.members[0], JsonKind::kString);
    EXPECT_EQ(scalars.members[1], JsonKind::kNumber);
    EXPECT_EQ(scalars.members[2], JsonKind::kBool);
    EXPECT_EQ(ReadObjectShape(R"({"choices":[],"x":{)", names).object, false);  // cut short
    EXPECT_EQ(ReadObjectShape(R"([{"choices":[]}])", names).object, false);     // no object
    EXPECT_EQ(ReadObjectShape(R"({"choices":[]} {})", names).object, false);    // two documents
}

}  // namespace json_test
}  // namespace switchyard::core

namespace switchyard::core {
namespace json_test {

TEST(SerializeEditedTest, EditsKeepTheirPlaceRemovalsGoAndNewMembersAreAppended) {
    boost::system::error_code ec;
    const boost::json::value doc =
        ParseJson(R"({"model":"a","models":["x"],"input":[1,2,3],"n":1})", ec);
    ASSERT_FALSE(ec);
    const boost::json::value model("b");
    const boost::json::value stream(true);
    const boost::json::value two(2);
    const MemberEdit edits[] = {{"model", &model},   {"models", nullptr}, {"stream", &stream},
                                {"absent", nullptr}, {"n", &stream},      {"n", &two}};
    EXPECT_EQ(SerializeEdited(doc.get_object(), edits),
              R"({"model":"b","input":[1,2,3],"n":2,"stream":true})");
    std::string out = "x";
    AppendJson(out, ParseJson(R"({"k":"\u0001"})", ec));
    EXPECT_EQ(out, R"(x{"k":"\u0001"})");
}

}  // namespace json_test
}  // namespace switchyard::core
