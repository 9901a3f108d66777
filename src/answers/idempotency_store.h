#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "answers/stored_answer.h"

namespace switchyard::answers {

// What holds an idempotency key.
enum class KeyState {
    kClaimed,      // nothing did: the caller now runs the request
    kInFlight,     // a request with the same body runs it now
    kDone,         // it ran: `answer` is what it answered
    kUnavailable,  // it ran, and its answer was too large to keep
    kMismatch,     // the key was used with a different request body
};

struct KeyLookup {
    KeyState state = KeyState::kClaimed;
    std::shared_ptr<const StoredAnswer> answer;  // with kDone
};

// This replica's idempotency keys (docs/answers.md#idempotency-keys): each key is claimed by the
// first request that carries it, and keeps that request's answer for the TTL. Bounded in memory:
// answers and entries together stay under `max_bytes`; past it, kept answers are dropped from the
// client (tenant) that holds the most, the one that expires first — so one client's large answers
// never cost another client, holding less, its guarantee. Claims in flight are never dropped.
// Time comes from the caller. Thread-safe (every worker uses it).
class IdempotencyStore final {
  public:
    using TimePoint = std::chrono::steady_clock::time_point;

    explicit IdempotencyStore(std::size_t max_bytes) : max_bytes_(max_bytes) {}

    // Claims `key` of client `tenant` for a request whose body hashes to `fingerprint`, for at
    // most `lease` (the request's deadline), or says what holds it.
    KeyLookup Claim(const std::string& key, std::string_view tenant, std::string_view fingerprint,
                    TimePoint now, std::chrono::milliseconds lease);
    // The claimed request ended: its answer is kept until `until` (null: it ran but its answer
    // could not be kept).
    void Complete(const std::string& key, std::shared_ptr<const StoredAnswer> answer,
                  TimePoint until);
    // The claimed request ended without an answer worth keeping: the key may run again.
    void Release(const std::string& key);

    std::size_t Bytes() const;
    std::size_t Size() const;
    // What `tenant`'s entries and kept answers take.
    std::size_t BytesOf(std::string_view tenant) const;

    // What an entry costs besides its answer (its key, fingerprint and bookkeeping).
    static constexpr std::size_t kEntryOverhead = 256;

  private:
    using ByExpiry = std::multimap<TimePoint, std::string>;
    struct Entry {
        std::string fingerprint;
        std::string tenant;
        bool done = false;
        std::shared_ptr<const StoredAnswer> answer;
        std::size_t bytes = 0;
        ByExpiry::iterator expiry;
        std::optional<ByExpiry::iterator> kept;  // in its tenant's `kept` while it holds an answer
    };
    struct Tenant {
        std::size_t bytes = 0;       // entries and answers
        std::size_t kept_bytes = 0;  // answers that may be dropped for room
        ByExpiry kept;
    };
    using EntryMap = std::unordered_map<std::string, Entry>;

    void Drop(EntryMap::iterator it);
    void DropExpired(TimePoint now);
    void Expire(EntryMap::iterator it, TimePoint until);
    void Unkeep(Entry& entry);
    // Drops kept answers until `bytes` more fit (never `keep`'s); false when they do not.
    bool MakeRoom(std::size_t bytes, EntryMap::iterator keep);

    const std::size_t max_bytes_;
    mutable std::mutex mutex_;
    EntryMap entries_;
    ByExpiry by_expiry_;
    std::unordered_map<std::string, Tenant> tenants_;
    std::size_t bytes_ = 0;
};

}  // namespace switchyard::answers
