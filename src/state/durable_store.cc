#include "state/durable_store.h"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <boost/json.hpp>

namespace switchyard::state {
namespace {

// "SYst" in the file header: a file another program made is never taken for a store.
constexpr std::int64_t kApplicationId = 0x53597374;
// What an idempotency entry costs besides its answer, as the in-memory store counts it.
constexpr std::int64_t kEntryOverhead = 256;

// Each migration takes the schema from its index to the next version.
constexpr const char* kMigrations[] = {
    // 0 -> 1
    "CREATE TABLE runtime_keys(name TEXT PRIMARY KEY, body TEXT NOT NULL,"
    " added_ms INTEGER NOT NULL);"
    "CREATE TABLE key_spend(key_sha256 TEXT NOT NULL, month TEXT NOT NULL,"
    " spent REAL NOT NULL, tokens INTEGER NOT NULL, requests INTEGER NOT NULL,"
    " PRIMARY KEY(key_sha256, month));"
    "CREATE TABLE deployment_marks(deployment TEXT NOT NULL, kind TEXT NOT NULL,"
    " until_ms INTEGER NOT NULL, reason TEXT NOT NULL, PRIMARY KEY(deployment, kind));"
    "CREATE TABLE idempotency(key TEXT PRIMARY KEY, tenant TEXT NOT NULL,"
    " fingerprint TEXT NOT NULL, answer BLOB, expires_ms INTEGER NOT NULL);"
    "CREATE INDEX idempotency_expiry ON idempotency(expires_ms);",
    // 1 -> 2: the Batch APIs (docs/batches.md): files (their bytes are on disk beside the store),
    // jobs, and the results of lines that ended while their job runs.
    "CREATE TABLE batch_files(id TEXT PRIMARY KEY, owner TEXT NOT NULL, purpose TEXT NOT NULL,"
    " filename TEXT NOT NULL, bytes INTEGER NOT NULL, created_s INTEGER NOT NULL);"
    "CREATE TABLE batch_jobs(id TEXT PRIMARY KEY, owner TEXT NOT NULL, api TEXT NOT NULL,"
    " ended INTEGER NOT NULL, job TEXT NOT NULL);"
    "CREATE TABLE batch_results(batch TEXT NOT NULL, line INTEGER NOT NULL, ok INTEGER NOT NULL,"
    " result TEXT NOT NULL, PRIMARY KEY(batch, line)) WITHOUT ROWID;",
};
static_assert(std::size(kMigrations) == DurableStore::kSchemaVersion);

std::string Base64(std::string_view bytes) {
    std::string out(4 * ((bytes.size() + 2) / 3), '\0');
    const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                  reinterpret_cast<const unsigned char*>(bytes.data()),
                                  static_cast<int>(bytes.size()));
    out.resize(static_cast<std::size_t>(n));
    return out;
}

std::string FromBase64(std::string_view text) {
    if (text.size() % 4 != 0) throw StoreError("an answer is not base64");
    std::string out(3 * text.size() / 4, '\0');
    const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                  reinterpret_cast<const unsigned char*>(text.data()),
                                  static_cast<int>(text.size()));
    if (n < 0) throw StoreError("an answer is not base64");
    std::size_t size = static_cast<std::size_t>(n);
    // EVP_DecodeBlock counts the padding's bytes as zeros.
    if (!text.empty() && text.back() == '=') --size;
    if (text.size() > 1 && text[text.size() - 2] == '=') --size;
    out.resize(size);
    return out;
}

}  // namespace

bool StoreBatch::Empty() const {
    return keys_added.empty() && keys_removed.empty() && spend.empty() && marks.empty() &&
           idempotency.empty();
}

void StoreBatch::Append(StoreBatch&& other) {
    const auto move_into = [](auto& to, auto& from) {
        to.insert(to.end(), std::make_move_iterator(from.begin()),
                  std::make_move_iterator(from.end()));
    };
    move_into(keys_added, other.keys_added);
    move_into(keys_removed, other.keys_removed);
    move_into(spend, other.spend);
    move_into(marks, other.marks);
    move_into(idempotency, other.idempotency);
}

DurableStore::DurableStore(const std::string& path, std::size_t max_answer_bytes)
    : path_(path), max_answer_bytes_(max_answer_bytes) {
    const auto fail = [&](std::string_view what, std::string_view hint) {
        throw StoreError(
            fmt::format("state store {}: {}{}{}", path, what, hint.empty() ? "" : "; ", hint));
    };
    try {
        db_ = std::make_unique<SqliteDatabase>(path, /*create=*/true);
    } catch (const StoreError& e) {
        fail(fmt::format("cannot open or create it: {}", e.what()),
             "check that its directory exists and is writable by this user");
    }
    try {
        // Held for the process's life: a second gateway on the same file is refused at once.
        db_->Execute("PRAGMA busy_timeout=0; PRAGMA locking_mode=EXCLUSIVE;");
        db_->Execute("BEGIN EXCLUSIVE; COMMIT;");
    } catch (const StoreError& e) {
        const std::string why = e.what();
        if (why.find("locked") != std::string::npos || why.find("busy") != std::string::npos) {
            fail("it is in use by another process (another gateway?)",
                 "two gateways never share one store: give each its own state.path, or share "
                 "state through Redis");
        }
        fail(fmt::format("cannot read it: {}", why),
             "it is not a Switchyard state store or it is damaged: move it aside, then restore a "
             "backup with `switchyard state import`");
    }
    try {
        const std::string check = db_->QueryText("PRAGMA quick_check");
        if (check != "ok") throw StoreError(check);
    } catch (const StoreError& e) {
        fail(fmt::format("it is damaged: {}", e.what()),
             "move it aside, then restore a backup with `switchyard state import`");
    }
    const std::int64_t application = db_->QueryInteger("PRAGMA application_id").value_or(0);
    const std::int64_t version = db_->QueryInteger("PRAGMA user_version").value_or(0);
    const std::int64_t tables =
        db_->QueryInteger("SELECT count(*) FROM sqlite_schema WHERE type = 'table'").value_or(0);
    if (application != kApplicationId && (application != 0 || tables > 0)) {
        fail("it is an SQLite file of another program, not a Switchyard state store",
             "choose another state.path");
    }
    if (version > kSchemaVersion) {
        fail(fmt::format("its schema is version {}, newer than this build's {}", version,
                         kSchemaVersion),
             "a newer Switchyard wrote it: run that version, or export with it and import here");
    }
    db_->Execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;");
    Migrate();
}

void DurableStore::Migrate() {
    std::int64_t version = db_->QueryInteger("PRAGMA user_version").value_or(0);
    while (version < kSchemaVersion) {
        db_->Execute("BEGIN IMMEDIATE");
        try {
            db_->Execute(kMigrations[version]);
            db_->Execute(fmt::format("PRAGMA application_id={}; PRAGMA user_version={};",
                                     kApplicationId, version + 1));
            db_->Execute("COMMIT");
        } catch (const StoreError& e) {
            db_->Execute("ROLLBACK");
            throw StoreError(
                fmt::format("state store {}: cannot migrate its schema from version "
                            "{}: {}",
                            path_, version, e.what()));
        }
        ++version;
    }
}

StoreContents DurableStore::Load(std::int64_t now_ms) {
    StoreContents contents;
    {
        SqliteStatement rows(db_->Handle(), "SELECT name, body, added_ms FROM runtime_keys");
        while (rows.Step()) contents.keys.push_back({rows.Text(0), rows.Text(1), rows.Integer(2)});
    }
    {
        SqliteStatement rows(db_->Handle(),
                             "SELECT key_sha256, month, spent, tokens, requests FROM key_spend");
        while (rows.Step()) {
            contents.spend.push_back(
                {rows.Text(0), rows.Text(1), rows.Real(2), rows.Integer(3), rows.Integer(4)});
        }
    }
    {
        SqliteStatement rows(db_->Handle(),
                             "SELECT deployment, kind, until_ms, reason FROM deployment_marks "
                             "WHERE until_ms > ?");
        rows.Bind(1, now_ms);
        while (rows.Step()) {
            contents.marks.push_back({rows.Text(0), rows.Text(1), rows.Integer(2), rows.Text(3)});
        }
    }
    {
        SqliteStatement rows(db_->Handle(),
                             "SELECT key, tenant, fingerprint, answer, expires_ms FROM idempotency "
                             "WHERE expires_ms > ?");
        rows.Bind(1, now_ms);
        while (rows.Step()) {
            contents.idempotency.push_back({rows.Text(0), rows.Text(1), rows.Text(2),
                                            !rows.IsNull(3), rows.Text(3), rows.Integer(4)});
        }
    }
    return contents;
}

void DurableStore::Write(const StoreBatch& batch, std::int64_t now_ms) {
    db_->Execute("BEGIN IMMEDIATE");
    try {
        WriteIn(batch);
        SqliteStatement(db_->Handle(), "DELETE FROM deployment_marks WHERE until_ms <= ?")
            .Bind(1, now_ms)
            .Run();
        SqliteStatement(db_->Handle(), "DELETE FROM idempotency WHERE expires_ms <= ?")
            .Bind(1, now_ms)
            .Run();
        if (!batch.idempotency.empty()) TrimAnswers();
        db_->Execute("COMMIT");
    } catch (const StoreError&) {
        try {
            db_->Execute("ROLLBACK");
        } catch (const StoreError&) {
            // Already rolled back by SQLite (a full disk ends the transaction itself).
        }
        throw;
    }
}

void DurableStore::WriteIn(const StoreBatch& batch) {
    sqlite3* db = db_->Handle();
    SqliteStatement add_key(db,
                            "INSERT OR REPLACE INTO runtime_keys(name, body, added_ms) "
                            "VALUES(?, ?, ?)");
    for (const StoredKey& key : batch.keys_added) {
        add_key.Bind(1, key.name).Bind(2, key.body).Bind(3, key.added_ms).Run();
    }
    SqliteStatement remove_key(db, "DELETE FROM runtime_keys WHERE name = ?");
    for (const std::string& name : batch.keys_removed) remove_key.Bind(1, name).Run();
    SqliteStatement spend(db,
                          "INSERT OR REPLACE INTO key_spend(key_sha256, month, spent, tokens, "
                          "requests) VALUES(?, ?, ?, ?, ?)");
    for (const StoredSpend& s : batch.spend) {
        spend.Bind(1, s.key_sha256)
            .Bind(2, s.month)
            .Bind(3, s.spent)
            .Bind(4, s.tokens)
            .Bind(5, s.requests)
            .Run();
    }
    SqliteStatement clear_kind(db,
                               "DELETE FROM deployment_marks WHERE deployment = ? AND kind = ?");
    SqliteStatement clear_all(db, "DELETE FROM deployment_marks WHERE deployment = ?");
    SqliteStatement set_mark(db,
                             "INSERT INTO deployment_marks(deployment, kind, until_ms, reason) "
                             "VALUES(?, ?, ?, ?) ON CONFLICT(deployment, kind) DO UPDATE SET "
                             "until_ms = max(until_ms, excluded.until_ms), reason = "
                             "excluded.reason");
    for (const StoredMark& m : batch.marks) {
        if (m.until_ms > 0) {
            set_mark.Bind(1, m.deployment).Bind(2, m.kind).Bind(3, m.until_ms);
            set_mark.Bind(4, m.reason).Run();
        } else if (m.kind.empty()) {
            clear_all.Bind(1, m.deployment).Run();
        } else {
            clear_kind.Bind(1, m.deployment).Bind(2, m.kind).Run();
        }
    }
    SqliteStatement keep(db,
                         "INSERT OR REPLACE INTO idempotency(key, tenant, fingerprint, answer, "
                         "expires_ms) VALUES(?, ?, ?, ?, ?)");
    for (const StoredIdempotency& i : batch.idempotency) {
        keep.Bind(1, i.key).Bind(2, i.tenant).Bind(3, i.fingerprint);
        if (i.has_answer) {
            keep.Bind(4, i.answer);
        } else {
            keep.BindNull(4);
        }
        keep.Bind(5, i.expires_ms).Run();
    }
}

void DurableStore::TrimAnswers() {
    // Bounded as the in-memory store is: past the limit, the answers that expire first go.
    std::int64_t total =
        db_->QueryInteger(fmt::format("SELECT coalesce(sum(length(answer) + length(key) + {}), 0) "
                                      "FROM idempotency",
                                      kEntryOverhead))
            .value_or(0);
    const auto limit = static_cast<std::int64_t>(max_answer_bytes_);
    if (total <= limit) return;
    SqliteStatement oldest(db_->Handle(),
                           fmt::format("SELECT key, coalesce(length(answer), 0) + length(key) + "
                                       "{} FROM idempotency ORDER BY expires_ms",
                                       kEntryOverhead));
    std::vector<std::string> drop;
    while (total > limit && oldest.Step()) {
        drop.push_back(oldest.Text(0));
        total -= oldest.Integer(1);
    }
    oldest.Reset();
    SqliteStatement remove(db_->Handle(), "DELETE FROM idempotency WHERE key = ?");
    for (const std::string& key : drop) remove.Bind(1, key).Run();
}

void DurableStore::Replace(const StoreContents& contents) {
    db_->Execute("BEGIN IMMEDIATE");
    try {
        db_->Execute(
            "DELETE FROM runtime_keys; DELETE FROM key_spend; DELETE FROM deployment_marks; "
            "DELETE FROM idempotency;");
        StoreBatch batch;
        batch.keys_added = contents.keys;
        batch.spend = contents.spend;
        batch.marks = contents.marks;
        batch.idempotency = contents.idempotency;
        WriteIn(batch);
        db_->Execute("COMMIT");
    } catch (const StoreError&) {
        db_->Execute("ROLLBACK");
        throw;
    }
}

boost::json::object ExportContents(const StoreContents& contents, std::int64_t now_ms) {
    boost::json::array keys, spend, marks, idempotency;
    for (const StoredKey& k : contents.keys) {
        keys.push_back({{"name", k.name}, {"body", k.body}, {"added_ms", k.added_ms}});
    }
    for (const StoredSpend& s : contents.spend) {
        spend.push_back({{"key_sha256", s.key_sha256},
                         {"month", s.month},
                         {"spent", s.spent},
                         {"tokens", s.tokens},
                         {"requests", s.requests}});
    }
    for (const StoredMark& m : contents.marks) {
        marks.push_back({{"deployment", m.deployment},
                         {"kind", m.kind},
                         {"until_ms", m.until_ms},
                         {"reason", m.reason}});
    }
    for (const StoredIdempotency& i : contents.idempotency) {
        boost::json::object entry{{"key", i.key},
                                  {"tenant", i.tenant},
                                  {"fingerprint", i.fingerprint},
                                  {"expires_ms", i.expires_ms}};
        entry["answer"] = i.has_answer ? boost::json::value(Base64(i.answer)) : nullptr;
        idempotency.push_back(std::move(entry));
    }
    return {{"format", "switchyard-state"},
            {"version", DurableStore::kSchemaVersion},
            {"exported_ms", now_ms},
            {"keys", std::move(keys)},
            {"spend", std::move(spend)},
            {"marks", std::move(marks)},
            {"idempotency", std::move(idempotency)}};
}

StoreContents ImportContents(const boost::json::value& document) {
    const auto* root = document.if_object();
    if (root == nullptr || !root->contains("format") || root->at("format") != "switchyard-state") {
        throw StoreError("not a Switchyard state export (no \"format\": \"switchyard-state\")");
    }
    const auto* version = root->if_contains("version");
    if (version == nullptr || !version->is_int64() || version->as_int64() < 1 ||
        version->as_int64() > DurableStore::kSchemaVersion) {
        throw StoreError(fmt::format("an export of an unknown version (this build reads 1 to {})",
                                     DurableStore::kSchemaVersion));
    }
    const auto list = [&](std::string_view name) -> const boost::json::array& {
        static const boost::json::array empty;
        const auto* v = root->if_contains(name);
        if (v == nullptr) return empty;
        if (!v->is_array()) throw StoreError(fmt::format("'{}' must be an array", name));
        return v->get_array();
    };
    const auto text = [](const boost::json::value& entry, std::string_view field) {
        const auto* v = entry.is_object() ? entry.get_object().if_contains(field) : nullptr;
        if (v == nullptr || !v->is_string()) {
            throw StoreError(fmt::format("an entry lacks the string '{}'", field));
        }
        return std::string(v->get_string());
    };
    const auto number = [](const boost::json::value& entry, std::string_view field) {
        const auto* v = entry.is_object() ? entry.get_object().if_contains(field) : nullptr;
        if (v == nullptr || !v->is_number()) {
            throw StoreError(fmt::format("an entry lacks the number '{}'", field));
        }
        return v->to_number<double>();
    };
    StoreContents contents;
    for (const auto& k : list("keys")) {
        contents.keys.push_back(
            {text(k, "name"), text(k, "body"), static_cast<std::int64_t>(number(k, "added_ms"))});
    }
    for (const auto& s : list("spend")) {
        contents.spend.push_back({text(s, "key_sha256"), text(s, "month"), number(s, "spent"),
                                  static_cast<std::int64_t>(number(s, "tokens")),
                                  static_cast<std::int64_t>(number(s, "requests"))});
    }
    for (const auto& m : list("marks")) {
        contents.marks.push_back({text(m, "deployment"), text(m, "kind"),
                                  static_cast<std::int64_t>(number(m, "until_ms")),
                                  text(m, "reason")});
    }
    for (const auto& i : list("idempotency")) {
        StoredIdempotency entry{text(i, "key"),
                                text(i, "tenant"),
                                text(i, "fingerprint"),
                                false,
                                {},
                                static_cast<std::int64_t>(number(i, "expires_ms"))};
        const auto* answer = i.get_object().if_contains("answer");
        if (answer != nullptr && answer->is_string()) {
            entry.has_answer = true;
            entry.answer = FromBase64(answer->get_string());
        }
        contents.idempotency.push_back(std::move(entry));
    }
    return contents;
}

}  // namespace switchyard::state
