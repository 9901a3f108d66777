#include "state/sqlite.h"

#include <fmt/format.h>

namespace switchyard::state {
namespace {

std::string Describe(sqlite3* db) {
    return fmt::format("{} (code {})", sqlite3_errmsg(db), sqlite3_extended_errcode(db));
}

}  // namespace

SqliteStatement::SqliteStatement(sqlite3* db, std::string_view sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &statement_, nullptr) !=
        SQLITE_OK) {
        throw StoreError(fmt::format("cannot prepare '{}': {}", sql, Describe(db)));
    }
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(statement_); }

SqliteStatement& SqliteStatement::Bind(int index, std::string_view text) {
    sqlite3_bind_text(statement_, index, text.data(), static_cast<int>(text.size()),
                      SQLITE_TRANSIENT);
    return *this;
}

SqliteStatement& SqliteStatement::Bind(int index, std::int64_t value) {
    sqlite3_bind_int64(statement_, index, value);
    return *this;
}

SqliteStatement& SqliteStatement::Bind(int index, double value) {
    sqlite3_bind_double(statement_, index, value);
    return *this;
}

SqliteStatement& SqliteStatement::BindNull(int index) {
    sqlite3_bind_null(statement_, index);
    return *this;
}

bool SqliteStatement::Step() {
    const int rc = sqlite3_step(statement_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    const std::string why = Describe(db_);
    sqlite3_reset(statement_);
    throw StoreError(why);
}

void SqliteStatement::Run() {
    while (Step()) {
    }
    Reset();
}

void SqliteStatement::Reset() {
    sqlite3_reset(statement_);
    sqlite3_clear_bindings(statement_);
}

std::string SqliteStatement::Text(int column) const {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
    const int bytes = sqlite3_column_bytes(statement_, column);
    return text == nullptr ? std::string() : std::string(text, static_cast<std::size_t>(bytes));
}

std::int64_t SqliteStatement::Integer(int column) const {
    return sqlite3_column_int64(statement_, column);
}

double SqliteStatement::Real(int column) const { return sqlite3_column_double(statement_, column); }

bool SqliteStatement::IsNull(int column) const {
    return sqlite3_column_type(statement_, column) == SQLITE_NULL;
}

SqliteDatabase::SqliteDatabase(const std::string& path, bool create) {
    const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) |
                      SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
    if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
        const std::string why = db_ != nullptr ? Describe(db_) : "out of memory";
        sqlite3_close(db_);
        db_ = nullptr;
        throw StoreError(why);
    }
}

SqliteDatabase::~SqliteDatabase() { sqlite3_close(db_); }

void SqliteDatabase::Execute(std::string_view sql) {
    const std::string text(sql);
    char* message = nullptr;
    if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
        std::string why = fmt::format("{} (code {})", message != nullptr ? message : "error",
                                      sqlite3_extended_errcode(db_));
        sqlite3_free(message);
        throw StoreError(why);
    }
}

std::optional<std::int64_t> SqliteDatabase::QueryInteger(std::string_view sql) {
    SqliteStatement statement(db_, sql);
    if (!statement.Step()) return std::nullopt;
    return statement.Integer(0);
}

std::string SqliteDatabase::QueryText(std::string_view sql) {
    SqliteStatement statement(db_, sql);
    if (!statement.Step()) return {};
    return statement.Text(0);
}

SqliteTransaction::SqliteTransaction(SqliteDatabase& db) : db_(db) {
    db_.Execute("BEGIN IMMEDIATE");
}

SqliteTransaction::~SqliteTransaction() {
    if (!open_) return;
    try {
        db_.Execute("ROLLBACK");
    } catch (const StoreError&) {
        // Already rolled back by SQLite (a full disk ends the transaction itself).
    }
}

void SqliteTransaction::Commit() {
    db_.Execute("COMMIT");
    open_ = false;
}

}  // namespace switchyard::state
