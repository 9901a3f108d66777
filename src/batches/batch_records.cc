#include "batches/batch_records.h"

#include <boost/json.hpp>

namespace switchyard::batches::records {
namespace {

using state::SqliteStatement;

BatchFile FileRow(const SqliteStatement& row) {
    return {row.Text(0), row.Text(1), row.Text(2), row.Text(3), row.Integer(4), row.Integer(5)};
}

constexpr const char* kFileColumns = "id, owner, purpose, filename, bytes, created_s";

// The WHERE clause and binds of a page: owner, purpose, and the cursor (by rowid: the order of
// creation).
struct PageFilter {
    std::string where;
    std::vector<std::string> binds;
};

PageFilter Filter(const PageQuery& query, const std::string& table, std::string extra) {
    PageFilter f;
    f.where = " WHERE 1=1" + extra;
    if (query.owner) {
        f.where += " AND owner = ?";
        f.binds.push_back(*query.owner);
    }
    if (!query.purpose.empty()) {
        f.where += " AND purpose = ?";
        f.binds.push_back(query.purpose);
    }
    const auto cursor = [&](const std::string& id, bool later) {
        f.where += std::string(" AND rowid ") + (later ? ">" : "<") +
                   " coalesce((SELECT rowid FROM " + table + " WHERE id = ?), " +
                   (later ? "-1" : "9223372036854775807") + ")";
        f.binds.push_back(id);
    };
    if (!query.after.empty()) cursor(query.after, query.ascending);
    if (!query.before.empty()) cursor(query.before, !query.ascending);
    return f;
}

}  // namespace

void PutFile(state::SqliteDatabase& db, const BatchFile& file) {
    SqliteStatement(db.Handle(),
                    "INSERT OR REPLACE INTO batch_files(id, owner, purpose, filename, bytes, "
                    "created_s) VALUES(?, ?, ?, ?, ?, ?)")
        .Bind(1, file.id)
        .Bind(2, file.owner)
        .Bind(3, file.purpose)
        .Bind(4, file.filename)
        .Bind(5, file.bytes)
        .Bind(6, file.created_s)
        .Run();
}

std::optional<BatchFile> GetFile(state::SqliteDatabase& db, const std::string& id) {
    SqliteStatement row(db.Handle(),
                        std::string("SELECT ") + kFileColumns + " FROM batch_files WHERE id = ?");
    row.Bind(1, id);
    if (!row.Step()) return std::nullopt;
    return FileRow(row);
}

std::vector<BatchFile> ListFiles(state::SqliteDatabase& db, const PageQuery& query, bool& more) {
    const PageFilter f = Filter(query, "batch_files", " AND purpose IN ('batch', 'batch_output')");
    SqliteStatement rows(db.Handle(), std::string("SELECT ") + kFileColumns + " FROM batch_files" +
                                          f.where + " ORDER BY rowid " +
                                          (query.ascending ? "ASC" : "DESC") + " LIMIT ?");
    int at = 1;
    for (const std::string& bind : f.binds) rows.Bind(at++, bind);
    rows.Bind(at, static_cast<std::int64_t>(query.limit + 1));
    std::vector<BatchFile> files;
    while (rows.Step()) files.push_back(FileRow(rows));
    more = files.size() > query.limit;
    if (more) files.pop_back();
    return files;
}

void DeleteFile(state::SqliteDatabase& db, const std::string& id) {
    SqliteStatement(db.Handle(), "DELETE FROM batch_files WHERE id = ?").Bind(1, id).Run();
}

std::string JobReading(state::SqliteDatabase& db, const std::string& file_id) {
    SqliteStatement row(db.Handle(),
                        "SELECT id FROM batch_jobs WHERE ended = 0 AND "
                        "json_extract(job, '$.input_file_id') = ? LIMIT 1");
    row.Bind(1, file_id);
    return row.Step() ? row.Text(0) : std::string();
}

std::int64_t StoredBytes(state::SqliteDatabase& db) {
    return db.QueryInteger("SELECT coalesce(sum(bytes), 0) FROM batch_files").value_or(0);
}

void PutJob(state::SqliteDatabase& db, const BatchJob& job) {
    SqliteStatement(db.Handle(),
                    "INSERT INTO batch_jobs(id, owner, api, ended, job) VALUES(?, ?, ?, ?, ?) "
                    "ON CONFLICT(id) DO UPDATE SET ended = excluded.ended, job = excluded.job")
        .Bind(1, job.id)
        .Bind(2, job.owner)
        .Bind(3, std::string_view(job.api == Api::kAnthropic ? "anthropic" : "openai"))
        .Bind(4, std::int64_t{Ended(job.status) ? 1 : 0})
        .Bind(5, boost::json::serialize(JobRecord(job)))
        .Run();
}

namespace {

std::optional<BatchJob> JobRow(const SqliteStatement& row, int column) {
    boost::system::error_code ec;
    const boost::json::value record = boost::json::parse(row.Text(column), ec);
    if (ec) return std::nullopt;
    return JobFromRecord(record);
}

}  // namespace

std::optional<BatchJob> GetJob(state::SqliteDatabase& db, const std::string& id) {
    SqliteStatement row(db.Handle(), "SELECT job FROM batch_jobs WHERE id = ?");
    row.Bind(1, id);
    if (!row.Step()) return std::nullopt;
    return JobRow(row, 0);
}

std::vector<BatchJob> ListJobs(state::SqliteDatabase& db, Api api, const PageQuery& query,
                               bool& more) {
    PageQuery q = query;
    q.purpose.clear();
    const PageFilter f = Filter(
        q, "batch_jobs", api == Api::kAnthropic ? " AND api = 'anthropic'" : " AND api = 'openai'");
    SqliteStatement rows(db.Handle(), "SELECT job FROM batch_jobs" + f.where + " ORDER BY rowid " +
                                          (q.ascending ? "ASC" : "DESC") + " LIMIT ?");
    int at = 1;
    for (const std::string& bind : f.binds) rows.Bind(at++, bind);
    rows.Bind(at, static_cast<std::int64_t>(q.limit + 1));
    std::vector<BatchJob> jobs;
    while (rows.Step()) {
        if (auto job = JobRow(rows, 0)) jobs.push_back(std::move(*job));
    }
    more = jobs.size() > q.limit;
    if (more) jobs.pop_back();
    return jobs;
}

void DeleteJob(state::SqliteDatabase& db, const std::string& id) {
    SqliteStatement(db.Handle(), "DELETE FROM batch_jobs WHERE id = ?").Bind(1, id).Run();
}

std::vector<BatchJob> RunningJobs(state::SqliteDatabase& db) {
    SqliteStatement rows(db.Handle(), "SELECT job FROM batch_jobs WHERE ended = 0 ORDER BY rowid");
    std::vector<BatchJob> jobs;
    while (rows.Step()) {
        if (auto job = JobRow(rows, 0)) jobs.push_back(std::move(*job));
    }
    return jobs;
}

void AddResults(state::SqliteDatabase& db, const BatchJob& job,
                const std::vector<LineResult>& results) {
    state::SqliteTransaction transaction(db);
    SqliteStatement add(db.Handle(),
                        "INSERT OR IGNORE INTO batch_results(batch, line, ok, result) "
                        "VALUES(?, ?, ?, ?)");
    for (const LineResult& result : results) {
        add.Bind(1, job.id)
            .Bind(2, result.line)
            .Bind(3, std::int64_t{result.ok ? 1 : 0})
            .Bind(4, result.text)
            .Run();
    }
    PutJob(db, job);
    transaction.Commit();
}

std::vector<std::int64_t> EndedLines(state::SqliteDatabase& db, const std::string& batch,
                                     std::int64_t from) {
    SqliteStatement rows(db.Handle(),
                         "SELECT line FROM batch_results WHERE batch = ? AND line >= ? "
                         "ORDER BY line");
    rows.Bind(1, batch).Bind(2, from);
    std::vector<std::int64_t> lines;
    while (rows.Step()) lines.push_back(rows.Integer(0));
    return lines;
}

void VisitResults(state::SqliteDatabase& db, const std::string& batch,
                  const std::function<void(const LineResult&)>& visit) {
    SqliteStatement rows(
        db.Handle(), "SELECT line, ok, result FROM batch_results WHERE batch = ? ORDER BY line");
    rows.Bind(1, batch);
    while (rows.Step()) visit({rows.Integer(0), rows.Integer(1) != 0, rows.Text(2)});
}

void DeleteResults(state::SqliteDatabase& db, const std::string& batch) {
    SqliteStatement(db.Handle(), "DELETE FROM batch_results WHERE batch = ?").Bind(1, batch).Run();
}

}  // namespace switchyard::batches::records
