#include "stats.h"

#include <gtest/gtest.h>

namespace switchyard::mock {
namespace {

TEST(Stats, CountsAndKeepsTheMostRecentRequests) {
    Stats stats;
    for (std::size_t i = 0; i < Stats::kCapacity + 5; ++i) {
        RequestObservation observation;
        observation.path = "/v1/chat/completions";
        observation.model = i % 2 == 0 ? "a" : "b";
        observation.t_ms = 1700000000000.25;
        observation.status = 200;
        observation.retry_count = "0";
        observation.body = R"({"model":"a"})";
        stats.Record(observation);
    }
    const std::string json = stats.ToJson();
    EXPECT_TRUE(json.starts_with(R"({"total":10005,"paths":{"/v1/chat/completions":10005},)"
                                 R"("models":{"a":5003,"b":5002},)"
                                 R"("rate_limited":{"total":0,"paths":{},"reasons":{"requests":0,)"
                                 R"("tokens":0,"input_tokens":0,"output_tokens":0,)"
                                 R"("acceleration":0}},"client_closed":{"total":0,"models":{}},)"
                                 R"("batches":{"created":0,"polls":0,"lines":0,"refused":0},)"
                                 R"("requests":[{"seq":6,)"))
        << json.substr(0, 200);
    EXPECT_NE(json.find(R"("t_ms":1700000000000.250,"status":200,"fault":"","rate_limit":"",)"
                        R"("headers":{"x-stainless-retry-count":"0"},"body":"{\"model\":\"a\"}"})"),
              std::string::npos);
    EXPECT_TRUE(json.ends_with(R"({"seq":10005,"path":"/v1/chat/completions","model":"a",)"
                               R"("t_ms":1700000000000.250,"status":200,"fault":"",)"
                               R"("rate_limit":"","headers":{"x-stainless-retry-count":"0"},)"
                               R"("body":"{\"model\":\"a\"}"}]})"));
    stats.Reset();
    EXPECT_EQ(stats.ToJson(),
              R"({"total":0,"paths":{},"models":{},"rate_limited":{"total":0,"paths":{},)"
              R"("reasons":{"requests":0,"tokens":0,"input_tokens":0,"output_tokens":0,)"
              R"("acceleration":0}},"client_closed":{"total":0,"models":{}},)"
              R"("batches":{"created":0,"polls":0,"lines":0,"refused":0},"requests":[]})");
}

TEST(Stats, CountsClientsThatClosedBeforeTheirAnswerByModel) {
    Stats stats;
    stats.CountClientClosed("a");
    stats.CountClientClosed("a");
    stats.CountClientClosed("b");
    EXPECT_NE(stats.ToJson().find(R"("client_closed":{"total":3,"models":{"a":2,"b":1}})"),
              std::string::npos)
        << stats.ToJson();
    stats.Reset();
    EXPECT_NE(stats.ToJson().find(R"("client_closed":{"total":0,"models":{}})"), std::string::npos);
}

TEST(Stats, CountsBatchTrafficApartFromRequests) {
    Stats stats;
    stats.CountBatch(BatchEvent::kCreated);
    stats.CountBatch(BatchEvent::kCreated);
    stats.CountBatch(BatchEvent::kPoll, 3);
    stats.CountBatch(BatchEvent::kLine, 7);
    stats.CountBatch(BatchEvent::kRefused);
    const std::string json = stats.ToJson();
    EXPECT_NE(json.find(R"("batches":{"created":2,"polls":3,"lines":7,"refused":1},)"
                        R"("requests":[])"),
              std::string::npos)
        << json;
    EXPECT_TRUE(json.starts_with(R"({"total":0,"paths":{},"models":{},)")) << json;
    stats.Reset();
    EXPECT_NE(stats.ToJson().find(R"("batches":{"created":0,"polls":0,"lines":0,"refused":0})"),
              std::string::npos);
}

TEST(Stats, CountsRateLimitRejectionsByPathAndReason) {
    Stats stats;
    const auto record = [&stats](std::string_view path, std::string_view rate_limit) {
        RequestObservation observation;
        observation.path = path;
        observation.status = rate_limit.empty() ? 200 : 429;
        observation.rate_limit = rate_limit;
        stats.Record(observation);
    };
    record("/v1/chat/completions", "");
    record("/v1/chat/completions", "requests");
    record("/v1/chat/completions", "tokens");
    record("/v1/messages", "output_tokens");
    record("/v1/messages", "acceleration");
    record("/v1/messages", "acceleration");
    const std::string json = stats.ToJson();
    EXPECT_NE(json.find(R"("rate_limited":{"total":5,)"
                        R"("paths":{"/v1/chat/completions":2,"/v1/messages":3},)"
                        R"("reasons":{"requests":1,"tokens":1,"input_tokens":0,)"
                        R"("output_tokens":1,"acceleration":2}})"),
              std::string::npos)
        << json;
    EXPECT_NE(json.find(R"("seq":2,"path":"/v1/chat/completions","model":"","t_ms":0.000,)"
                        R"("status":429,"fault":"","rate_limit":"requests",)"),
              std::string::npos)
        << json;
    stats.Reset();
    EXPECT_NE(stats.ToJson().find(R"("rate_limited":{"total":0,"paths":{},)"), std::string::npos);
}

}  // namespace
}  // namespace switchyard::mock
