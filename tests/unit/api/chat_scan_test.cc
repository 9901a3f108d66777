#include "api/chat_scan.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <random>
#include <string>

#include "api/openai_chat.h"

namespace switchyard::api {
namespace chat_scan_test {

TEST(ChatScanTest, ReadsWhatRoutingNeeds) {
    const auto scan = ScanChatRequest(
        R"( {"model":"gpt-4o","messages":[{"role":"user","content":"h\u00e9 \"x\" ü 😀"}],)"
        R"("stream":true,"stream_options":{"include_usage":true,"x":[1,2]},"max_tokens":64,)"
        R"("max_completion_tokens":128,"temperature":0.5e-1,"n":null} )");
    ASSERT_TRUE(scan);
    EXPECT_EQ(scan->model, "gpt-4o");
    EXPECT_TRUE(scan->stream);
    EXPECT_TRUE(scan->include_usage);
    EXPECT_EQ(scan->max_tokens, 128);
}

TEST(ChatScanTest, DefaultsWhenFieldsAreAbsentOrNull) {
    const auto scan = ScanChatRequest(R"({"messages":[],"stream":null,"model":"m"})");
    ASSERT_TRUE(scan);
    EXPECT_FALSE(scan->stream);
    EXPECT_FALSE(scan->include_usage);
    EXPECT_EQ(scan->max_tokens, 0);
}

TEST(ChatScanTest, LeavesEverythingUnusualToTheFullParser) {
    for (const char* body : {
             "",                                          // empty
             "[]",                                        // not an object
             R"({"model":"m",})",                         // trailing comma
             R"({"model":"m"} x)",                        // trailing bytes
             R"({"model":"m","messages":[1,]})",          // trailing comma in an array
             R"({"model":"m","n":01})",                   // leading zero
             R"({"model":"m","n":1.})",                   // bad fraction
             R"({"model":"m","n":1e400})",                // may overflow
             R"({"model":"m","s":"a\x"})",                // bad escape
             R"({"model":"m","s":"\u12"})",               // short \u
             "{\"model\":\"m\",\"s\":\"a\x01\"}",         // control character
             "{\"model\":\"m\",\"s\":\"\xc3\x28\"}",      // bad UTF-8
             "{\"model\":\"m\",\"s\":\"\xed\xa0\x80\"}",  // surrogate in UTF-8
             "{\"model\":\"m\",\"s\":\"\xe0\x80\xaf\"}",  // overlong
             R"({"model":"m","t":tru})",                  // bad literal
             R"({"model":"a\"b"})",                       // escaped model
             R"({"model":""})",                           // empty model
             R"({"model":5})",                            // model not a string
             R"({"messages":[]})",                        // no model
             R"({"model":"m","model":"n"})",              // repeated model
             R"({"model":"m","stream":"yes"})",           // stream not a boolean
             R"({"model":"m","models":["a"]})",           // gateway field
             R"({"model":"m","fallbacks":["a"]})",        // gateway field
             R"({"mo\u0064el":"m"})",                     // escaped key
         }) {
        EXPECT_FALSE(ScanChatRequest(body)) << body;
    }
    // An integer of more digits than a double holds may overflow one as well; 308 never do.
    EXPECT_FALSE(ScanChatRequest(R"({"model":"m","n":)" + std::string(309, '9') + "}"));
    EXPECT_TRUE(ScanChatRequest(R"({"model":"m","n":)" + std::string(308, '9') + "}"));
}

// A \u escape of a UTF-16 surrogate is a character only as a high-low pair, as the parser reads it.
TEST(ChatScanTest, SurrogateEscapesAreAcceptedOnlyInPairs) {
    for (const char* body : {
             R"({"model":"m","s":"\ud83d\ude00"})",  // a pair: U+1F600
             R"({"model":"m","s":"\uDBFF\uDFFF"})",  // the last pair, upper case
             R"({"model":"m","s":"\ud7ff\ue000"})",  // either side of the surrogates
         }) {
        EXPECT_TRUE(ScanChatRequest(body)) << body;
        boost::system::error_code ec;
        boost::json::parse(body, ec);
        EXPECT_FALSE(ec) << body;
    }
    for (const char* body : {
             R"({"model":"m","s":"\uDDDD"})",        // a low surrogate alone
             R"({"model":"m","s":"\ud83d"})",        // a high surrogate at the string's end
             R"({"model":"m","s":"\ud83dx"})",       // a high surrogate before a plain byte
             R"({"model":"m","s":"\ud83d\n"})",      // ... before another escape
             R"({"model":"m","s":"\ud83d\u0041"})",  // ... before a character that is no low one
             R"({"model":"m","s":"\ud83d\ud83d"})",  // ... before another high one
             R"({"model":"m","s":"\ud83d\ude0"})",   // ... before a short escape
             R"({"model":"m","s":"\ud83d\)",         // cut off in the pair
         }) {
        EXPECT_FALSE(ScanChatRequest(body)) << body;
        boost::system::error_code ec;
        boost::json::parse(body, ec);
        EXPECT_TRUE(ec) << body;
    }
}

TEST(ChatScanTest, NegativeFractionalAndHugeMaxTokensCountForNothing) {
    EXPECT_EQ(ScanChatRequest(R"({"model":"m","max_tokens":-5})")->max_tokens, 0);
    EXPECT_EQ(ScanChatRequest(R"({"model":"m","max_tokens":5.5})")->max_tokens, 0);
    EXPECT_EQ(ScanChatRequest(R"({"model":"m","max_tokens":99999999999999999999})")->max_tokens, 0);
    EXPECT_EQ(ScanChatRequest(R"({"model":"m","max_tokens":"10"})")->max_tokens, 0);
}

// Whatever the scanner accepts, the full parser accepts and reads the same way.
TEST(ChatScanTest, AgreesWithTheFullParserOnMutatedRequests) {
    const std::string seed =
        R"({"model":"gpt-4o","messages":[{"role":"user","content":"héllo \"q\" \\ 1"}],)"
        R"("stream":false,"stream_options":{"include_usage":true},"max_tokens":42,)"
        R"("temperature":0.7,"tools":[{"type":"function","function":{"name":"f","parameters":{}}}]})";
    std::mt19937 rng(7);
    const std::string alphabet = "{}[]\":,0123456789-+.eE \\tfnulrs\x7f\xc3\xa9\xff";
    int accepted = 0;
    for (int i = 0; i < 20000; ++i) {
        std::string body = seed;
        const int edits = 1 + static_cast<int>(rng() % 3);
        for (int e = 0; e < edits; ++e) {
            const std::size_t at = rng() % body.size();
            switch (rng() % 3) {
                case 0:
                    body[at] = alphabet[rng() % alphabet.size()];
                    break;
                case 1:
                    body.erase(at, 1);
                    break;
                default:
                    body.insert(body.begin() + static_cast<std::ptrdiff_t>(at),
                                alphabet[rng() % alphabet.size()]);
            }
        }
        const auto scan = ScanChatRequest(body);
        if (!scan) continue;
        ++accepted;
        boost::system::error_code ec;
        const boost::json::value full = boost::json::parse(body, ec);
        ASSERT_FALSE(ec) << "scanner accepted what the parser rejects: " << body;
        ASSERT_TRUE(full.is_object());
        const auto parsed = ChatRequestFromCanonical(full);
        ASSERT_TRUE(std::holds_alternative<ChatRequest>(parsed)) << body;
        const ChatRequest& request = std::get<ChatRequest>(parsed);
        EXPECT_EQ(request.model, scan->model) << body;
        EXPECT_EQ(request.stream, scan->stream) << body;
        EXPECT_EQ(request.include_usage, scan->include_usage) << body;
        EXPECT_EQ(request.max_tokens, scan->max_tokens) << body;
    }
    EXPECT_GT(accepted, 1000);  // the mutations leave many valid documents
}

TEST(ChatScanTest, AScannedRequestIsRenderedFromItsBytesWhenRewritten) {
    const std::string body = R"({"model":"group","messages":[{"role":"user","content":"hi"}]})";
    const auto parsed = ParseOpenAiChat(body);
    const ChatRequest& request = std::get<ChatRequest>(parsed);
    EXPECT_TRUE(request.body.is_null());
    EXPECT_EQ(request.raw.data(), body.data());
    const boost::json::value rendered =
        boost::json::parse(RenderUpstreamBody(request, "gpt-4.1", {}));
    EXPECT_EQ(rendered.at("model").as_string(), "gpt-4.1");
    EXPECT_EQ(rendered.at("messages").as_array().size(), 1u);
    // Only the model changes: the client's bytes with the model spliced in, no document built.
    EXPECT_EQ(RenderUpstreamBody(request, "gpt-4.1", {}),
              R"({"model":"gpt-4.1","messages":[{"role":"user","content":"hi"}]})");
    // A model name that JSON must escape is escaped.
    EXPECT_EQ(RenderUpstreamBody(request, "a\"b", {}),
              R"({"model":"a\"b","messages":[{"role":"user","content":"hi"}]})");
    // A "model" inside content is content.
    const std::string tricky =
        R"({"messages":[{"role":"user","content":"\"model\":\"x\""}],"model":"g"})";
    const auto tricky_parsed = ParseOpenAiChat(tricky);
    const std::string sent = RenderUpstreamBody(std::get<ChatRequest>(tricky_parsed), "m", {});
    EXPECT_EQ(boost::json::parse(sent).at("model").as_string(), "m");
    EXPECT_EQ(boost::json::parse(sent).at("messages").at(0).at("content").as_string(),
              "\"model\":\"x\"");
}

}  // namespace chat_scan_test
}  // namespace switchyard::api
