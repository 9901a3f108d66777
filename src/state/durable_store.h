#pragma once

#include <boost/json/object.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "state/sqlite.h"

namespace switchyard::state {

// A client key added through the admin API: its request body as the admin API reads it (with the
// key's SHA-256, never its plaintext).
struct StoredKey {
    std::string name;
    std::string body;
    std::int64_t added_ms = 0;  // Unix time
};

// One client key's use in one calendar month (UTC), as totals: writing it again is harmless.
struct StoredSpend {
    std::string key_sha256;
    std::string month;  // "YYYY-MM"
    double spent = 0;
    std::int64_t tokens = 0;
    std::int64_t requests = 0;
};

// A mark that benches a deployment until an instant (docs/state.md#the-durable-store): kind is
// rate_limited, cooling, breaker_open or disabled.
struct StoredMark {
    std::string deployment;
    std::string kind;
    std::int64_t until_ms = 0;  // Unix time
    std::string reason;
};

// An idempotency key's kept outcome: the answer (answers::Encode), or none when it ran but its
// answer was too large to keep.
struct StoredIdempotency {
    std::string key;
    std::string tenant;
    std::string fingerprint;
    bool has_answer = false;
    std::string answer;
    std::int64_t expires_ms = 0;  // Unix time
};

// Everything the store holds.
struct StoreContents {
    std::vector<StoredKey> keys;
    std::vector<StoredSpend> spend;
    std::vector<StoredMark> marks;
    std::vector<StoredIdempotency> idempotency;
};

// Changes written in one transaction.
struct StoreBatch {
    std::vector<StoredKey> keys_added;
    std::vector<std::string> keys_removed;
    std::vector<StoredSpend> spend;
    // In the order they happened: until_ms > 0 sets a mark (extending the same kind's), 0
    // clears the deployment's mark of that kind ("": every kind).
    std::vector<StoredMark> marks;
    std::vector<StoredIdempotency> idempotency;  // kept
    bool Empty() const;
    void Append(StoreBatch&& other);
};

// The embedded durable store (docs/state.md#the-durable-store): one SQLite file in WAL mode,
// held exclusively by one gateway, with a schema that migrates forward. Everything that must
// outlive the process: keys added at run time, each key's spend per month, deployments' marks
// with their expiry, and idempotency keys' answers. Not thread-safe: one thread writes.
class DurableStore final {
  public:
    // The schema this build writes; a file with a later one is refused.
    static constexpr int kSchemaVersion = 2;

    // Opens (or creates) the store at `path`, takes its lock and migrates it. Throws StoreError
    // with a message that says what is wrong and what to do: a file that is not a store, a
    // corrupt one, one held by another gateway, one with a newer schema, one that cannot be
    // opened or created.
    DurableStore(const std::string& path, std::size_t max_answer_bytes);

    const std::string& Path() const { return path_; }

    // What the store holds, without what expired before `now_ms` (which is deleted).
    StoreContents Load(std::int64_t now_ms);
    // Writes `batch` in one transaction (and deletes what expired before `now_ms`). Throws
    // StoreError (a full or read-only disk); nothing of the batch is then written.
    void Write(const StoreBatch& batch, std::int64_t now_ms);
    // Replaces everything with `contents` (an import).
    void Replace(const StoreContents& contents);
    // The database, for the tables of other subsystems (the Batch APIs': batches/batch_records.h).
    SqliteDatabase& Database() { return *db_; }

  private:
    void Migrate();
    void WriteIn(const StoreBatch& batch);
    void TrimAnswers();

    std::string path_;
    std::size_t max_answer_bytes_;
    std::unique_ptr<SqliteDatabase> db_;
};

// The store's contents as JSON (switchyard state export), and back (import). Answers are
// base64. Throws StoreError on a document that is not an export of a known version.
boost::json::object ExportContents(const StoreContents& contents, std::int64_t now_ms);
StoreContents ImportContents(const boost::json::value& document);

}  // namespace switchyard::state
