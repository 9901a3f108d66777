#include "answers/idempotency_store.h"

namespace switchyard::answers {

void IdempotencyStore::Unkeep(Entry& entry) {
    if (!entry.kept) return;
    Tenant& tenant = tenants_[entry.tenant];
    tenant.kept.erase(*entry.kept);
    tenant.kept_bytes -= entry.bytes;
    entry.kept.reset();
}

void IdempotencyStore::Drop(EntryMap::iterator it) {
    Entry& entry = it->second;
    Unkeep(entry);
    bytes_ -= entry.bytes;
    if (const auto tenant = tenants_.find(entry.tenant); tenant != tenants_.end()) {
        tenant->second.bytes -= entry.bytes;
        if (tenant->second.bytes == 0) tenants_.erase(tenant);
    }
    by_expiry_.erase(entry.expiry);
    entries_.erase(it);
}

void IdempotencyStore::DropExpired(TimePoint now) {
    while (!by_expiry_.empty() && by_expiry_.begin()->first <= now) {
        Drop(entries_.find(by_expiry_.begin()->second));
    }
}

bool IdempotencyStore::MakeRoom(std::size_t bytes, EntryMap::iterator keep) {
    // The client holding the most droppable answers gives one up — the one that expires first —
    // until there is room; claims in flight stay (they are bounded by the requests in flight), and
    // so does `keep`.
    while (bytes_ + bytes > max_bytes_) {
        Tenant* heaviest = nullptr;
        std::size_t most = 0;
        for (auto& [name, tenant] : tenants_) {
            std::size_t droppable = tenant.kept_bytes;
            if (keep != entries_.end() && keep->second.kept && keep->second.tenant == name) {
                droppable -= keep->second.bytes;
            }
            if (droppable > most) {
                heaviest = &tenant;
                most = droppable;
            }
        }
        if (heaviest == nullptr) return false;
        for (auto next = heaviest->kept.begin(); next != heaviest->kept.end(); ++next) {
            const auto victim = entries_.find(next->second);
            if (victim == keep) continue;
            Drop(victim);
            break;
        }
    }
    return true;
}

void IdempotencyStore::Expire(EntryMap::iterator it, TimePoint until) {
    if (it->second.expiry != by_expiry_.end()) by_expiry_.erase(it->second.expiry);
    it->second.expiry = by_expiry_.emplace(until, it->first);
}

KeyLookup IdempotencyStore::Claim(const std::string& key, std::string_view tenant,
                                  std::string_view fingerprint, TimePoint now,
                                  std::chrono::milliseconds lease) {
    std::lock_guard lock(mutex_);
    DropExpired(now);
    if (const auto it = entries_.find(key); it != entries_.end()) {
        const Entry& entry = it->second;
        if (entry.fingerprint != fingerprint) return {KeyState::kMismatch, nullptr};
        if (!entry.done) return {KeyState::kInFlight, nullptr};
        if (entry.answer == nullptr) return {KeyState::kUnavailable, nullptr};
        return {KeyState::kDone, entry.answer};
    }
    const std::size_t bytes = kEntryOverhead + key.size() + fingerprint.size() + tenant.size();
    MakeRoom(bytes, entries_.end());
    auto [it, inserted] =
        entries_.emplace(key, Entry{std::string(fingerprint), std::string(tenant)});
    it->second.bytes = bytes;
    it->second.expiry = by_expiry_.end();
    bytes_ += bytes;
    tenants_[it->second.tenant].bytes += bytes;
    Expire(it, now + lease);
    return {KeyState::kClaimed, nullptr};
}

void IdempotencyStore::Complete(const std::string& key, std::shared_ptr<const StoredAnswer> answer,
                                TimePoint until) {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end() || it->second.done) return;  // dropped for room meanwhile
    Entry& entry = it->second;
    Tenant& tenant = tenants_[entry.tenant];
    const std::size_t answer_bytes = answer != nullptr ? answer->Bytes() : 0;
    entry.done = true;
    entry.answer = std::move(answer);
    entry.bytes += answer_bytes;
    bytes_ += answer_bytes;
    tenant.bytes += answer_bytes;
    Expire(it, until);
    // A key that ran holds its answer (or its "ran" mark) until it expires; only what holds an
    // answer may be dropped for room, and then the key may run again.
    if (entry.answer != nullptr) {
        entry.kept = tenant.kept.emplace(until, key);
        tenant.kept_bytes += entry.bytes;
    }
    if (bytes_ > max_bytes_ && !MakeRoom(0, it)) {
        // Nothing else to drop: the answer is not kept, the key still says it ran.
        Unkeep(entry);
        bytes_ -= answer_bytes;
        entry.bytes -= answer_bytes;
        tenant.bytes -= answer_bytes;
        entry.answer = nullptr;
    }
}

void IdempotencyStore::Release(const std::string& key) {
    std::lock_guard lock(mutex_);
    if (const auto it = entries_.find(key); it != entries_.end() && !it->second.done) Drop(it);
}

std::size_t IdempotencyStore::Bytes() const {
    std::lock_guard lock(mutex_);
    return bytes_;
}

std::size_t IdempotencyStore::Size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
}

std::size_t IdempotencyStore::BytesOf(std::string_view tenant) const {
    std::lock_guard lock(mutex_);
    const auto it = tenants_.find(std::string(tenant));
    return it == tenants_.end() ? 0 : it->second.bytes;
}

}  // namespace switchyard::answers
