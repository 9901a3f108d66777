#include "observe/metrics.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "observe/access_log.h"

namespace switchyard::observe {
namespace {

TEST(MetricsTest, SumsShardsIntoPrometheusText) {
    Metrics metrics(2);
    RequestRecord r;
    r.route = "chat";
    r.model_group = "smart";
    r.deployment = "dep \"1\"";
    r.status = 200;
    r.latency_seconds = 0.02;
    metrics.Record(0, r);
    metrics.Record(1, r);
    r.status = 502;
    r.latency_seconds = 3;
    metrics.Record(1, r);
    const std::string text = metrics.Render();
    EXPECT_NE(text.find("switchyard_requests_total{route=\"chat\",model_group=\"smart\","
                        "deployment=\"dep \\\"1\\\"\",status=\"200\"} 2\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("status=\"502\"} 1\n"), std::string::npos) << text;
    EXPECT_NE(text.find("switchyard_request_duration_seconds_bucket{route=\"chat\","
                        "model_group=\"smart\",le=\"0.025\"} 2\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("switchyard_request_duration_seconds_count{route=\"chat\","
                        "model_group=\"smart\"} 3\n"),
              std::string::npos)
        << text;
}

TEST(AccessLogTest, FormatsOneJsonLine) {
    RequestRecord r;
    r.method = "POST";
    r.path = "/v1/chat/completions";
    r.route = "chat";
    r.model_group = "g";
    r.deployment = "d";
    r.status = 200;
    r.latency_seconds = 0.0125;
    r.upstream_request_id = "req_1";
    r.input_tokens = 3;
    r.output_tokens = 4;
    r.error = "bad \"thing\"\n";
    const std::string line = AccessLog::Format(r);
    ASSERT_EQ(line.back(), '\n');
    EXPECT_EQ(line.find('\n'), line.size() - 1);
    const auto json = boost::json::parse(line).as_object();
    EXPECT_EQ(json.at("status").as_int64(), 200);
    EXPECT_DOUBLE_EQ(json.at("latency_ms").as_double(), 12.5);
    EXPECT_EQ(json.at("upstream_request_id").as_string(), "req_1");
    EXPECT_EQ(json.at("output_tokens").as_int64(), 4);
    EXPECT_EQ(json.at("error").as_string(), "bad \"thing\"\n");
    EXPECT_EQ(json.at("time").as_string().size(), std::string("1970-01-01T00:00:00.000Z").size());
}

TEST(MetricsTest, RendersRateLimitEventsPerKeyAndLane) {
    Metrics metrics(2);
    metrics.CountKeyRefusal("chat \"app\"", "requests");
    metrics.CountKeyRefusal("chat \"app\"", "requests");
    metrics.CountKeyRefusal("backfill", "budget");
    metrics.CountHeadroomWait("batch");
    metrics.CountShed("batch");
    const std::string text = metrics.Render();
    EXPECT_NE(
        text.find(
            "switchyard_key_refusals_total{key=\"chat \\\"app\\\"\",reason=\"requests\"} 2\n"),
        std::string::npos)
        << text;
    EXPECT_NE(text.find("switchyard_key_refusals_total{key=\"backfill\",reason=\"budget\"} 1\n"),
              std::string::npos);
    EXPECT_NE(text.find("switchyard_headroom_waits_total{lane=\"batch\"} 1\n"), std::string::npos);
    EXPECT_NE(text.find("switchyard_shed_total{lane=\"batch\"} 1\n"), std::string::npos);
    EXPECT_NE(text.find("# TYPE switchyard_shed_total counter\n"), std::string::npos);
}

}  // namespace
}  // namespace switchyard::observe
