#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "batches/batch_job.h"
#include "state/sqlite.h"

namespace switchyard::batches {

// How one line of a batch ended: its result line as the client will read it (an OpenAI output or
// error line, an Anthropic result line), and whether it succeeded.
struct LineResult {
    std::int64_t line = 0;
    bool ok = false;
    std::string text;
};

// A page of a list: `after` is the id the previous page ended with ("": the first page).
struct PageQuery {
    std::optional<std::string> owner;  // nullopt: everyone's (the master key)
    std::string after;
    std::string before;  // Anthropic's backward paging
    std::size_t limit = 20;
    bool ascending = false;  // newest first unless asked
    std::string purpose;     // files only ("": any listed purpose)
};

// The Batch APIs' tables in the durable store (docs/batches.md#what-is-kept): files, jobs, and
// the results of lines that ended while their job runs. Functions of the store's database; the
// store's one thread calls them. Throw state::StoreError.
namespace records {

void PutFile(state::SqliteDatabase& db, const BatchFile& file);
std::optional<BatchFile> GetFile(state::SqliteDatabase& db, const std::string& id);
// Files of `purpose` batch and batch_output (a message batch's lines are never listed).
std::vector<BatchFile> ListFiles(state::SqliteDatabase& db, const PageQuery& query, bool& more);
void DeleteFile(state::SqliteDatabase& db, const std::string& id);
// The job that has not ended and reads `file_id` ("": none).
std::string JobReading(state::SqliteDatabase& db, const std::string& file_id);
// The bytes of every kept file together.
std::int64_t StoredBytes(state::SqliteDatabase& db);

void PutJob(state::SqliteDatabase& db, const BatchJob& job);
std::optional<BatchJob> GetJob(state::SqliteDatabase& db, const std::string& id);
std::vector<BatchJob> ListJobs(state::SqliteDatabase& db, Api api, const PageQuery& query,
                               bool& more);
void DeleteJob(state::SqliteDatabase& db, const std::string& id);
// Jobs that have not ended (to run again after a restart).
std::vector<BatchJob> RunningJobs(state::SqliteDatabase& db);

// Adds results (a line already there keeps its first result) and saves `job` with them, in one
// transaction.
void AddResults(state::SqliteDatabase& db, const BatchJob& job,
                const std::vector<LineResult>& results);
// The lines at or after `from` that have a result.
std::vector<std::int64_t> EndedLines(state::SqliteDatabase& db, const std::string& batch,
                                     std::int64_t from);
// Every result of a batch in line order, to `visit`.
void VisitResults(state::SqliteDatabase& db, const std::string& batch,
                  const std::function<void(const LineResult&)>& visit);
void DeleteResults(state::SqliteDatabase& db, const std::string& batch);

}  // namespace records
}  // namespace switchyard::batches
