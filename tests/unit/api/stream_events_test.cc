#include "api/stream_events.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace switchyard::api {
namespace stream_events_test {

// Frames `bytes` and returns its events (their data copied; views stay on the parser).
struct Framed {
    explicit Framed(std::string_view bytes) {
        parser.Feed(bytes);
        core::SseEvent e;
        while (parser.Next(e)) events.push_back(e);
    }
    core::SseParser parser;
    std::vector<core::SseEvent> events;
};

core::SseEvent One(std::string_view bytes) {
    static std::vector<std::unique_ptr<Framed>> keep;  // the views must outlive the test line
    keep.push_back(std::make_unique<Framed>(bytes));
    EXPECT_EQ(keep.back()->events.size(), 1u) << bytes;
    return keep.back()->events.at(0);
}

TEST(StreamEventsTest, AnthropicEventsBeforeTheFirstDeltaCarryNoContent) {
    EXPECT_FALSE(
        CarriesContent(One("event: message_start\ndata: "
                           "{\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\n")));
    EXPECT_FALSE(
        CarriesContent(One("event: content_block_start\ndata: "
                           "{\"type\":\"content_block_start\",\"index\":0,"
                           "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")));
    EXPECT_FALSE(CarriesContent(One("event: ping\ndata: {\"type\": \"ping\"}\n\n")));
    EXPECT_TRUE(
        CarriesContent(One("event: content_block_delta\ndata: "
                           "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
                           "{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n")));
    EXPECT_TRUE(CarriesContent(
        One("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{}}\n\n")));
    EXPECT_TRUE(CarriesContent(One("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")));
}

TEST(StreamEventsTest, OpenAiRoleChunkCarriesNoContentTextAndToolCallsDo) {
    EXPECT_FALSE(CarriesContent(
        One("data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\","
            "\"refusal\":null},\"finish_reason\":null}]}\n\n")));
    EXPECT_TRUE(CarriesContent(
        One("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Mock\"}}]}\n\n")));
    EXPECT_TRUE(CarriesContent(One(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[]},\"finish_reason\":null}]}"
        "\n\n")));
    EXPECT_TRUE(CarriesContent(
        One("data: {\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"No.\"}}]}\n\n")));
    EXPECT_TRUE(CarriesContent(
        One("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")));
    EXPECT_TRUE(CarriesContent(One("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1}}\n\n")));
    EXPECT_TRUE(CarriesContent(One("data: [DONE]\n\n")));
    EXPECT_TRUE(CarriesContent(One("data: not json\n\n"))) << "not the relay's to judge";
    EXPECT_FALSE(CarriesContent(One(": keep-alive\n\n")));
}

TEST(StreamEventsTest, ContentIsJudgedByEachMembersLastValueAndOnlyTheFirstChoice) {
    // A member named twice counts with its last value, as in a parsed document.
    EXPECT_FALSE(CarriesContent(
        One("data: {\"choices\":[{\"delta\":{\"content\":\"a\",\"content\":\"\"}}]}\n\n")));
    EXPECT_FALSE(CarriesContent(One(
        "data: {\"choices\":[{\"delta\":{\"tool_calls\":[]},\"delta\":{\"content\":null}}]}\n\n")));
    EXPECT_FALSE(CarriesContent(
        One("data: {\"choices\":[{\"finish_reason\":\"stop\",\"finish_reason\":null}]}\n\n")));
    EXPECT_FALSE(CarriesContent(
        One("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}],\"choices\":[]}\n\n")));
    EXPECT_FALSE(CarriesContent(One("data: {\"type\":\"message_stop\",\"type\":\"ping\"}\n\n")));
    // Only the first choice counts; a first choice that is no object is not the relay's to judge.
    EXPECT_FALSE(CarriesContent(
        One("data: {\"choices\":[{\"delta\":{}},{\"delta\":{\"content\":\"x\"}}]}\n\n")));
    EXPECT_TRUE(CarriesContent(One("data: {\"choices\":[7]}\n\n")));
    // A "type" that is no string leaves the choices to decide; an escaped one is read unescaped.
    EXPECT_TRUE(CarriesContent(
        One("data: {\"type\":7,\"choices\":[{\"delta\":{\"content\":\"y\"}}]}\n\n")));
    EXPECT_TRUE(CarriesContent(One("data: {\"type\":\"message_d\\u0065lta\"}\n\n")));
    EXPECT_TRUE(CarriesContent(
        One("data: {\"type\":\"response.a-type-name-longer-than-thirty-two.delta\"}\n\n")));
    EXPECT_FALSE(CarriesContent(One("data: {\"type\":\"response.created\"}\n\n")));
    // Not one well-formed object: trailing bytes, an array, a document too deep.
    EXPECT_TRUE(CarriesContent(One("data: {\"type\":\"ping\"} x\n\n")));
    EXPECT_TRUE(CarriesContent(One("data: [{\"choices\":[]}]\n\n")));
    EXPECT_TRUE(
        CarriesContent(One("data: {\"choices\":[{\"delta\":" + std::string(200, '[') + "\n\n")));
    EXPECT_FALSE(CarriesContent(One("data: {\"choices\":{\"delta\":{\"content\":\"x\"}}}\n\n")));
}

TEST(StreamEventsTest, ErrorEventsOfBothProviders) {
    EXPECT_TRUE(
        IsErrorEvent(One("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":"
                         "\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n")));
    EXPECT_TRUE(
        IsErrorEvent(One("data: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}"
                         "\n\n")));
    EXPECT_FALSE(IsErrorEvent(
        One("data: {\"choices\":[{\"delta\":{\"content\":\"an \\\"error\\\"\"}}]}\n\n")));
}

TEST(StreamEventsTest, EndEvents) {
    EXPECT_TRUE(IsEndEvent(One("data: [DONE]\n\n")));
    EXPECT_TRUE(IsEndEvent(One("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")));
    EXPECT_FALSE(IsEndEvent(
        One("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")));
}

TEST(StreamEventsTest, PingsAreProgressOnlyWhenConfigured) {
    const core::SseEvent ping = One("event: ping\ndata: {\"type\": \"ping\"}\n\n");
    const core::SseEvent comment = One(": keep-alive\n\n");
    const core::SseEvent text = One("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n");
    EXPECT_FALSE(IsProgress(ping, false));
    EXPECT_FALSE(IsProgress(comment, false));
    EXPECT_TRUE(IsProgress(text, false));
    EXPECT_TRUE(IsProgress(ping, true));
    EXPECT_TRUE(IsProgress(comment, true));
}

TEST(StreamEventsTest, ErrorMessageOfEitherEnvelope) {
    EXPECT_EQ(ErrorMessageOf(
                  R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"),
              "Overloaded");
    EXPECT_EQ(ErrorMessageOf(R"({"error":{"message":"Our servers are busy.","type":"x"}})"),
              "Our servers are busy.");
    EXPECT_EQ(ErrorMessageOf("not json"), "not json");
    EXPECT_EQ(ErrorMessageOf(std::string(500, 'x')).size(), 200u);
}

}  // namespace stream_events_test
}  // namespace switchyard::api
