#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/config.h"
#include "limits/sliding_window.h"
#include "limits/slow_start.h"

namespace switchyard::limits {

// Why a client key's request was refused.
// Why a key's request was refused: over its RPM, its TPM, its monthly budget, or larger than its
// whole TPM limit (it can never fit: refused at once, never after waiting for an empty window).
enum class KeyRefusal { kNone, kRequests, kTokens, kBudget, kTooLarge };

// The verdict on one request of a key, and what it reserved (for Settle).
struct KeyAdmission {
    KeyRefusal refusal = KeyRefusal::kNone;
    std::chrono::milliseconds retry_after{0};  // exact: a retry after this long fits
    std::chrono::steady_clock::time_point at{};
    std::int64_t tokens = 0;  // tokens counted at admission
};

// One client key: its policy and its live counters (requests and tokens in the last minute,
// spend this calendar month). Thread-safe.
class ClientKeyState final {
  public:
    using TimePoint = std::chrono::steady_clock::time_point;
    using WallTime = std::chrono::system_clock::time_point;

    struct Usage {
        std::int64_t requests_last_minute = 0;
        std::int64_t tokens_last_minute = 0;
        double spent_this_month = 0;
        std::int64_t tokens_this_month = 0;
        std::int64_t requests_this_month = 0;
    };

    // What the key used in one calendar month (UTC; `month`: year * 12 + month - 1), as the
    // durable store keeps it.
    struct MonthTotals {
        int month = -1;
        double spent = 0;
        std::int64_t tokens = 0;
        std::int64_t requests = 0;
    };

    ClientKeyState(config::ClientKey policy, bool from_config);

    const config::ClientKey& Policy() const { return policy_; }
    bool FromConfig() const { return from_config_; }

    // Admits one request counting `tokens` (input estimate + max_tokens) against the key's RPM,
    // TPM and monthly budget, or says which limit refused it and exactly how long until it fits.
    // A refused request counts for nothing.
    KeyAdmission Admit(std::int64_t tokens, TimePoint now, WallTime wall_now);

    // The key's RPM and TPM limits at `now`, ramped by slow start (0: none).
    struct Limits {
        std::int64_t rpm = 0;
        std::int64_t tpm = 0;
    };
    Limits RampedLimits(TimePoint now) const;
    // Counts a request admitted elsewhere (the fleet's shared window) with `tokens` counted
    // there, so this replica's own windows stay current should it have to decide alone.
    KeyAdmission Record(std::int64_t tokens, TimePoint now);

    // After the answer: the provider's token count (-1 unknown) replaces the estimate counted at
    // admission, and `cost` (currency) is added to this month's spend.
    void Settle(const KeyAdmission& admission, std::int64_t actual_tokens, double cost,
                TimePoint now, WallTime wall_now);

    // Work done outside the key's per-minute windows (a provider batch's lines, which the
    // provider's own batch limits govern): `requests` requests, `tokens` tokens and `cost` added to
    // this month's totals.
    void AddToMonth(std::int64_t requests, std::int64_t tokens, double cost, WallTime wall_now);

    Usage Snapshot(TimePoint now, WallTime wall_now) const;

    // A config reload changed the key's limits: it keeps its minute and its month's spend.
    void TakeCountersFrom(const ClientKeyState& old);

    // This month's totals when they changed since the last call (`all`: whenever there are
    // any), for the durable store.
    std::optional<MonthTotals> TakeUnsaved(bool all);
    // Totals read back from the durable store at start: they count as this month's when they are
    // its (an older month's are history).
    void Restore(const MonthTotals& totals, WallTime wall_now);

  private:
    // Starts a new month's spend when `wall_now` is in a later month than the spend so far.
    void RollMonth(WallTime wall_now);

    const config::ClientKey policy_;
    const bool from_config_;
    mutable std::mutex mutex_;
    SlidingWindow requests_;
    SlidingWindow tokens_;
    SlowStart ramp_;
    double spent_ = 0;
    std::int64_t month_tokens_ = 0;
    std::int64_t month_requests_ = 0;
    int month_ = -1;        // year * 12 + month of spent_
    bool unsaved_ = false;  // the month's totals changed since TakeUnsaved
};

// Every client key, looked up by the SHA-256 of what a client presents. Keys come from the config
// and from the admin API at runtime. Thread-safe.
class ClientKeys final {
  public:
    explicit ClientKeys(const std::vector<config::ClientKey>& keys);

    // No key exists: the gateway does not ask clients for one.
    bool Empty() const { return count_.load(std::memory_order_relaxed) == 0; }

    // The key a client presented (plaintext, hashed here); null when unknown.
    std::shared_ptr<ClientKeyState> Find(std::string_view presented) const;
    // The key whose SHA-256 (hex) is `sha256`; null when unknown.
    std::shared_ptr<ClientKeyState> FindHash(const std::string& sha256) const;

    // Adds a key at runtime and returns it; null, with `error` set, when its name or key exists
    // already.
    std::shared_ptr<ClientKeyState> Add(config::ClientKey key, std::string& error);
    bool Remove(std::string_view name);
    // A reloaded config's keys replace the config's earlier ones; keys added at runtime stay. A
    // key whose name, hash and limits did not change keeps its counters (its minute and month).
    void Reload(const std::vector<config::ClientKey>& keys);
    std::vector<std::shared_ptr<ClientKeyState>> List() const;

  private:
    mutable std::shared_mutex mutex_;
    std::unordered_map<std::string, std::shared_ptr<ClientKeyState>> by_hash_;
    std::atomic<std::size_t> count_{0};
};

}  // namespace switchyard::limits
