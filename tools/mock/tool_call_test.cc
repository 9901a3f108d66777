#include "tool_call.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <string>
#include <vector>

#include "stream_script.h"

namespace switchyard::mock {
namespace {
namespace json = boost::json;

std::string Joined(const std::vector<std::string_view>& fragments) {
    std::string joined;
    for (const auto fragment : fragments) joined += fragment;
    return joined;
}

TEST(ArgumentFragments, AtMostThreeNoneEmptyTogetherTheText) {
    EXPECT_TRUE(ArgumentFragments("").empty());
    EXPECT_EQ(ArgumentFragments("{}"), (std::vector<std::string_view>{"{", "}"}));
    EXPECT_EQ(ArgumentFragments(R"({"query":"value"})"),
              (std::vector<std::string_view>{R"({"que)", R"(ry":"v)", R"(alue"})"}));
    const std::string long_text(1000, 'a');
    const auto fragments = ArgumentFragments(long_text);
    EXPECT_EQ(fragments.size(), 3U);
    EXPECT_EQ(Joined(fragments), long_text);
}

TEST(ArgumentFragments, NeverCutsAUtf8Character) {
    // Each "é" is two bytes: a cut by length alone would fall inside one.
    const std::string text = "{\"a\":\"\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\"}";
    const auto fragments = ArgumentFragments(text);
    EXPECT_EQ(Joined(fragments), text);
    for (const auto fragment : fragments) {
        ASSERT_FALSE(fragment.empty());
        EXPECT_NE(static_cast<unsigned char>(fragment.front()) & 0xC0, 0x80) << fragment;
    }
}

TEST(ChooseTool, ModesAndTheCandidate) {
    const json::value schema = json::parse(R"({"properties":{"q":{"type":"string"}}})");
    const std::vector<OfferedTool> tools = {{"first", &schema}, {"second", nullptr}};

    ToolChoice choice = ChooseTool(tools, ToolMode::kAuto, {});
    ASSERT_TRUE(choice.candidate);
    EXPECT_EQ(choice.candidate->name, "first");
    EXPECT_EQ(choice.candidate->arguments, R"({"q":"value"})");
    EXPECT_EQ(choice.Call(false), nullptr);
    EXPECT_EQ(choice.Call(true), &*choice.candidate);

    choice = ChooseTool(tools, ToolMode::kAny, {});
    ASSERT_NE(choice.Call(false), nullptr);
    EXPECT_EQ(choice.Call(false)->name, "first");

    choice = ChooseTool(tools, ToolMode::kNamed, "second");
    ASSERT_NE(choice.Call(false), nullptr);
    EXPECT_EQ(choice.Call(false)->name, "second");
    EXPECT_EQ(choice.Call(false)->arguments, "{}");

    // A name the request does not offer: the first tool.
    choice = ChooseTool(tools, ToolMode::kNamed, "third");
    ASSERT_NE(choice.Call(false), nullptr);
    EXPECT_EQ(choice.Call(false)->name, "first");

    EXPECT_EQ(ChooseTool(tools, ToolMode::kNone, {}).Call(true), nullptr);
    EXPECT_EQ(ChooseTool({}, ToolMode::kAny, {}).Call(true), nullptr);
}

TEST(DataLineBytes, TheDataLineOfOneEvent) {
    EXPECT_EQ(DataLineBytes("data: {}\n\n"), 8U);
    EXPECT_EQ(DataLineBytes("event: ping\ndata: {\"type\": \"ping\"}\n\n"), 22U);
    EXPECT_EQ(DataLineBytes("data: [DONE]"), 12U);
    EXPECT_EQ(DataLineBytes("event: x\n\n"), 0U);
}

}  // namespace
}  // namespace switchyard::mock
