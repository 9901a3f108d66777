#include "core/sse_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace switchyard::core {
namespace sse_parser_test {

struct Framed {
    std::string raw;
    std::string name;
    std::string data;
    bool has_data;
};

// Feeds `stream` in pieces of `step` bytes and collects every framed event.
std::vector<Framed> FrameInSteps(std::string_view stream, std::size_t step) {
    SseParser parser;
    SseEvent event;
    std::vector<Framed> out;
    for (std::size_t at = 0; at < stream.size(); at += step) {
        parser.Feed(stream.substr(at, step));
        while (parser.Next(event)) {
            out.push_back(
                {std::string(event.raw), std::string(event.name), event.data, event.has_data});
        }
    }
    return out;
}

// The Anthropic fixture of docs/providers.md#streams (abridged) followed by OpenAI-style data-only
// events.
constexpr std::string_view kStream =
    "event: message_start\n"
    "data: {\"type\":\"message_start\"}\n"
    "\n"
    "event: ping\n"
    "data: {\"type\": \"ping\"}\n"
    "\n"
    ": keep-alive comment\n"
    "\n"
    "data: {\"choices\":[{\"delta\":{\"content\":\"Gr\xc3\xbc\xc3\x9f"
    "e\"}}]}\r\n"
    "\r\n"
    "data: line one\r"
    "data: line two\r"
    "\r"
    "data: [DONE]\n"
    "\n";

TEST(SseParserTest, FramesEveryEventWhateverTheSplit) {
    const std::vector<Framed> whole = FrameInSteps(kStream, kStream.size());
    ASSERT_EQ(whole.size(), 6u);
    EXPECT_EQ(whole[0].name, "message_start");
    EXPECT_EQ(whole[0].data, "{\"type\":\"message_start\"}");
    EXPECT_EQ(whole[1].name, "ping");
    EXPECT_FALSE(whole[2].has_data);
    EXPECT_EQ(whole[2].raw, ": keep-alive comment\n\n");
    EXPECT_EQ(whole[3].data,
              "{\"choices\":[{\"delta\":{\"content\":\"Gr\xc3\xbc\xc3\x9f"
              "e\"}}]}");
    EXPECT_EQ(whole[4].data, "line one\nline two");
    EXPECT_EQ(whole[5].data, "[DONE]");

    std::string joined;
    for (const auto& e : whole) joined += e.raw;
    EXPECT_EQ(joined, kStream) << "raw bytes of all events reproduce the stream exactly";

    for (std::size_t step = 1; step < kStream.size(); ++step) {
        const std::vector<Framed> split = FrameInSteps(kStream, step);
        ASSERT_EQ(split.size(), whole.size()) << "step " << step;
        for (std::size_t i = 0; i < whole.size(); ++i) {
            EXPECT_EQ(split[i].raw, whole[i].raw) << "step " << step << " event " << i;
            EXPECT_EQ(split[i].data, whole[i].data) << "step " << step << " event " << i;
            EXPECT_EQ(split[i].name, whole[i].name) << "step " << step << " event " << i;
        }
    }
}

TEST(SseParserTest, HoldsAnIncompleteEventUntilItsBlankLine) {
    SseParser parser;
    SseEvent event;
    parser.Feed("data: {\"a\":1}\n");
    EXPECT_FALSE(parser.Next(event));
    EXPECT_EQ(parser.Pending(), "data: {\"a\":1}\n");
    parser.Feed("\r");  // could be "\r\n": undecided until the next byte
    EXPECT_FALSE(parser.Next(event));
    parser.Feed("\ndata: x");
    ASSERT_TRUE(parser.Next(event));
    EXPECT_EQ(event.data, "{\"a\":1}");
    EXPECT_EQ(event.raw, "data: {\"a\":1}\n\r\n");
    EXPECT_FALSE(parser.Next(event));
    EXPECT_EQ(parser.Pending(), "data: x");
}

TEST(SseParserTest, FieldWithoutColonAndValueWithoutSpace) {
    SseParser parser;
    SseEvent event;
    parser.Feed("event:error\ndata\ndata:{\"x\":1}\n\n");
    ASSERT_TRUE(parser.Next(event));
    EXPECT_EQ(event.name, "error");
    EXPECT_EQ(event.data, "\n{\"x\":1}");
}

}  // namespace sse_parser_test
}  // namespace switchyard::core
