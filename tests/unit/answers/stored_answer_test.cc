#include "answers/stored_answer.h"

#include <gtest/gtest.h>

namespace switchyard::answers {
namespace stored_answer_test {

TEST(StoredAnswerTest, EncodeAndDecodeRoundTripAnyBytes) {
    StoredAnswer answer;
    answer.status = 200;
    answer.stream = true;
    answer.headers = "Content-Type: text/event-stream\r\nx-a: 1\r\n";
    answer.body = std::string("data: {\"a\":1}\n\n\0\n binary", 24);
    const auto decoded = Decode(Encode(answer));
    ASSERT_TRUE(decoded);
    EXPECT_EQ(decoded->status, 200u);
    EXPECT_TRUE(decoded->stream);
    EXPECT_EQ(decoded->headers, answer.headers);
    EXPECT_EQ(decoded->body, answer.body);
}

TEST(StoredAnswerTest, DecodeRefusesWhatIsNoEncodedAnswer) {
    EXPECT_FALSE(Decode(""));
    EXPECT_FALSE(Decode("200 0 5\nabc"));  // fewer header bytes than it says
    EXPECT_FALSE(Decode("2000 0 0\n"));
    EXPECT_FALSE(Decode("200 2 0\n"));
    EXPECT_FALSE(Decode("abc 0 0\n"));
}

TEST(StoredAnswerTest, AnAnswerFromAStoreThatCouldSplitAResponseIsRefused) {
    auto encoded = [](unsigned status, std::string headers) {
        StoredAnswer answer;
        answer.status = status;
        answer.headers = std::move(headers);
        answer.body = "{}";
        return Encode(answer);
    };
    EXPECT_TRUE(Decode(encoded(200, "Content-Type: application/json\r\nx-a:\tb\r\n")));
    EXPECT_TRUE(Decode(encoded(429, "")));
    // An interim status would leave the real answer's place open.
    EXPECT_FALSE(Decode(encoded(100, "")));
    EXPECT_FALSE(Decode(encoded(199, "")));
    // Header lines that would split or reframe the response.
    EXPECT_FALSE(Decode(encoded(200, "x-a: b\r\n\r\nHTTP/1.1 200 OK\r\n")));
    EXPECT_FALSE(Decode(encoded(200, "x-a: b\nx-b: c\r\n")));
    EXPECT_FALSE(Decode(encoded(200, "x-a: b\rx-b: c\r\n")));
    EXPECT_FALSE(Decode(encoded(200, "x-a: b")));  // no line end
    EXPECT_FALSE(Decode(encoded(200, "Content-Length: 5\r\n")));
    EXPECT_FALSE(Decode(encoded(200, "transfer-encoding: chunked\r\n")));
    EXPECT_FALSE(Decode(encoded(200, "bad name: x\r\n")));
    EXPECT_FALSE(Decode(encoded(200, ": x\r\n")));
    EXPECT_FALSE(Decode(encoded(200, std::string("x-a: b\0c\r\n", 10))));
}

TEST(StoredAnswerTest, ACaptureKeepsTheFirstAnswerWithinItsLimit) {
    AnswerCapture whole(100);
    whole.Whole(200, "A: b\r\n", "{}");
    whole.Whole(500, "", "second write is no answer");
    EXPECT_TRUE(whole.Keepable());
    EXPECT_EQ(whole.answer.status, 200u);
    EXPECT_EQ(whole.answer.body, "{}");

    AnswerCapture stream(100);
    stream.StreamHead(200, "Content-Type: text/event-stream\r\n");
    stream.StreamBytes("data: 1\n\n");
    EXPECT_FALSE(stream.Keepable());  // not ended yet
    stream.StreamEnd();
    EXPECT_TRUE(stream.Keepable());
    EXPECT_EQ(stream.answer.body, "data: 1\n\n");

    AnswerCapture small(40);
    small.StreamHead(200, "Content-Type: text/event-stream\r\n");
    small.StreamBytes("data: a much longer event\n\n");
    small.StreamEnd();
    EXPECT_TRUE(small.overflow);
    EXPECT_FALSE(small.Keepable());
    EXPECT_TRUE(small.answer.body.empty());

    AnswerCapture failed(100);
    failed.Whole(200, "", "{}");
    failed.transient = true;
    EXPECT_FALSE(failed.Keepable());
}

}  // namespace stored_answer_test
}  // namespace switchyard::answers
