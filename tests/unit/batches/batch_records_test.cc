#include "batches/batch_records.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "../state/store_file_test_support.h"
#include "batches/file_store.h"
#include "state/durable_store.h"

namespace switchyard::batches {
namespace {

class BatchRecordsTest : public state::StoreFileTest {};

BatchJob Job(const std::string& id, const std::string& owner, Api api = Api::kOpenAi) {
    BatchJob job;
    job.id = id;
    job.owner = owner;
    job.api = api;
    job.status = Status::kInProgress;
    return job;
}

TEST_F(BatchRecordsTest, JobsPageNewestFirstAndByOwner) {
    state::DurableStore store(path_, 1 << 20);
    state::SqliteDatabase& db = store.Database();
    for (int i = 0; i < 5; ++i)
        records::PutJob(db, Job("b" + std::to_string(i), i % 2 ? "k1" : "k2"));
    records::PutJob(db, Job("m0", "k1", Api::kAnthropic));
    PageQuery query;
    query.limit = 2;
    bool more = false;
    std::vector<BatchJob> page = records::ListJobs(db, Api::kOpenAi, query, more);
    ASSERT_EQ(page.size(), 2u);
    EXPECT_EQ(page[0].id, "b4");
    EXPECT_EQ(page[1].id, "b3");
    EXPECT_TRUE(more);
    query.after = "b3";
    page = records::ListJobs(db, Api::kOpenAi, query, more);
    EXPECT_EQ(page[0].id, "b2");
    query.after.clear();
    query.owner = "k1";
    query.limit = 10;
    page = records::ListJobs(db, Api::kOpenAi, query, more);
    ASSERT_EQ(page.size(), 2u);  // b3, b1; the message batch is another API's
    EXPECT_EQ(page[1].id, "b1");
    EXPECT_FALSE(more);
    EXPECT_EQ(records::RunningJobs(db).size(), 6u);
}

TEST_F(BatchRecordsTest, AResultIsKeptOnceAndTheJobWithIt) {
    BatchJob job = Job("b", "");
    {
        state::DurableStore store(path_, 1 << 20);
        job.counts.succeeded = 2;
        job.cursor_line = 2;
        records::AddResults(store.Database(), job, {{0, true, "zero"}, {1, false, "one"}});
        // Line 1 again (it ran twice across a crash): the first result stays.
        records::AddResults(store.Database(), job, {{1, true, "again"}, {3, true, "three"}});
    }
    state::DurableStore store(path_, 1 << 20);
    EXPECT_EQ(records::GetJob(store.Database(), "b")->cursor_line, 2);
    EXPECT_EQ(records::EndedLines(store.Database(), "b", 1), (std::vector<std::int64_t>{1, 3}));
    std::vector<std::string> texts;
    records::VisitResults(store.Database(), "b",
                          [&](const LineResult& r) { texts.push_back(r.text); });
    EXPECT_EQ(texts, (std::vector<std::string>{"zero", "one", "three"}));
    records::DeleteResults(store.Database(), "b");
    EXPECT_TRUE(records::EndedLines(store.Database(), "b", 0).empty());
}

TEST_F(BatchRecordsTest, FilesAreListedByPurposeAndCountedTogether) {
    state::DurableStore store(path_, 1 << 20);
    state::SqliteDatabase& db = store.Database();
    records::PutFile(db, {"file-a", "k", "batch", "a.jsonl", 10, 1});
    records::PutFile(db, {"file-b", "k", "batch_output", "b.jsonl", 20, 2});
    records::PutFile(db, {"file-c", "k", "message_batch", "c.jsonl", 30, 3});
    EXPECT_EQ(records::StoredBytes(db), 60);
    PageQuery query;
    query.limit = 10;
    query.ascending = true;
    bool more = true;
    std::vector<BatchFile> files = records::ListFiles(db, query, more);
    ASSERT_EQ(files.size(), 2u);  // a message batch's lines are never listed
    EXPECT_EQ(files[0].id, "file-a");
    query.purpose = "batch_output";
    EXPECT_EQ(records::ListFiles(db, query, more).at(0).id, "file-b");
    records::DeleteFile(db, "file-a");
    EXPECT_FALSE(records::GetFile(db, "file-a"));
}

TEST_F(BatchRecordsTest, AStoreOfTheFirstSchemaGainsTheBatchTables) {
    {
        state::DurableStore store(path_, 1 << 20);
        // What a store written before the Batch APIs looks like: schema 1, no batch tables.
        store.Database().Execute(
            "DROP TABLE batch_files; DROP TABLE batch_jobs; DROP TABLE batch_results; "
            "PRAGMA user_version=1;");
    }
    state::DurableStore store(path_, 1 << 20);
    EXPECT_EQ(store.Database().QueryInteger("PRAGMA user_version"), 2);
    records::PutJob(store.Database(), Job("b", ""));
    EXPECT_TRUE(records::GetJob(store.Database(), "b"));
}

TEST_F(BatchRecordsTest, FileBytesAreKeptAndReadAsLines) {
    FileStore files(dir_ + "/files");
    {
        FileStore::Writer writer(files, "file-x");
        writer.Append("one\r\n\ntwo\nthree");
        writer.Keep();
    }
    {
        FileStore::Writer dropped(files, "file-y");  // never kept: nothing remains
        dropped.Append("partial");
    }
    EXPECT_FALSE(std::filesystem::exists(files.PathOf("file-y")));
    LineReader reader(files.PathOf("file-x"), 0);
    std::string line;
    std::int64_t offset = -1;
    ASSERT_TRUE(reader.Next(line, offset));
    EXPECT_EQ(line, "one");
    EXPECT_EQ(offset, 0);
    ASSERT_TRUE(reader.Next(line, offset));
    EXPECT_EQ(line, "");
    ASSERT_TRUE(reader.Next(line, offset));
    EXPECT_EQ(line, "two");
    const std::int64_t two = offset;
    ASSERT_TRUE(reader.Next(line, offset));
    EXPECT_EQ(line, "three");
    EXPECT_FALSE(reader.Next(line, offset));
    LineReader resumed(files.PathOf("file-x"), two);
    ASSERT_TRUE(resumed.Next(line, offset));
    EXPECT_EQ(line, "two");
    files.Remove("file-x");
    EXPECT_FALSE(std::filesystem::exists(files.PathOf("file-x")));
}

}  // namespace
}  // namespace switchyard::batches
