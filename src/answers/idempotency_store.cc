#include "answers/idempotency_store.h"

namespace switchyard::answers {

void IdempotencyStore::Drop(EntryMap::iterator it) {
    bytes_ -= it->second.bytes;
    by_expiry_.erase(it->second.expiry);
    entries_.erase(it);
}

void IdempotencyStore::DropExpired(TimePoint now) {
    while (!by_expiry_.empty() && by_expiry_.begin()->first <= now) {
        Drop(entries_.find(by_expiry_.begin()->second));
    }
}

bool IdempotencyStore::MakeRoom(std::size_t bytes, EntryMap::iterator keep) {
    // The answers that expire soonest go first; claims in flight stay (they are bounded by the
    // requests in flight), and so does `keep`.
    auto next = by_expiry_.begin();
    while (bytes_ + bytes > max_bytes_ && next != by_expiry_.end()) {
        const auto victim = entries_.find(next->second);
        ++next;
        if (victim == keep || !victim->second.done) continue;
        Drop(victim);
    }
    return bytes_ + bytes <= max_bytes_;
}

void IdempotencyStore::Expire(EntryMap::iterator it, TimePoint until) {
    if (it->second.expiry != by_expiry_.end()) by_expiry_.erase(it->second.expiry);
    it->second.expiry = by_expiry_.emplace(until, it->first);
}

KeyLookup IdempotencyStore::Claim(const std::string& key, std::string_view fingerprint,
                                  TimePoint now, std::chrono::milliseconds lease) {
    std::lock_guard lock(mutex_);
    DropExpired(now);
    if (const auto it = entries_.find(key); it != entries_.end()) {
        const Entry& entry = it->second;
        if (entry.fingerprint != fingerprint) return {KeyState::kMismatch, nullptr};
        if (!entry.done) return {KeyState::kInFlight, nullptr};
        if (entry.answer == nullptr) return {KeyState::kUnavailable, nullptr};
        return {KeyState::kDone, entry.answer};
    }
    const std::size_t bytes = kEntryOverhead + key.size() + fingerprint.size();
    MakeRoom(bytes, entries_.end());
    auto [it, inserted] = entries_.emplace(key, Entry{std::string(fingerprint)});
    it->second.bytes = bytes;
    it->second.expiry = by_expiry_.end();
    bytes_ += bytes;
    Expire(it, now + lease);
    return {KeyState::kClaimed, nullptr};
}

void IdempotencyStore::Complete(const std::string& key, std::shared_ptr<const StoredAnswer> answer,
                                TimePoint until) {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return;  // dropped for room meanwhile
    Entry& entry = it->second;
    const std::size_t answer_bytes = answer != nullptr ? answer->Bytes() : 0;
    entry.done = true;
    entry.answer = std::move(answer);
    entry.bytes += answer_bytes;
    bytes_ += answer_bytes;
    Expire(it, until);
    if (bytes_ > max_bytes_ && !MakeRoom(0, it)) {
        // Nothing older to drop: the answer is not kept, the key still says it ran.
        bytes_ -= answer_bytes;
        entry.bytes -= answer_bytes;
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

}  // namespace switchyard::answers
