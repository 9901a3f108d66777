#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace switchyard::state {

// A failure of the durable store, with a message an operator can act on.
class StoreError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// One prepared SQLite statement: bind by position (from 1), step, read columns (from 0).
class SqliteStatement final {
  public:
    SqliteStatement(sqlite3* db, std::string_view sql);
    ~SqliteStatement();
    SqliteStatement(const SqliteStatement&) = delete;
    SqliteStatement& operator=(const SqliteStatement&) = delete;

    SqliteStatement& Bind(int index, std::string_view text);
    SqliteStatement& Bind(int index, std::int64_t value);
    SqliteStatement& Bind(int index, double value);
    SqliteStatement& BindNull(int index);
    // True while a row is ready; false once done. Throws StoreError on failure.
    bool Step();
    // Runs to its end and resets, for statements that return no rows.
    void Run();
    void Reset();

    std::string Text(int column) const;
    std::int64_t Integer(int column) const;
    double Real(int column) const;
    bool IsNull(int column) const;

  private:
    sqlite3* db_;
    sqlite3_stmt* statement_ = nullptr;
};

// An open SQLite database file.
class SqliteDatabase final {
  public:
    // Opens `path` (created when `create` and missing). Throws StoreError.
    SqliteDatabase(const std::string& path, bool create);
    ~SqliteDatabase();
    SqliteDatabase(const SqliteDatabase&) = delete;
    SqliteDatabase& operator=(const SqliteDatabase&) = delete;

    sqlite3* Handle() const { return db_; }
    // Runs `sql` (one or more statements, no rows wanted). Throws StoreError.
    void Execute(std::string_view sql);
    // The single integer a query returns (e.g. a PRAGMA); nullopt when it returns no row.
    std::optional<std::int64_t> QueryInteger(std::string_view sql);
    std::string QueryText(std::string_view sql);

  private:
    sqlite3* db_ = nullptr;
};

// BEGIN IMMEDIATE on construction; Commit() commits, and a transaction not committed is rolled
// back when this ends (an exception on its way out).
class SqliteTransaction final {
  public:
    explicit SqliteTransaction(SqliteDatabase& db);
    ~SqliteTransaction();
    SqliteTransaction(const SqliteTransaction&) = delete;
    SqliteTransaction& operator=(const SqliteTransaction&) = delete;
    void Commit();

  private:
    SqliteDatabase& db_;
    bool open_ = true;
};

}  // namespace switchyard::state
