#include "api/stream_relay.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>
#include <vector>

namespace switchyard::api {
namespace stream_relay_test {

constexpr std::string_view kRole =
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n";
constexpr std::string_view kHello =
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"}}]}\n\n";
constexpr std::string_view kStop =
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n";
constexpr std::string_view kDone = "data: [DONE]\n\n";
constexpr std::string_view kError =
    "data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}\n\n";

std::string Join(std::initializer_list<std::string_view> parts) {
    std::string out;
    for (std::string_view part : parts) out.append(part);
    return out;
}

TEST(StreamRelayTest, HoldsEverythingBeforeTheFirstContentThenCommitsWithIt) {
    StreamRelay relay({});
    StreamRelay::Read read = relay.Feed(kRole);
    EXPECT_FALSE(read.commits);
    EXPECT_FALSE(read.content_began);
    EXPECT_TRUE(relay.Out().empty());
    EXPECT_FALSE(relay.Committed());

    read = relay.Feed(kHello);
    EXPECT_TRUE(read.commits);
    EXPECT_TRUE(read.content_began);
    EXPECT_TRUE(read.progress);
    EXPECT_TRUE(relay.Committed());
    EXPECT_EQ(relay.Out(), Join({kRole, kHello}));  // the held role chunk goes out with it
    relay.Out().clear();

    read = relay.Feed(Join({kStop, kDone}));
    EXPECT_FALSE(read.commits);
    EXPECT_FALSE(read.content_began);
    EXPECT_EQ(relay.Out(), Join({kStop, kDone}));
    EXPECT_EQ(relay.EndingOf(), StreamRelay::Ending::kComplete);
    EXPECT_EQ(relay.Tail(nullptr, false), Join({kStop, kDone}));  // what Out() still held
}

TEST(StreamRelayTest, OnlyCompleteEventsGoDownstream) {
    StreamRelay relay({});
    const std::string bytes = Join({kRole, kHello});
    const std::size_t cut = bytes.size() - 10;
    relay.Feed(bytes.substr(0, cut));
    EXPECT_FALSE(relay.Committed());  // the content event is not complete yet
    relay.Feed(bytes.substr(cut));
    EXPECT_TRUE(relay.Committed());
    EXPECT_EQ(relay.Out(), bytes);
}

TEST(StreamRelayTest, AnErrorBeforeContentFailsTheAttemptWithNothingSent) {
    StreamRelay relay({});
    const StreamRelay::Read read = relay.Feed(Join({kRole, kError, kHello}));
    EXPECT_TRUE(read.stop);
    EXPECT_FALSE(read.commits);
    EXPECT_FALSE(relay.Committed());
    EXPECT_TRUE(relay.Out().empty());
    EXPECT_EQ(relay.EndingOf(), StreamRelay::Ending::kErrorEvent);
    EXPECT_EQ(boost::json::parse(relay.ErrorEvent()).at("error").at("message").as_string(),
              "overloaded");
}

// `event: error` (or `response.failed`) with no data line is an error all the same: it must
// never pass for a complete stream.
TEST(StreamRelayTest, AnErrorEventWithoutDataIsStillAnError) {
    for (const std::string_view event : {"event: error\n\n", "event: response.failed\n\n"}) {
        StreamRelay relay({});
        const StreamRelay::Read read = relay.Feed(Join({kRole, kHello, event, kDone}));
        EXPECT_TRUE(read.stop);
        EXPECT_EQ(relay.EndingOf(), StreamRelay::Ending::kErrorEvent) << event;
        EXPECT_EQ(relay.ErrorEvent(), StreamRelay::kErrorEventWithoutData);
        EXPECT_EQ(boost::json::parse(relay.ErrorEvent()).at("error").at("type").as_string(),
                  "api_error");
    }
}

TEST(StreamRelayTest, AnErrorAfterContentOfTheSameReadCommitsAndEndsTheStream) {
    StreamRelay relay({});
    const StreamRelay::Read read = relay.Feed(Join({kRole, kHello, kError}));
    EXPECT_TRUE(read.stop);
    EXPECT_TRUE(read.commits);
    EXPECT_TRUE(relay.Committed());
    const std::string failure = "The upstream failed during the stream: overloaded";
    const std::string tail = relay.Tail(&failure, false);
    ASSERT_TRUE(tail.starts_with(Join({kRole, kHello})));
    // The upstream's error event is not relayed: Switchyard's own ends the stream.
    EXPECT_EQ(tail.find("server_error"), std::string::npos);
    const std::string event = tail.substr(kRole.size() + kHello.size());
    EXPECT_EQ(event, StreamErrorEvent(Wire::kOpenAi, failure, 0));
    const auto json = boost::json::parse(event.substr(6));
    EXPECT_EQ(json.at("error").at("code").as_string(), "stream_interrupted");
    EXPECT_EQ(json.at("error").at("message").as_string(), failure);
}

TEST(StreamRelayTest, HeldWholeNothingCommitsBeforeTheEnd) {
    for (const bool assemble : {false, true}) {
        StreamRelayOptions options;
        options.background = !assemble;
        options.assemble = assemble;
        StreamRelay relay(options);
        const StreamRelay::Read read = relay.Feed(Join({kRole, kHello, kStop}));
        EXPECT_FALSE(read.commits);
        EXPECT_TRUE(read.content_began);
        EXPECT_FALSE(relay.Committed());
        EXPECT_TRUE(relay.Out().empty());
        // An error even after content fails the attempt: it can be retried whole.
        relay.Feed(kError);
        EXPECT_FALSE(relay.Committed());
        EXPECT_EQ(relay.EndingOf(), StreamRelay::Ending::kErrorEvent);
    }
    StreamRelay relay({.background = true});
    relay.Feed(Join({kRole, kHello, kStop, kDone}));
    relay.CommitWhole();
    EXPECT_EQ(relay.Tail(nullptr, false), Join({kRole, kHello, kStop, kDone}));
}

TEST(StreamRelayTest, AssembledIsOneChatCompletion) {
    StreamRelay relay({.assemble = true});
    relay.Feed(Join({kRole, kHello, kStop, kDone}));
    const auto json = boost::json::parse(relay.Assembled());
    EXPECT_EQ(json.at("object").as_string(), "chat.completion");
    EXPECT_EQ(json.at("choices").at(0).at("message").at("content").as_string(), "Hello");
    EXPECT_EQ(json.at("choices").at(0).at("finish_reason").as_string(), "stop");
}

TEST(StreamRelayTest, AnEndWithoutTheEndEventIsTruncatedAndItsBrokenBytesAreNotSent) {
    StreamRelay relay({});
    relay.Feed(Join({kRole, kHello, "data: {\"choi"}));
    EXPECT_EQ(relay.EndingOf(), StreamRelay::Ending::kTruncated);
    relay.Out().clear();
    const std::string failure = "The upstream stream ended before its end event.";
    const std::string tail = relay.Tail(&failure, true);
    EXPECT_EQ(tail, StreamErrorEvent(Wire::kOpenAi, failure, 0));
}

TEST(StreamRelayTest, BytesAfterTheEndEventPassThroughUntranslated) {
    StreamRelay relay({});
    relay.Feed(Join({kHello, kDone, ": trailing comment"}));
    relay.Out().clear();
    EXPECT_EQ(relay.Tail(nullptr, false), ": trailing comment");
}

TEST(StreamRelayTest, AnEventBeyondTheLimitStopsTheStream) {
    StreamRelay relay({});
    relay.Feed(kHello);
    const StreamRelay::Read read =
        relay.Feed("data: " + std::string(StreamRelay::kMaxEventBytes + 1, 'x'));
    EXPECT_TRUE(read.stop);
    EXPECT_EQ(relay.EndingOf(), StreamRelay::Ending::kOversized);
}

TEST(StreamRelayTest, PingsAreProgressOnlyWhenConfiguredAndOnlyAfterContent) {
    constexpr std::string_view kPing = ": ping\n\n";
    StreamRelay strict({});
    EXPECT_FALSE(strict.Feed(kPing).progress);  // before content nothing is progress
    strict.Feed(kHello);
    EXPECT_FALSE(strict.Feed(kPing).progress);
    StreamRelay lenient({.pings_are_progress = true});
    EXPECT_FALSE(lenient.Feed(kPing).progress);
    lenient.Feed(kHello);
    EXPECT_TRUE(lenient.Feed(kPing).progress);
}

TEST(StreamRelayTest, AnthropicToOpenAiTranslatesEventByEventAndNotesUsage) {
    StreamRelay relay({.upstream = Wire::kAnthropic, .front = Wire::kOpenAi, .created = 7});
    std::vector<std::string> usage;
    relay.on_usage = [&](std::string_view json) { usage.emplace_back(json); };
    relay.Feed(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\","
        "\"model\":\"claude\",\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n");
    EXPECT_FALSE(relay.Committed());
    EXPECT_EQ(usage.size(), 1u);
    relay.Feed(
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
        "\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n");
    EXPECT_TRUE(relay.Committed());
    EXPECT_TRUE(relay.Translating());
    EXPECT_NE(relay.Out().find("\"content\":\"Hi\""), std::string::npos) << relay.Out();
    EXPECT_EQ(relay.Out().find("content_block_delta"), std::string::npos);
}

TEST(StreamRelayTest, AResponsesStreamsErrorEventTakesTheNextSequenceNumber) {
    StreamRelay relay({.upstream = Wire::kResponses, .front = Wire::kResponses});
    relay.Feed(
        "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\","
        "\"sequence_number\":4,\"delta\":\"Hi\"}\n\n");
    EXPECT_EQ(relay.NextSequence(), 5);
    const std::string failure = "reset";
    const std::string tail = relay.Tail(&failure, false);
    EXPECT_NE(tail.find("\"sequence_number\":5"), std::string::npos) << tail;
}

TEST(StreamRelayTest, TheLargestSequenceNumberDoesNotOverflow) {
    // Found by the fuzz target: an upstream event numbered 2^63 - 1 (UBSan: signed overflow).
    StreamRelay relay({.upstream = Wire::kResponses, .front = Wire::kResponses});
    relay.Feed(
        "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\","
        "\"sequence_number\":3,\"delta\":\"Hi\"}\n\n"
        "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\","
        "\"sequence_number\":9223372036854775807,\"delta\":\"!\"}\n\n");
    EXPECT_EQ(relay.NextSequence(), 4);
    const std::string failure = "reset";
    const std::string tail = relay.Tail(&failure, false);
    EXPECT_NE(tail.find("\"sequence_number\":4"), std::string::npos) << tail;
}

TEST(StreamRelayTest, KeepsTheTextForAnOutputCheck) {
    StreamRelay relay({.keep_text = true});
    relay.Feed(Join({kRole, kHello, kStop, kDone}));
    EXPECT_EQ(relay.Text(), "Hello");
    StreamRelay without({});
    without.Feed(kHello);
    EXPECT_EQ(without.Text(), std::nullopt);
}

}  // namespace stream_relay_test
}  // namespace switchyard::api
