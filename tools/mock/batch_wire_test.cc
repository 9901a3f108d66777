#include "batch_wire.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

namespace switchyard::mock::batches {
namespace {

namespace json = boost::json;
using std::chrono::seconds;

// 2023-11-14T22:13:20Z plus 250 ms.
const WallTime kCreated = WallTime(seconds(1'700'000'000)) + std::chrono::milliseconds(250);

json::value Parse(std::string_view text) {
    boost::system::error_code ec;
    json::value value = json::parse(json::string_view(text.data(), text.size()), ec);
    EXPECT_FALSE(ec) << text;
    return value;
}

std::string InputLine(std::string_view custom_id, std::string_view model,
                      std::string_view url = "/v1/chat/completions") {
    return fmt::format(
        R"({{"custom_id":"{}","method":"POST","url":"{}","body":{{"model":"{}","messages":[]}}}})",
        custom_id, url, model);
}

TEST(ParseOpenAiBatchRequest, TakesTheFieldsOfACreateCall) {
    const OpenAiBatchRequest request = ParseOpenAiBatchRequest(
        R"({"input_file_id":"file-abc","endpoint":"/v1/embeddings","completion_window":"24h",)"
        R"("metadata":{"job":"nightly"}})");
    EXPECT_EQ(request.status, 0) << request.error_body;
    EXPECT_EQ(request.input_file_id, "file-abc");
    EXPECT_EQ(request.endpoint, "/v1/embeddings");
    EXPECT_EQ(request.completion_window, "24h");
    EXPECT_EQ(request.metadata, R"({"job":"nightly"})");
    EXPECT_EQ(ParseOpenAiBatchRequest(R"({"input_file_id":"f","endpoint":"/v1/responses",)"
                                      R"("completion_window":"24h","metadata":null})")
                  .metadata,
              "null");
}

TEST(ParseOpenAiBatchRequest, RejectsBadBodies) {
    const std::pair<std::string_view, std::string_view> cases[] = {
        {"{", "We could not parse the JSON body"},
        {"[]", "expected a JSON object, but got an array"},
        {R"({"endpoint":"/v1/chat/completions","completion_window":"24h"})",
         "Missing required parameter: 'input_file_id'."},
        {R"({"input_file_id":1,"endpoint":"/v1/chat/completions","completion_window":"24h"})",
         "Invalid type for 'input_file_id': expected a string, but got an integer instead."},
        {R"({"input_file_id":"f","endpoint":"/v1/completions","completion_window":"24h"})",
         "Invalid value: '/v1/completions'."},
        {R"({"input_file_id":"f","endpoint":"/v1/embeddings","completion_window":"1h"})",
         "Invalid value: '1h'. Supported values are: '24h'."},
        {R"({"input_file_id":"f","endpoint":"/v1/embeddings","completion_window":"24h",)"
         R"("metadata":[]})",
         "Invalid type for 'metadata'"},
        {R"({"input_file_id":"f","endpoint":"/v1/embeddings","completion_window":"24h",)"
         R"("metadata":{"n":1}})",
         "Invalid type for 'metadata.n'"},
    };
    for (const auto& [body, message] : cases) {
        const OpenAiBatchRequest request = ParseOpenAiBatchRequest(body);
        EXPECT_EQ(request.status, 400) << body;
        EXPECT_NE(request.error_body.find(message), std::string::npos)
            << body << " -> " << request.error_body;
        EXPECT_NE(request.error_body.find(R"("type":"invalid_request_error")"), std::string::npos);
    }
}

TEST(ParseOpenAiInput, ReadsOneRequestPerLine) {
    const std::string content =
        InputLine("a", "gpt-4o") + "\n\n" + InputLine("b", "other") + "\r\n" + InputLine("c", "x");
    const OpenAiInput input = ParseOpenAiInput(content, "/v1/chat/completions");
    EXPECT_TRUE(input.errors.empty());
    ASSERT_EQ(input.lines.size(), 3u);
    EXPECT_EQ(input.lines[0].custom_id, "a");
    EXPECT_EQ(input.lines[0].url, "/v1/chat/completions");
    EXPECT_EQ(input.lines[0].body, R"({"model":"gpt-4o","messages":[]})");
    EXPECT_EQ(input.lines[2].custom_id, "c");
    EXPECT_EQ(input.model, "gpt-4o");
}

TEST(ParseOpenAiInput, ListsTheErrorsOfItsLines) {
    const std::string content = InputLine("a", "m") + "\nnot json\n" + InputLine("a", "m") + "\n" +
                                InputLine("b", "m", "/v1/embeddings") + "\n" +
                                R"({"custom_id":"c","method":"GET","url":"/v1/chat/completions",)"
                                R"("body":{}})" +
                                "\n" +
                                R"({"custom_id":"d","method":"POST","url":"/v1/chat/completions"})";
    const OpenAiInput input = ParseOpenAiInput(content, "/v1/chat/completions");
    ASSERT_EQ(input.errors.size(), 5u);
    EXPECT_EQ(input.errors[0].code, "invalid_json_line");
    EXPECT_EQ(input.errors[0].line, 2);
    EXPECT_EQ(input.errors[1].code, "duplicate_custom_id");
    EXPECT_EQ(input.errors[1].line, 3);
    EXPECT_EQ(input.errors[2].code, "invalid_url");
    EXPECT_EQ(input.errors[2].param, "url");
    EXPECT_EQ(input.errors[3].code, "invalid_value");
    EXPECT_EQ(input.errors[3].param, "method");
    EXPECT_EQ(input.errors[4].code, "missing_required_parameter");
    EXPECT_EQ(input.errors[4].message, "Missing required parameter: 'body'.");
    EXPECT_EQ(input.errors[4].line, 6);

    const OpenAiInput empty = ParseOpenAiInput("\n \n", "/v1/chat/completions");
    ASSERT_EQ(empty.errors.size(), 1u);
    EXPECT_EQ(empty.errors[0].code, "empty_file");
    EXPECT_EQ(empty.errors[0].line, std::nullopt);
}

TEST(ParseMessageBatchRequest, ReadsRequests) {
    const MessageBatchRequest request = ParseMessageBatchRequest(
        R"({"requests":[{"custom_id":"r-1","params":{"model":"claude-x","max_tokens":5,)"
        R"("messages":[]}},{"custom_id":"R_2","params":{"model":"other"}}]})");
    EXPECT_EQ(request.error, "");
    ASSERT_EQ(request.lines.size(), 2u);
    EXPECT_EQ(request.model, "claude-x");
    EXPECT_EQ(request.lines[0].custom_id, "r-1");
    EXPECT_EQ(request.lines[0].url, "/v1/messages");
    EXPECT_EQ(request.lines[0].body, R"({"model":"claude-x","max_tokens":5,"messages":[]})");
    EXPECT_EQ(request.lines[1].custom_id, "R_2");
}

TEST(ParseMessageBatchRequest, RejectsBadBodies) {
    const std::string too_long(65, 'a');
    const std::pair<std::string, std::string_view> cases[] = {
        {"{", "The request body is not valid JSON."},
        {"[]", "Input should be a valid dictionary"},
        {"{}", "requests: Field required"},
        {R"({"requests":{}})", "requests: Input should be a valid list"},
        {R"({"requests":[]})",
         "requests: List should have at least 1 item after validation, not 0"},
        {R"({"requests":[1]})", "requests.0: Input should be a valid dictionary"},
        {R"({"requests":[{"params":{}}]})", "requests.0.custom_id: Field required"},
        {R"({"requests":[{"custom_id":7,"params":{}}]})",
         "requests.0.custom_id: Input should be a valid string"},
        {R"({"requests":[{"custom_id":"a b","params":{}}]})",
         "requests.0.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'"},
        {R"({"requests":[{"custom_id":")" + too_long + R"(","params":{}}]})",
         "requests.0.custom_id: String should match pattern"},
        {R"({"requests":[{"custom_id":"a","params":{}},{"custom_id":"a","params":{}}]})",
         "requests.1.custom_id: Duplicate custom_id 'a'"},
        {R"({"requests":[{"custom_id":"a"}]})", "requests.0.params: Field required"},
        {R"({"requests":[{"custom_id":"a","params":"x"}]})",
         "requests.0.params: Input should be a valid dictionary"},
    };
    for (const auto& [body, message] : cases) {
        const MessageBatchRequest request = ParseMessageBatchRequest(body);
        EXPECT_TRUE(request.error.starts_with(message)) << body << " -> " << request.error;
        EXPECT_TRUE(request.lines.empty());
    }
    std::string many = R"({"requests":[)";
    for (std::size_t i = 0; i <= kMaxMessageBatchRequests; ++i) {
        if (i > 0) many += ',';
        many += "1";
    }
    many += "]}";
    EXPECT_EQ(ParseMessageBatchRequest(many).error,
              "requests: List should have at most 100000 items after validation, not 100001");
}

TEST(OpenAiObjects, FileObjectAndDeletion) {
    const FileInfo file{"file-abc", "in.jsonl", "batch", 42, kCreated};
    EXPECT_EQ(FileObject(file),
              R"({"id":"file-abc","object":"file","bytes":42,"created_at":1700000000,)"
              R"("filename":"in.jsonl","purpose":"batch","status":"processed",)"
              R"("status_details":null,"expires_at":null})");
    EXPECT_EQ(FileDeleted("file-abc"), R"({"id":"file-abc","object":"file","deleted":true})");
    EXPECT_EQ(FileList({}, false),
              R"({"object":"list","data":[],"first_id":null,"last_id":null,"has_more":false})");
}

BatchInfo OpenAiBatch() {
    BatchInfo batch;
    batch.id = "batch_1";
    batch.created = kCreated;
    batch.endpoint = "/v1/chat/completions";
    batch.input_file_id = "file-in";
    batch.completion_window = "24h";
    batch.model = "gpt-4o";
    batch.total = 3;
    return batch;
}

TEST(OpenAiObjects, BatchAsCreated) {
    EXPECT_EQ(OpenAiBatchObject(OpenAiBatch()),
              R"({"id":"batch_1","object":"batch","endpoint":"/v1/chat/completions",)"
              R"("errors":null,"input_file_id":"file-in","completion_window":"24h",)"
              R"("status":"validating","output_file_id":null,"error_file_id":null,)"
              R"("created_at":1700000000,"in_progress_at":null,"expires_at":1700086400,)"
              R"("finalizing_at":null,"completed_at":null,"failed_at":null,"expired_at":null,)"
              R"("cancelling_at":null,"cancelled_at":null,)"
              R"("request_counts":{"total":0,"completed":0,"failed":0},"metadata":null,)"
              R"("model":"gpt-4o"})");
}

TEST(OpenAiObjects, BatchInProgressCompletedAndFailed) {
    BatchInfo batch = OpenAiBatch();
    batch.status = Status::kInProgress;
    batch.in_progress_at = kCreated;
    batch.metadata = R"({"k":"v"})";
    json::value value = Parse(OpenAiBatchObject(batch));
    EXPECT_EQ(value.at("status"), "in_progress");
    EXPECT_EQ(value.at("in_progress_at"), 1700000000);
    EXPECT_EQ(value.at("request_counts"), Parse(R"({"total":3,"completed":0,"failed":0})"));
    EXPECT_EQ(value.at("metadata"), Parse(R"({"k":"v"})"));

    batch.status = Status::kCompleted;
    batch.finalizing_at = batch.completed_at = kCreated + seconds(2);
    batch.succeeded = 1;
    batch.errored = 1;
    batch.cancelled = 1;
    batch.output_file_id = "file-out";
    value = Parse(OpenAiBatchObject(batch));
    EXPECT_EQ(value.at("completed_at"), 1700000002);
    EXPECT_EQ(value.at("output_file_id"), "file-out");
    EXPECT_EQ(value.at("error_file_id"), nullptr);
    EXPECT_EQ(value.at("request_counts"), Parse(R"({"total":3,"completed":1,"failed":2})"));

    BatchInfo failed = OpenAiBatch();
    failed.status = Status::kFailed;
    failed.failed_at = kCreated;
    failed.model.reset();
    failed.errors.push_back(OpenAiRefusal(BatchRefusal::kQueueLimit, "gpt-4o"));
    failed.errors.push_back(Error{"invalid_url", "m", "url", 4});
    value = Parse(OpenAiBatchObject(failed));
    EXPECT_EQ(value.at("status"), "failed");
    EXPECT_EQ(value.at("failed_at"), 1700000000);
    EXPECT_EQ(value.at("model"), nullptr);
    EXPECT_EQ(value.at("request_counts"), Parse(R"({"total":0,"completed":0,"failed":0})"));
    EXPECT_EQ(value.at("errors"),
              Parse(R"({"object":"list","data":[{"code":"token_limit_exceeded","message":)"
                    R"("Enqueued token limit reached for gpt-4o in organization org-mock. )"
                    R"(Limit: 2,000,000 enqueued tokens. Please try again once some )"
                    R"(in_progress batches have been completed.","param":null,"line":null},)"
                    R"({"code":"invalid_url","message":"m","param":"url","line":4}]})"));
}

TEST(OpenAiObjects, ListHasCursors) {
    BatchInfo newer = OpenAiBatch();
    newer.id = "batch_2";
    const json::value list = Parse(OpenAiBatchList({newer, OpenAiBatch()}, true));
    EXPECT_EQ(list.at("object"), "list");
    EXPECT_EQ(list.at("data").as_array().size(), 2u);
    EXPECT_EQ(list.at("first_id"), "batch_2");
    EXPECT_EQ(list.at("last_id"), "batch_1");
    EXPECT_EQ(list.at("has_more"), true);
}

TEST(MessageBatchObject, InProgressCancelingAndEnded) {
    BatchInfo batch;
    batch.api = Api::kAnthropic;
    batch.id = "msgbatch_1";
    batch.created = kCreated;
    batch.status = Status::kInProgress;
    batch.total = 4;
    EXPECT_EQ(MessageBatchObject(batch, "http://127.0.0.1:9"),
              R"({"id":"msgbatch_1","type":"message_batch","processing_status":"in_progress",)"
              R"("request_counts":{"processing":4,"succeeded":0,"errored":0,"canceled":0,)"
              R"("expired":0},"ended_at":null,"created_at":"2023-11-14T22:13:20.250000Z",)"
              R"("expires_at":"2023-11-15T22:13:20.250000Z","archived_at":null,)"
              R"("cancel_initiated_at":null,"results_url":null})");

    batch.status = Status::kCancelling;
    batch.cancelling_at = kCreated + seconds(1);
    json::value value = Parse(MessageBatchObject(batch, "http://h"));
    EXPECT_EQ(value.at("processing_status"), "canceling");
    EXPECT_EQ(value.at("cancel_initiated_at"), "2023-11-14T22:13:21.250000Z");
    EXPECT_EQ(value.at("results_url"), nullptr);

    batch.status = Status::kCancelled;
    batch.cancelled_at = kCreated + seconds(2);
    batch.succeeded = 0;
    batch.cancelled = 4;
    value = Parse(MessageBatchObject(batch, "http://127.0.0.1:9"));
    EXPECT_EQ(value.at("processing_status"), "ended");
    EXPECT_EQ(value.at("ended_at"), "2023-11-14T22:13:22.250000Z");
    EXPECT_EQ(value.at("request_counts"),
              Parse(R"({"processing":0,"succeeded":0,"errored":0,"canceled":4,"expired":0})"));
    EXPECT_EQ(value.at("results_url"), "http://127.0.0.1:9/v1/messages/batches/msgbatch_1/results");

    const json::value list = Parse(MessageBatchList({batch}, false, "http://h"));
    EXPECT_EQ(list.at("first_id"), "msgbatch_1");
    EXPECT_EQ(list.at("last_id"), "msgbatch_1");
    EXPECT_EQ(list.at("has_more"), false);
    EXPECT_EQ(MessageBatchDeleted("msgbatch_1"),
              R"({"id":"msgbatch_1","type":"message_batch_deleted"})");
}

TEST(ResultLines, OpenAiShapes) {
    std::string out;
    AppendOpenAiResultLine(out, "batch_req_1", "a", Outcome::kAnswered,
                           Answer{200, R"({"id":"chatcmpl-1"})", "req_1"});
    AppendOpenAiResultLine(out, "batch_req_2", "b", Outcome::kAnswered,
                           Answer{500, R"({"error":{"message":"x"}})", "req_2"});
    AppendOpenAiResultLine(out, "batch_req_3", "c", Outcome::kCancelled, Answer{});
    AppendOpenAiResultLine(out, "batch_req_4", "d", Outcome::kExpired, Answer{});
    EXPECT_EQ(out, R"({"id":"batch_req_1","custom_id":"a","response":{"status_code":200,)"
                   R"("request_id":"req_1","body":{"id":"chatcmpl-1"}},"error":null})"
                   "\n"
                   R"({"id":"batch_req_2","custom_id":"b","response":{"status_code":500,)"
                   R"("request_id":"req_2","body":{"error":{"message":"x"}}},"error":null})"
                   "\n"
                   R"({"id":"batch_req_3","custom_id":"c","response":null,"error":{"code":)"
                   R"("batch_cancelled","message":"This request was not executed because the )"
                   R"(batch was cancelled."}})"
                   "\n"
                   R"({"id":"batch_req_4","custom_id":"d","response":null,"error":{"code":)"
                   R"("batch_expired","message":"This request could not be executed before the )"
                   R"(completion window expired."}})"
                   "\n");
}

TEST(ResultLines, AnthropicShapes) {
    std::string out;
    AppendMessageResultLine(out, "a", Outcome::kAnswered, Answer{200, R"({"id":"msg_1"})", "r"});
    AppendMessageResultLine(
        out, "b", Outcome::kAnswered,
        Answer{529,
               R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})",
               "r"});
    AppendMessageResultLine(out, "c", Outcome::kCancelled, Answer{});
    AppendMessageResultLine(out, "d", Outcome::kExpired, Answer{});
    EXPECT_EQ(out, R"({"custom_id":"a","result":{"type":"succeeded","message":{"id":"msg_1"}}})"
                   "\n"
                   R"({"custom_id":"b","result":{"type":"errored","error":{"type":"error","error":)"
                   R"({"type":"overloaded_error","message":"Overloaded"}}}})"
                   "\n"
                   R"({"custom_id":"c","result":{"type":"canceled"}})"
                   "\n"
                   R"({"custom_id":"d","result":{"type":"expired"}})"
                   "\n");
}

TEST(ResultLines, ABodyWithLineBreaksStaysOnOneLine) {
    std::string out;
    AppendMessageResultLine(out, "a", Outcome::kAnswered, Answer{200, "{\n\"k\": 1\n}", "r"});
    EXPECT_EQ(out, R"({"custom_id":"a","result":{"type":"succeeded","message":{"k":1}}})"
                   "\n");
}

TEST(Refusals, NameTheModel) {
    const Error model = OpenAiRefusal(BatchRefusal::kModel, "gpt-x");
    EXPECT_EQ(model.code, "model_not_found");
    EXPECT_EQ(model.message,
              "The model `gpt-x` does not exist or is not available for the Batch API.");
    const MessageBatchRefusal queue = AnthropicRefusal(BatchRefusal::kQueueLimit, "claude-x");
    EXPECT_EQ(queue.status, 429);
    EXPECT_EQ(queue.type, "rate_limit_error");
    EXPECT_EQ(queue.message,
              "Number of batch requests in the queue exceeds your rate limit. Please try again "
              "later.");
    const MessageBatchRefusal refused_model = AnthropicRefusal(BatchRefusal::kModel, "claude-x");
    EXPECT_EQ(refused_model.status, 400);
    EXPECT_EQ(refused_model.type, "invalid_request_error");
    EXPECT_NE(refused_model.message.find("`claude-x`"), std::string::npos);
}

TEST(FormatRfc3339Micros, UtcWithMicroseconds) {
    EXPECT_EQ(FormatRfc3339Micros(WallTime(seconds(0))), "1970-01-01T00:00:00.000000Z");
    EXPECT_EQ(FormatRfc3339Micros(WallTime(std::chrono::microseconds(1'445'412'480'000'001))),
              "2015-10-21T07:28:00.000001Z");
}

}  // namespace
}  // namespace switchyard::mock::batches
