#include "observe/metrics.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "observe/access_log.h"

namespace switchyard::observe {
namespace metrics_test {

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
                        "model_group=\"smart\",deployment=\"dep \\\"1\\\"\",le=\"0.025\"} 2\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("switchyard_request_duration_seconds_count{route=\"chat\","
                        "model_group=\"smart\",deployment=\"dep \\\"1\\\"\"} 3\n"),
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

TEST(AccessLogTest, EscapesEveryControlAndQuoteAndWritesLatencyToTheMicrosecond) {
    RequestRecord r;
    r.path = "/a\"b\\c\x01\x1f\td\u00e9";
    r.latency_seconds = 1.2345678;
    r.stream = true;
    r.attempts = 2;
    r.fallback_depth = 1;
    r.client_retry_count = 3;
    const std::string line = AccessLog::Format(r);
    EXPECT_NE(line.find("\"path\":\"/a\\\"b\\\\c\\u0001\\u001f\\td\u00e9\""), std::string::npos)
        << line;
    EXPECT_NE(line.find("\"latency_ms\":1234.568,"), std::string::npos) << line;
    const auto json = boost::json::parse(line).as_object();
    EXPECT_EQ(json.at("path").as_string(), r.path);
    EXPECT_EQ(json.at("stream").as_bool(), true);
    EXPECT_EQ(json.at("attempts").as_int64(), 2);
    EXPECT_EQ(json.at("fallback_depth").as_int64(), 1);
    EXPECT_EQ(json.at("client_retry_count").as_int64(), 3);
    EXPECT_FALSE(json.contains("input_tokens"));
    r.latency_seconds = 0.0000004;  // rounds to 0.000 ms
    EXPECT_NE(AccessLog::Format(r).find("\"latency_ms\":0.000,"), std::string::npos);
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

TEST(MetricsTest, CountsTokensCostRetriesWaitsAndTheAmplification) {
    Metrics metrics(2);
    RequestRecord r;
    r.route = "chat";
    r.model_group = "smart";
    r.deployment = "large";
    r.key = "app";
    r.status = 200;
    r.input_tokens = 10;
    r.output_tokens = 5;
    r.cost_usd = 0.25;
    metrics.Record(0, r);
    metrics.Record(1, r);
    r.deployment = "";  // a local reply uses no tokens of any deployment
    metrics.Record(1, r);
    metrics.CountEngineRequest();
    metrics.CountEngineRequest();
    metrics.CountAttempt(0, "large", "overloaded");
    metrics.CountAttempt(0, "large", "none");
    metrics.CountAttempt(1, "large", "none");
    metrics.CountRetry(0, "smart", "overloaded");
    metrics.ObserveWait(0, "backoff", 0.3);
    metrics.ObserveTimeToFirstToken(1, "smart", "large", 0.04);
    metrics.CountFallback(2);
    metrics.CountSpendCapDisable("large");
    metrics.CountSpansDropped("queue_full", 3);
    const std::string text = metrics.Render();
    const auto has = [&](std::string_view line) {
        return text.find(std::string(line) + "\n") != std::string::npos;
    };
    EXPECT_TRUE(
        has("switchyard_tokens_total{key=\"app\",deployment=\"large\",direction=\"input\"} 20"))
        << text;
    EXPECT_TRUE(
        has("switchyard_tokens_total{key=\"app\",deployment=\"large\",direction=\"output\"} 10"));
    EXPECT_TRUE(has("switchyard_cost_usd_total{key=\"app\",deployment=\"large\"} 0.5"));
    EXPECT_TRUE(
        has("switchyard_retries_total{model_group=\"smart\",error_class=\"overloaded\"} 1"));
    EXPECT_TRUE(has("switchyard_wait_seconds_bucket{reason=\"backoff\",le=\"0.25\"} 0"));
    EXPECT_TRUE(has("switchyard_wait_seconds_bucket{reason=\"backoff\",le=\"0.5\"} 1"));
    EXPECT_TRUE(
        has("switchyard_time_to_first_token_seconds_count{model_group=\"smart\",deployment="
            "\"large\"} 1"));
    EXPECT_TRUE(has("switchyard_engine_requests_total 2"));
    EXPECT_TRUE(has("switchyard_retry_amplification_ratio 1.5"));
    EXPECT_TRUE(has("switchyard_fallbacks_total{depth=\"2\"} 1"));
    EXPECT_TRUE(has("switchyard_spend_cap_disables_total{deployment=\"large\"} 1"));
    EXPECT_TRUE(has("switchyard_trace_spans_dropped_total{reason=\"queue_full\"} 3"));
}

TEST(MetricsTest, EveryFamilyIsDescribedBeforeItsFirstSample) {
    const std::string text = Metrics(1).Render();
    for (const std::string_view family :
         {"switchyard_requests_total counter", "switchyard_time_to_first_token_seconds histogram",
          "switchyard_retries_total counter", "switchyard_wait_seconds histogram",
          "switchyard_tokens_total counter", "switchyard_cost_usd_total counter",
          "switchyard_fallbacks_total counter", "switchyard_spend_cap_disables_total counter",
          "switchyard_trace_spans_exported_total counter",
          "switchyard_trace_spans_dropped_total counter"}) {
        EXPECT_NE(text.find("# TYPE " + std::string(family) + "\n"), std::string::npos) << family;
    }
}

}  // namespace metrics_test
}  // namespace switchyard::observe
