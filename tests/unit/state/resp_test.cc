#include "state/resp.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace switchyard::state {
namespace resp_test {

using Status = RespReader::Status;
using Type = RespValue::Type;

TEST(RespEncode, CommandsAreArraysOfBulkStrings) {
    std::string out;
    EncodeCommand({"SET", "k", "a\r\nb"}, out);
    EXPECT_EQ(out, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\na\r\nb\r\n");
    out.clear();
    EncodeCommand(std::vector<std::string>{"GET", ""}, out);
    EXPECT_EQ(out, "*2\r\n$3\r\nGET\r\n$0\r\n\r\n");
}

// Every reply type, fed one byte at a time: nothing comes out before it is complete.
TEST(RespReader, ReadsEveryTypeSplitAnywhere) {
    const std::string wire =
        "+OK\r\n-ERR no\r\n:-42\r\n$5\r\nhe\r\no\r\n$-1\r\n*-1\r\n"
        "*3\r\n:1\r\n*2\r\n$1\r\na\r\n+b\r\n$0\r\n\r\n";
    RespReader reader;
    std::vector<RespValue> values;
    for (const char c : wire) {
        reader.Feed(std::string_view(&c, 1));
        RespValue v;
        while (reader.Next(v) == Status::kValue) values.push_back(v);
    }
    ASSERT_EQ(values.size(), 7u);
    EXPECT_EQ(values[0].type, Type::kSimple);
    EXPECT_EQ(values[0].text, "OK");
    EXPECT_TRUE(values[1].IsError());
    EXPECT_EQ(values[1].text, "ERR no");
    EXPECT_EQ(values[2].AsInteger(), -42);
    EXPECT_EQ(values[3].type, Type::kBulk);
    EXPECT_EQ(values[3].text, "he\r\no");
    EXPECT_TRUE(values[4].IsNull());
    EXPECT_TRUE(values[5].IsNull());
    ASSERT_EQ(values[6].type, Type::kArray);
    ASSERT_EQ(values[6].items.size(), 3u);
    EXPECT_EQ(values[6].items[0].integer, 1);
    ASSERT_EQ(values[6].items[1].items.size(), 2u);
    EXPECT_EQ(values[6].items[1].items[0].text, "a");
    EXPECT_EQ(values[6].items[1].items[1].text, "b");
    EXPECT_EQ(values[6].items[2].text, "");
    EXPECT_FALSE(reader.Failed());
}

TEST(RespReader, ManyRepliesInOneRead) {
    RespReader reader;
    std::string wire;
    for (int i = 0; i < 1000; ++i) wire += ":" + std::to_string(i) + "\r\n";
    reader.Feed(wire);
    RespValue v;
    for (int i = 0; i < 1000; ++i) {
        ASSERT_EQ(reader.Next(v), Status::kValue);
        EXPECT_EQ(v.integer, i);
    }
    EXPECT_EQ(reader.Next(v), Status::kIncomplete);
}

TEST(RespReader, IntegersInStrings) {
    RespValue v;
    v.type = Type::kBulk;
    v.text = "123";
    EXPECT_EQ(v.AsInteger(), 123);
    v.text = "12x";
    EXPECT_EQ(v.AsInteger(), std::nullopt);
    v.text = "";
    EXPECT_EQ(v.AsInteger(), std::nullopt);
    v.type = Type::kNull;
    EXPECT_EQ(v.AsInteger(), std::nullopt);
}

// `depth` arrays of one element each around an integer.
std::string Nested(int depth) {
    std::string out;
    for (int i = 0; i < depth; ++i) out += "*1\r\n";
    return out + ":1\r\n";
}

TEST(RespReader, NestingUpToSixteenLevels) {
    RespReader reader;
    reader.Feed(Nested(16));
    RespValue v;
    EXPECT_EQ(reader.Next(v), Status::kValue);
}

// A stream that is not RESP fails for good: its replies can no longer be matched to commands.
TEST(RespReader, MalformedStreamsFailForGood) {
    for (const std::string& bad :
         std::vector<std::string>{"?what\r\n", ":12a\r\n", "$-2\r\n", "$3\r\nabcd\r\n", "*-5\r\n",
                                  "$99999999999\r\n", Nested(20)}) {
        RespReader reader;
        reader.Feed(bad);
        RespValue v;
        Status status = reader.Next(v);
        while (status == Status::kValue) status = reader.Next(v);
        EXPECT_EQ(status, Status::kError) << bad;
        EXPECT_TRUE(reader.Failed());
        reader.Feed("+OK\r\n");
        EXPECT_EQ(reader.Next(v), Status::kError);
    }
}

// A large reply that arrives in many small reads is parsed once, element by element, as it
// arrives: a reader that started over on every read would parse its first elements thousands of
// times.
TEST(RespReader, ALargeReplyInSmallReadsIsParsedOnce) {
    constexpr int kItems = 100'000;
    std::string reply = "*" + std::to_string(kItems) + "\r\n";
    for (int i = 0; i < kItems; ++i) {
        const std::string item = "member:" + std::to_string(i);
        reply += "$" + std::to_string(item.size()) + "\r\n" + item + "\r\n";
    }
    reply += "+OK\r\n";
    RespReader reader;
    RespValue v;
    std::vector<RespValue> replies;
    for (std::size_t at = 0; at < reply.size(); at += 7) {
        reader.Feed(std::string_view(reply).substr(at, 7));
        while (reader.Next(v) == Status::kValue) replies.push_back(std::move(v));
    }
    ASSERT_EQ(replies.size(), 2u);
    ASSERT_EQ(replies[0].items.size(), static_cast<std::size_t>(kItems));
    EXPECT_EQ(replies[0].items[0].text, "member:0");
    EXPECT_EQ(replies[0].items[kItems - 1].text, "member:99999");
    EXPECT_EQ(replies[1].text, "OK");
    EXPECT_EQ(reader.ParsedElements(), static_cast<std::size_t>(kItems) + 2);
}

TEST(RespReader, AHeaderLineWithoutEndIsAnError) {
    RespReader reader;
    reader.Feed("+" + std::string(2 << 20, 'a'));
    RespValue v;
    EXPECT_EQ(reader.Next(v), Status::kError);
}

}  // namespace resp_test
}  // namespace switchyard::state
