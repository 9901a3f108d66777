#include "batch_store.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace switchyard::mock::batches {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const WallTime kStart = WallTime(seconds(1'700'000'000));

// Answers lines as a fake API would: a line whose body mentions "bad" fails with 500. Records the
// custom_ids it was asked for.
struct FakeApi {
    std::vector<std::string> asked;

    AnswerLine Answerer() {
        return [this](const Line& line) {
            asked.push_back(line.custom_id);
            const bool bad = line.body.find("bad") != std::string::npos;
            return Answer{bad ? 500 : 200,
                          bad ? R"({"error":{"message":"boom"}})" : R"({"ok":true})",
                          "req_" + line.custom_id};
        };
    }
};

std::string InputFile(const std::vector<std::string>& models) {
    std::string content;
    for (std::size_t i = 0; i < models.size(); ++i) {
        content +=
            fmt::format(R"({{"custom_id":"c{}","method":"POST","url":"/v1/chat/completions",)"
                        R"("body":{{"model":"{}","messages":[]}}}})"
                        "\n",
                        i, models[i]);
    }
    return content;
}

OpenAiBatchRequest CreateCall(std::string_view file_id) {
    OpenAiBatchRequest request;
    request.input_file_id = file_id;
    request.endpoint = "/v1/chat/completions";
    request.completion_window = "24h";
    return request;
}

// An OpenAI batch of `models`' lines, created at kStart.
BatchInfo CreateOpenAi(Store& store, const std::vector<std::string>& models, Plan plan = {}) {
    const FileInfo file = store.AddFile("in.jsonl", "batch", InputFile(models), kStart);
    auto input = store.ReadInput(file.id, "/v1/chat/completions");
    EXPECT_TRUE(input);
    return store.CreateOpenAi(CreateCall(file.id), std::move(*input), plan, kStart);
}

std::vector<Line> MessageLines(std::size_t count) {
    std::vector<Line> lines;
    for (std::size_t i = 0; i < count; ++i) {
        lines.push_back(Line{fmt::format("r{}", i), "/v1/messages",
                             i == 1 ? R"({"model":"bad"})" : R"({"model":"good"})"});
    }
    return lines;
}

TEST(BatchStore, FilesKeepTheirContentUntilDeleted) {
    Store store(1);
    const FileInfo file = store.AddFile("a.jsonl", "batch", "line\n", kStart);
    EXPECT_TRUE(file.id.starts_with("file-"));
    EXPECT_EQ(file.id.size(), 5u + 24u);
    EXPECT_EQ(file.bytes, 5u);
    EXPECT_EQ(store.File(file.id)->filename, "a.jsonl");
    EXPECT_EQ(store.FileContent(file.id), "line\n");
    const FileInfo other = store.AddFile("b.jsonl", "user_data", "x", kStart + seconds(1));
    auto page = store.Files(std::nullopt, 10, {});
    ASSERT_EQ(page.items.size(), 2u);
    EXPECT_EQ(page.items[0].id, other.id);  // Newest first.
    EXPECT_FALSE(page.has_more);
    page = store.Files(std::nullopt, 1, {});
    EXPECT_EQ(page.items.size(), 1u);
    EXPECT_TRUE(page.has_more);
    page = store.Files(std::nullopt, 1, other.id);
    ASSERT_EQ(page.items.size(), 1u);
    EXPECT_EQ(page.items[0].id, file.id);
    EXPECT_EQ(store.Files(std::string("batch"), 10, {}).items.size(), 1u);
    EXPECT_TRUE(store.DeleteFile(file.id));
    EXPECT_FALSE(store.DeleteFile(file.id));
    EXPECT_FALSE(store.File(file.id));
    EXPECT_FALSE(store.FileContent(file.id));
    EXPECT_FALSE(store.ReadInput(file.id, "/v1/chat/completions"));
}

TEST(BatchStore, OpenAiBatchRunsFromValidatingToCompleted) {
    Store store(2);
    FakeApi api;
    const BatchInfo created =
        CreateOpenAi(store, {"good", "bad", "good"}, Plan{milliseconds(1000), false});
    EXPECT_TRUE(created.id.starts_with("batch_"));
    EXPECT_EQ(created.id.size(), 6u + 32u);
    EXPECT_EQ(created.status, Status::kValidating);
    EXPECT_EQ(created.model, "good");

    BatchInfo batch =
        *store.Get(Api::kOpenAi, created.id, kStart + milliseconds(999), api.Answerer());
    EXPECT_EQ(batch.status, Status::kInProgress);
    EXPECT_EQ(batch.in_progress_at, kStart);
    EXPECT_EQ(batch.total, 3u);
    EXPECT_TRUE(api.asked.empty()) << "no line runs before the batch's time is up";

    batch = *store.Get(Api::kOpenAi, created.id, kStart + seconds(5), api.Answerer());
    EXPECT_EQ(batch.status, Status::kCompleted);
    EXPECT_EQ(batch.completed_at, kStart + milliseconds(1000)) << "ended when its time was up";
    EXPECT_EQ(batch.finalizing_at, batch.completed_at);
    EXPECT_EQ(batch.succeeded, 2u);
    EXPECT_EQ(batch.errored, 1u);
    EXPECT_EQ(api.asked, (std::vector<std::string>{"c0", "c1", "c2"}));
    ASSERT_TRUE(batch.output_file_id && batch.error_file_id);

    const std::string output = *store.FileContent(*batch.output_file_id);
    EXPECT_EQ(std::count(output.begin(), output.end(), '\n'), 2);
    EXPECT_NE(
        output.find(R"("custom_id":"c0","response":{"status_code":200,"request_id":"req_c0")"),
        std::string::npos)
        << output;
    EXPECT_TRUE(output.ends_with(R"("body":{"ok":true}},"error":null})"
                                 "\n"));
    const std::string errors = *store.FileContent(*batch.error_file_id);
    EXPECT_NE(errors.find(R"("custom_id":"c1","response":{"status_code":500,)"), std::string::npos);
    const FileInfo output_file = *store.File(*batch.output_file_id);
    EXPECT_EQ(output_file.purpose, "batch_output");
    EXPECT_EQ(output_file.filename, created.id + "_output.jsonl");
    EXPECT_EQ(output_file.created, kStart + milliseconds(1000));

    // Answered once: later reads change nothing.
    const BatchInfo again =
        *store.Get(Api::kOpenAi, created.id, kStart + seconds(9), api.Answerer());
    EXPECT_EQ(api.asked.size(), 3u);
    EXPECT_EQ(again.output_file_id, batch.output_file_id);
}

TEST(BatchStore, AFileIsMadeOnlyForLinesThatHaveOne) {
    Store store(3);
    FakeApi api;
    const BatchInfo created = CreateOpenAi(store, {"good", "good"}, Plan{milliseconds(0), false});
    const BatchInfo batch = *store.Get(Api::kOpenAi, created.id, kStart, api.Answerer());
    EXPECT_EQ(batch.status, Status::kCompleted);
    EXPECT_TRUE(batch.output_file_id);
    EXPECT_FALSE(batch.error_file_id);
}

TEST(BatchStore, InvalidOrRefusedInputFailsAtOnce) {
    Store store(4);
    FakeApi api;
    OpenAiInput input;
    input.model = "m";
    input.errors.push_back(OpenAiRefusal(BatchRefusal::kQueueLimit, "m"));
    const BatchInfo created = store.CreateOpenAi(CreateCall("file-x"), input, Plan{}, kStart);
    EXPECT_EQ(created.status, Status::kFailed);
    EXPECT_EQ(created.failed_at, kStart);
    EXPECT_EQ(created.errors.size(), 1u);
    const BatchInfo later =
        *store.Get(Api::kOpenAi, created.id, kStart + seconds(60), api.Answerer());
    EXPECT_EQ(later.status, Status::kFailed);
    EXPECT_EQ(later.EndedAt(), kStart);
    EXPECT_FALSE(later.output_file_id || later.error_file_id);
    EXPECT_TRUE(api.asked.empty());
}

TEST(BatchStore, ExpiryAnswersTheFirstHalf) {
    Store store(5);
    FakeApi api;
    const BatchInfo created =
        CreateOpenAi(store, {"good", "bad", "good", "good", "good"}, Plan{milliseconds(10), true});
    const BatchInfo batch =
        *store.Get(Api::kOpenAi, created.id, kStart + seconds(1), api.Answerer());
    EXPECT_EQ(batch.status, Status::kExpired);
    EXPECT_EQ(batch.expired_at, kStart + milliseconds(10));
    EXPECT_EQ(api.asked, (std::vector<std::string>{"c0", "c1"}));  // 5 / 2, rounded down
    EXPECT_EQ(batch.succeeded, 1u);
    EXPECT_EQ(batch.errored, 1u);
    EXPECT_EQ(batch.expired, 3u);
    const std::string errors = *store.FileContent(*batch.error_file_id);
    EXPECT_EQ(std::count(errors.begin(), errors.end(), '\n'), 4);
    EXPECT_NE(errors.find(R"("custom_id":"c4","response":null,"error":{"code":"batch_expired")"),
              std::string::npos)
        << errors;
}

TEST(BatchStore, CancelStopsABatchOnTheNextRead) {
    Store store(6);
    FakeApi api;
    const BatchInfo created =
        CreateOpenAi(store, {"good", "good"}, Plan{milliseconds(1000), false});
    const auto cancel =
        store.Cancel(Api::kOpenAi, created.id, kStart + milliseconds(10), api.Answerer());
    ASSERT_TRUE(cancel);
    EXPECT_TRUE(cancel->accepted);
    EXPECT_EQ(cancel->batch.status, Status::kCancelling);
    EXPECT_EQ(cancel->batch.cancelling_at, kStart + milliseconds(10));

    const BatchInfo batch =
        *store.Get(Api::kOpenAi, created.id, kStart + milliseconds(20), api.Answerer());
    EXPECT_EQ(batch.status, Status::kCancelled);
    EXPECT_EQ(batch.cancelled_at, kStart + milliseconds(20));
    EXPECT_EQ(batch.cancelled, 2u);
    EXPECT_TRUE(api.asked.empty());
    EXPECT_FALSE(batch.output_file_id);
    const std::string errors = *store.FileContent(*batch.error_file_id);
    EXPECT_NE(errors.find(R"("error":{"code":"batch_cancelled")"), std::string::npos);

    // An ended batch cannot be cancelled; nor can one whose time is up, which the cancel call
    // itself finds ended.
    EXPECT_FALSE(
        store.Cancel(Api::kOpenAi, created.id, kStart + seconds(1), api.Answerer())->accepted);
    const BatchInfo due = CreateOpenAi(store, {"good"}, Plan{milliseconds(5), false});
    const auto late = store.Cancel(Api::kOpenAi, due.id, kStart + seconds(1), api.Answerer());
    EXPECT_FALSE(late->accepted);
    EXPECT_EQ(late->batch.status, Status::kCompleted);
    EXPECT_FALSE(store.Cancel(Api::kOpenAi, "batch_none", kStart, api.Answerer()));
}

TEST(BatchStore, MessageBatchResultsOnceEnded) {
    Store store(7);
    FakeApi api;
    const BatchInfo created =
        store.CreateMessageBatch(MessageLines(3), Plan{seconds(1), false}, kStart);
    EXPECT_TRUE(created.id.starts_with("msgbatch_"));
    EXPECT_EQ(created.id.size(), 9u + 24u);
    EXPECT_EQ(created.status, Status::kInProgress);
    EXPECT_FALSE(store.Get(Api::kOpenAi, created.id, kStart, api.Answerer()))
        << "each API sees its own batches";

    const auto early = store.Results(created.id, kStart + milliseconds(500), api.Answerer());
    ASSERT_TRUE(early);
    EXPECT_FALSE(early->jsonl);
    EXPECT_EQ(store.DeleteMessageBatch(created.id, kStart, api.Answerer()), Deletion::kNotEnded);

    const auto results = store.Results(created.id, kStart + seconds(2), api.Answerer());
    ASSERT_TRUE(results && results->jsonl);
    EXPECT_EQ(results->batch.status, Status::kCompleted);
    EXPECT_EQ(
        *results->jsonl,
        R"({"custom_id":"r0","result":{"type":"succeeded","message":{"ok":true}}})"
        "\n"
        R"({"custom_id":"r1","result":{"type":"errored","error":{"error":{"message":"boom"}}}})"
        "\n"
        R"({"custom_id":"r2","result":{"type":"succeeded","message":{"ok":true}}})"
        "\n");
    EXPECT_EQ(results->batch.succeeded, 2u);
    EXPECT_EQ(results->batch.errored, 1u);

    EXPECT_EQ(store.DeleteMessageBatch(created.id, kStart + seconds(3), api.Answerer()),
              Deletion::kDeleted);
    EXPECT_EQ(store.DeleteMessageBatch(created.id, kStart + seconds(3), api.Answerer()),
              Deletion::kNotFound);
    EXPECT_FALSE(store.Results(created.id, kStart + seconds(3), api.Answerer()));
}

TEST(BatchStore, CancelledAndExpiredMessageBatches) {
    Store store(8);
    FakeApi api;
    const BatchInfo cancelled =
        store.CreateMessageBatch(MessageLines(2), Plan{seconds(1), false}, kStart);
    EXPECT_EQ(store.Cancel(Api::kAnthropic, cancelled.id, kStart, api.Answerer())->batch.status,
              Status::kCancelling);
    const auto results = store.Results(cancelled.id, kStart + milliseconds(1), api.Answerer());
    EXPECT_EQ(results->batch.status, Status::kCancelled);
    EXPECT_EQ(*results->jsonl, R"({"custom_id":"r0","result":{"type":"canceled"}})"
                               "\n"
                               R"({"custom_id":"r1","result":{"type":"canceled"}})"
                               "\n");

    const BatchInfo expired =
        store.CreateMessageBatch(MessageLines(3), Plan{seconds(1), true}, kStart);
    const auto expired_results = store.Results(expired.id, kStart + seconds(1), api.Answerer());
    EXPECT_EQ(expired_results->batch.status, Status::kExpired);
    EXPECT_EQ(expired_results->batch.expired, 2u);
    EXPECT_TRUE(
        expired_results->jsonl->ends_with(R"({"custom_id":"r1","result":{"type":"expired"}})"
                                          "\n"
                                          R"({"custom_id":"r2","result":{"type":"expired"}})"
                                          "\n"));
}

TEST(BatchStore, ListsNewestFirstWithCursors) {
    Store store(9);
    FakeApi api;
    std::vector<std::string> ids;  // oldest first
    for (int i = 0; i < 5; ++i) {
        ids.push_back(store.CreateMessageBatch(MessageLines(1), Plan{}, kStart + seconds(i)).id);
    }
    CreateOpenAi(store, {"good"});  // Another API's: never listed here.
    const auto ids_of = [](const Page<BatchInfo>& page) {
        std::vector<std::string> out;
        for (const BatchInfo& batch : page.items) out.push_back(batch.id);
        return out;
    };
    auto page = store.List(Api::kAnthropic, 2, {}, {}, kStart, api.Answerer());
    EXPECT_EQ(ids_of(page), (std::vector<std::string>{ids[4], ids[3]}));
    EXPECT_TRUE(page.has_more);
    page = store.List(Api::kAnthropic, 2, ids[3], {}, kStart, api.Answerer());
    EXPECT_EQ(ids_of(page), (std::vector<std::string>{ids[2], ids[1]}));
    EXPECT_TRUE(page.has_more);
    page = store.List(Api::kAnthropic, 2, ids[1], {}, kStart, api.Answerer());
    EXPECT_EQ(ids_of(page), (std::vector<std::string>{ids[0]}));
    EXPECT_FALSE(page.has_more);
    page = store.List(Api::kAnthropic, 2, {}, ids[1], kStart, api.Answerer());
    EXPECT_EQ(ids_of(page), (std::vector<std::string>{ids[3], ids[2]}));
    EXPECT_TRUE(page.has_more);
    page = store.List(Api::kAnthropic, 5, {}, ids[3], kStart, api.Answerer());
    EXPECT_EQ(ids_of(page), (std::vector<std::string>{ids[4]}));
    EXPECT_FALSE(page.has_more);
    EXPECT_TRUE(
        store.List(Api::kAnthropic, 5, "msgbatch_none", {}, kStart, api.Answerer()).items.empty());
    // Listing reads each batch: those whose time is up end, their lines answered.
    page = store.List(Api::kAnthropic, 1, {}, {}, kStart + seconds(60), api.Answerer());
    EXPECT_EQ(page.items[0].status, Status::kCompleted);
    EXPECT_EQ(api.asked.size(), 1u);
    EXPECT_EQ(store.List(Api::kOpenAi, 20, {}, {}, kStart, api.Answerer()).items.size(), 1u);
}

TEST(BatchStore, IdsAreReproducibleFromTheSeed) {
    Store first(42);
    Store second(42);
    EXPECT_EQ(first.AddFile("f", "batch", "", kStart).id,
              second.AddFile("f", "batch", "", kStart).id);
}

}  // namespace
}  // namespace switchyard::mock::batches
