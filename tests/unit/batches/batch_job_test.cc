#include "batches/batch_job.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "batches/batch_lines.h"
#include "batches/provider_lines.h"

namespace switchyard::batches {
namespace {

namespace json = boost::json;

TEST(BatchJobTest, TheStoreRecordRoundTrips) {
    BatchJob job;
    job.id = "batch_1";
    job.owner = "ab";
    job.api = Api::kAnthropic;
    job.endpoint = "/v1/messages";
    job.status = Status::kCancelling;
    job.total = 7;
    job.counts = {3, 1, 2, 1};
    job.metadata = json::object{{"k", "v"}};
    job.errors.push_back(json::object{{"code", "x"}});
    job.created_s = 100;
    job.cancelling_s = 150;
    job.cursor_line = 4;
    job.cursor_offset = 400;
    job.mode = "provider";
    job.deployment = "dep";
    job.provider_batch_id = "msgbatch_x";
    job.cancel_sent = true;
    const std::optional<BatchJob> back = JobFromRecord(JobRecord(job));
    ASSERT_TRUE(back);
    EXPECT_EQ(json::serialize(JobRecord(*back)), json::serialize(JobRecord(job)));
    EXPECT_FALSE(JobFromRecord(json::object{{"id", "x"}, {"status", "dancing"}}));
}

TEST(BatchJobTest, OpenAiObjectCountsAndTimestamps) {
    BatchJob job;
    job.id = "batch_1";
    job.endpoint = "/v1/chat/completions";
    job.input_file_id = "file-1";
    job.status = Status::kExpired;
    job.total = 10;
    job.counts = {6, 1, 0, 3};
    job.created_s = 1000;
    job.expired_s = 2000;
    job.output_file_id = "file-2";
    const json::object o = OpenAiBatchObject(job);
    EXPECT_EQ(o.at("object"), "batch");
    EXPECT_EQ(o.at("status"), "expired");
    EXPECT_EQ(o.at("expires_at"), 1000 + 24 * 3600);
    EXPECT_EQ(o.at("expired_at"), 2000);
    EXPECT_TRUE(o.at("completed_at").is_null());
    EXPECT_TRUE(o.at("error_file_id").is_null());
    EXPECT_TRUE(o.at("errors").is_null());
    // Requests that did not run count as failed, as the providers count them.
    EXPECT_EQ(o.at("request_counts"),
              (json::object{{"total", 10}, {"completed", 6}, {"failed", 4}}));
}

TEST(BatchJobTest, AnthropicObjectCountsOnlyOnceEnded) {
    BatchJob job;
    job.id = "msgbatch_1";
    job.api = Api::kAnthropic;
    job.status = Status::kInProgress;
    job.total = 5;
    job.counts = {2, 1, 0, 0};
    job.created_s = 1'800'000'000;
    json::object o = AnthropicBatchObject(job, "http://gw:4000");
    EXPECT_EQ(o.at("processing_status"), "in_progress");
    EXPECT_EQ(o.at("request_counts").at("processing"), 5);
    EXPECT_EQ(o.at("request_counts").at("succeeded"), 0);
    EXPECT_TRUE(o.at("results_url").is_null());
    EXPECT_EQ(o.at("created_at"), "2027-01-15T08:00:00.000Z");
    job.status = Status::kCompleted;
    job.completed_s = job.created_s + 60;
    job.counts = {4, 1, 0, 0};
    o = AnthropicBatchObject(job, "http://gw:4000");
    EXPECT_EQ(o.at("processing_status"), "ended");
    EXPECT_EQ(
        o.at("request_counts"),
        (json::object{
            {"processing", 0}, {"succeeded", 4}, {"errored", 1}, {"canceled", 0}, {"expired", 0}}));
    EXPECT_EQ(o.at("results_url"), "http://gw:4000/v1/messages/batches/msgbatch_1/results");
    EXPECT_EQ(o.at("ended_at"), "2027-01-15T08:01:00.000Z");
}

TEST(BatchJobTest, WindowsIdsAndCustomIds) {
    EXPECT_EQ(ParseWindow("24h"), 86400);
    EXPECT_EQ(ParseWindow("90m"), 5400);
    EXPECT_EQ(ParseWindow("1s"), 1);
    EXPECT_FALSE(ParseWindow("25h"));
    EXPECT_FALSE(ParseWindow("0h"));
    EXPECT_FALSE(ParseWindow("24"));
    EXPECT_FALSE(ParseWindow("h"));
    EXPECT_FALSE(ParseWindow("1.5h"));
    EXPECT_EQ(NewFileId().size(), 5u + 24u);
    EXPECT_EQ(NewBatchId(Api::kOpenAi).size(), 6u + 32u);
    EXPECT_NE(NewBatchId(Api::kAnthropic), NewBatchId(Api::kAnthropic));
    EXPECT_TRUE(ValidCustomId("req_1-A"));
    EXPECT_FALSE(ValidCustomId(""));
    EXPECT_FALSE(ValidCustomId("has space"));
    EXPECT_FALSE(ValidCustomId(std::string(65, 'a')));
}

TEST(BatchLinesTest, InputLinesAreCheckedAsTheProvidersCheckThem) {
    LineProblem why;
    const auto ok = ReadInputLine(
        Api::kOpenAi, "/v1/chat/completions",
        R"({"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"m","messages":[]}})",
        why);
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->custom_id, "a");
    EXPECT_EQ(ok->model, "m");
    EXPECT_FALSE(ReadInputLine(Api::kOpenAi, "/v1/chat/completions", "{", why));
    EXPECT_EQ(why.code, "invalid_json_line");
    EXPECT_FALSE(ReadInputLine(
        Api::kOpenAi, "/v1/chat/completions",
        R"({"custom_id":"a","method":"POST","url":"/v1/embeddings","body":{"model":"m"}})", why));
    EXPECT_EQ(why.code, "url_mismatch");
    EXPECT_FALSE(ReadInputLine(
        Api::kOpenAi, "/v1/chat/completions",
        R"({"custom_id":"a","method":"GET","url":"/v1/chat/completions","body":{"model":"m"}})",
        why));
    EXPECT_FALSE(ReadInputLine(Api::kAnthropic, "/v1/messages",
                               R"({"custom_id":"a","params":{"model":"m","stream":true}})", why));
    EXPECT_NE(why.message.find("stream"), std::string::npos);
    const auto message = ReadInputLine(Api::kAnthropic, "/v1/messages",
                                       R"({"custom_id":"a","params":{"model":"m"}})", why);
    ASSERT_TRUE(message);
    EXPECT_EQ(message->url, "/v1/messages");
}

TEST(BatchLinesTest, ResultLinesInEachApi) {
    const json::value openai = json::parse(
        AnswerLine(Api::kOpenAi, "c1", 200, "req_1", R"({"object":"chat.completion"})"));
    EXPECT_EQ(openai.at("custom_id"), "c1");
    EXPECT_EQ(openai.at("response").at("status_code"), 200);
    EXPECT_EQ(openai.at("response").at("request_id"), "req_1");
    EXPECT_EQ(openai.at("response").at("body").at("object"), "chat.completion");
    EXPECT_TRUE(openai.at("error").is_null());
    const json::value expired = json::parse(UnrunLine(Api::kOpenAi, "c2", Unrun::kExpired));
    EXPECT_TRUE(expired.at("response").is_null());
    EXPECT_EQ(expired.at("error").at("code"), "batch_expired");
    const json::value errored = json::parse(
        AnswerLine(Api::kAnthropic, "c3", 400, "req_2",
                   R"({"type":"error","error":{"type":"invalid_request_error","message":"m"}})"));
    EXPECT_EQ(errored.at("result").at("type"), "errored");
    EXPECT_EQ(errored.at("result").at("error").at("error").at("type"), "invalid_request_error");
    EXPECT_EQ(errored.at("result").at("error").at("request_id"), "req_2");
    EXPECT_EQ(json::parse(UnrunLine(Api::kAnthropic, "c4", Unrun::kCanceled)),
              json::parse(R"({"custom_id":"c4","result":{"type":"canceled"}})"));
    EXPECT_EQ(TokensOf(R"({"usage":{"prompt_tokens":3,"completion_tokens":4}})").output, 4);
    EXPECT_EQ(TokensOf(R"({"usage":{"input_tokens":5,"output_tokens":6}})").input, 5);
}

config::Deployment DeploymentOf(config::Provider provider) {
    config::Deployment d;
    d.name = "dep";
    d.provider = provider;
    d.model = "upstream-model";
    d.input_price = 2;
    d.output_price = 8;
    return d;
}

TEST(ProviderLinesTest, BodiesCarryTheDeploymentsModelAndWire) {
    const config::Deployment openai = DeploymentOf(config::Provider::kOpenAi);
    const config::Deployment anthropic = DeploymentOf(config::Provider::kAnthropic);
    InputLine line{
        "c", "/v1/chat/completions",
        R"({"model":"group","messages":[{"role":"user","content":"hi"}],"fallbacks":["x"]})",
        "group"};
    auto same = ProviderBody(openai, Api::kOpenAi, line);
    ASSERT_TRUE(std::holds_alternative<std::string>(same));
    const json::value body = json::parse(std::get<std::string>(same));
    EXPECT_EQ(body.at("model"), "upstream-model");
    EXPECT_FALSE(body.as_object().contains("fallbacks"));
    auto translated = ProviderBody(anthropic, Api::kOpenAi, line);
    ASSERT_TRUE(std::holds_alternative<std::string>(translated));
    EXPECT_EQ(json::parse(std::get<std::string>(translated)).at("max_tokens"), 4096);
    line.body = R"({"model":"group","messages":[],"seed":7})";  // Anthropic has no seed
    EXPECT_TRUE(
        std::holds_alternative<core::LocalError>(ProviderBody(anthropic, Api::kOpenAi, line)));
    EXPECT_TRUE(ProviderTakes(openai, Api::kAnthropic, "/v1/messages"));
    EXPECT_TRUE(ProviderTakes(openai, Api::kOpenAi, "/v1/embeddings"));
    EXPECT_FALSE(ProviderTakes(anthropic, Api::kOpenAi, "/v1/embeddings"));
    EXPECT_EQ(LineOfProviderId(ProviderCustomId(42)), 42);
    EXPECT_FALSE(LineOfProviderId("x42"));
    EXPECT_FALSE(LineOfProviderId("l"));
}

TEST(ProviderLinesTest, ResultsAreReadAndTranslatedBack) {
    const config::Deployment openai = DeploymentOf(config::Provider::kOpenAi);
    const config::Deployment anthropic = DeploymentOf(config::Provider::kAnthropic);
    auto r = ReadProviderResult(
        openai,
        R"({"id":"x","custom_id":"l3","response":{"status_code":400,"request_id":"q","body":{"error":{"message":"bad"}}},"error":null})");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->line, 3);
    EXPECT_EQ(r->status, 400u);
    EXPECT_EQ(r->request_id, "q");
    r = ReadProviderResult(
        openai,
        R"({"id":"x","custom_id":"l4","response":null,"error":{"code":"batch_expired","message":"m"}})");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->unrun, Unrun::kExpired);
    r = ReadProviderResult(
        anthropic,
        R"({"custom_id":"l0","result":{"type":"errored","error":{"type":"error","error":{"type":"overloaded_error","message":"o"}}}})");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 529u);
    r = ReadProviderResult(
        anthropic,
        R"({"custom_id":"l1","result":{"type":"succeeded","message":{"type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":2}}}})");
    ASSERT_TRUE(r);
    const json::value chat =
        json::parse(ClientBody(anthropic, Api::kOpenAi, "/v1/chat/completions", 200, r->body, 5));
    EXPECT_EQ(chat.at("object"), "chat.completion");
    EXPECT_EQ(chat.at("choices").at(0).at("message").at("content"), "hi");
    EXPECT_FALSE(ReadProviderResult(openai, R"({"custom_id":"client-id"})"));
    // Half the synchronous price unless the deployment says otherwise.
    EXPECT_DOUBLE_EQ(BatchCost(openai, 0.5, {1'000'000, 1'000'000}), 5.0);
    config::Deployment priced = openai;
    priced.batch_output_price = 1;
    EXPECT_DOUBLE_EQ(BatchCost(priced, 0.5, {1'000'000, 1'000'000}), 2.0);
}

}  // namespace
}  // namespace switchyard::batches
