#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "observe/span.h"
#include "observe/trace_context.h"

namespace switchyard::observe {
namespace trace_test {

TEST(TraceParentTest, ReadsTheW3cExample) {
    auto parent = ParseTraceParent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    ASSERT_TRUE(parent);
    EXPECT_EQ(Hex(parent->trace_id), "0af7651916cd43dd8448eb211c80319c");
    EXPECT_EQ(Hex(parent->span_id), "b7ad6b7169203331");
    EXPECT_TRUE(parent->sampled);
    EXPECT_EQ(FormatTraceParent(*parent),
              "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    parent->sampled = false;
    EXPECT_EQ(FormatTraceParent(*parent),
              "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00");
}

TEST(TraceParentTest, RefusesWhatTheSpecRefuses) {
    for (const char* bad : {
             "",
             "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",        // no flags
             "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",     // upper case
             "00-00000000000000000000000000000000-b7ad6b7169203331-01",     // zero trace id
             "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",     // zero parent id
             "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",     // version ff
             "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-xx",  // 00 has no more
             "00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
             "00-0af7651916cd43dd8448eb211c80319g-b7ad6b7169203331-01",
         }) {
        EXPECT_FALSE(ParseTraceParent(bad)) << bad;
    }
    // A later version may append fields; its first four are read as version 00's.
    const auto future =
        ParseTraceParent("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00-extra");
    ASSERT_TRUE(future);
    EXPECT_FALSE(future->sampled);
}

TEST(OtlpEncodingTest, SpansBecomeOneResourceWithHexIdsAndStringIntegers) {
    Span root;
    root.trace_id =
        ParseTraceParent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")->trace_id;
    root.span_id = {1, 2, 3, 4, 5, 6, 7, 8};
    root.name = "chat smart";
    root.kind = Span::Kind::kServer;
    root.start_unix_ns = 1'700'000'000'000'000'000;
    root.end_unix_ns = 1'700'000'000'500'000'000;
    root.Set("gen_ai.usage.input_tokens", std::int64_t{12});
    root.Set("switchyard.stream", true);
    root.Set("switchyard.cost_usd", 0.5);
    root.SetIfAny("switchyard.key", "");
    Span attempt = root;
    attempt.parent_id = root.span_id;
    attempt.span_id = {9, 9, 9, 9, 9, 9, 9, 9};
    attempt.kind = Span::Kind::kClient;
    attempt.error = true;
    attempt.status_message = "overloaded";
    const std::vector<Span> spans{root, attempt};
    const auto body = boost::json::parse(EncodeOtlpTraces(spans, "gw", "0.1.0")).as_object();
    const auto& resource = body.at("resourceSpans").as_array().at(0).as_object();
    EXPECT_EQ(
        resource.at("resource").at("attributes").as_array().at(0).at("value").at("stringValue"),
        "gw");
    const auto& out = resource.at("scopeSpans").as_array().at(0).at("spans").as_array();
    ASSERT_EQ(out.size(), 2u);
    const auto& first = out.at(0).as_object();
    EXPECT_EQ(first.at("traceId"), "0af7651916cd43dd8448eb211c80319c");
    EXPECT_EQ(first.at("spanId"), "0102030405060708");
    EXPECT_FALSE(first.contains("parentSpanId"));
    EXPECT_FALSE(first.contains("status"));
    EXPECT_EQ(first.at("kind"), 2);
    EXPECT_EQ(first.at("startTimeUnixNano"), "1700000000000000000");
    const auto& attributes = first.at("attributes").as_array();
    ASSERT_EQ(attributes.size(), 3u);  // the empty key is left out
    EXPECT_EQ(attributes.at(0).at("value").at("intValue"), "12");
    EXPECT_EQ(attributes.at(1).at("value").at("boolValue"), true);
    EXPECT_EQ(attributes.at(2).at("value").at("doubleValue"), 0.5);
    const auto& second = out.at(1).as_object();
    EXPECT_EQ(second.at("parentSpanId"), "0102030405060708");
    EXPECT_EQ(second.at("status").at("code"), 2);
    EXPECT_EQ(second.at("status").at("message"), "overloaded");
}

}  // namespace trace_test
}  // namespace switchyard::observe
