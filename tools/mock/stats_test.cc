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
                                 R"("models":{"a":5003,"b":5002},"requests":[{"seq":6,)"))
        << json.substr(0, 200);
    EXPECT_NE(json.find(R"("t_ms":1700000000000.250,"status":200,"fault":"",)"
                        R"("headers":{"x-stainless-retry-count":"0"},"body":"{\"model\":\"a\"}"})"),
              std::string::npos);
    EXPECT_TRUE(json.ends_with(R"({"seq":10005,"path":"/v1/chat/completions","model":"a",)"
                               R"("t_ms":1700000000000.250,"status":200,"fault":"",)"
                               R"("headers":{"x-stainless-retry-count":"0"},)"
                               R"("body":"{\"model\":\"a\"}"}]})"));
    stats.Reset();
    EXPECT_EQ(stats.ToJson(), R"({"total":0,"paths":{},"models":{},"requests":[]})");
}

}  // namespace
}  // namespace switchyard::mock
