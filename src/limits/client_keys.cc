#include "limits/client_keys.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/sha256.h"
#include "policy/spend_cap.h"

namespace switchyard::limits {
namespace {

int MonthIndex(std::chrono::system_clock::time_point wall) {
    const std::chrono::year_month_day day{std::chrono::floor<std::chrono::days>(wall)};
    return static_cast<int>(day.year()) * 12 + static_cast<int>(unsigned(day.month())) - 1;
}

// A limit ramped by slow start; never below one unit so a ramping key is never locked out.
std::int64_t Ramped(std::int64_t limit, double fraction) {
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::floor(limit * fraction)));
}

}  // namespace

ClientKeyState::ClientKeyState(config::ClientKey policy, bool from_config)
    : policy_(std::move(policy)), from_config_(from_config), ramp_(policy_.slow_start) {}

void ClientKeyState::RollMonth(WallTime wall_now) {
    const int month = MonthIndex(wall_now);
    if (month != month_) {
        month_ = month;
        spent_ = 0;
        month_tokens_ = 0;
        month_requests_ = 0;
    }
}

KeyAdmission ClientKeyState::Admit(std::int64_t tokens, TimePoint now, WallTime wall_now) {
    KeyAdmission verdict;
    verdict.at = now;
    std::lock_guard lock(mutex_);
    RollMonth(wall_now);
    if (policy_.monthly_budget > 0 && spent_ >= policy_.monthly_budget) {
        verdict.refusal = KeyRefusal::kBudget;
        verdict.retry_after = std::chrono::ceil<std::chrono::milliseconds>(
            policy::SpendCapResetAfter(wall_now) - wall_now);
        return verdict;
    }
    if (policy_.tpm > 0 && tokens > policy_.tpm) {
        verdict.refusal = KeyRefusal::kTooLarge;  // no wait makes it fit
        return verdict;
    }
    const double fraction = ramp_.Peek(now);
    if (policy_.rpm > 0) {
        const std::int64_t limit = Ramped(policy_.rpm, fraction);
        // Checked without adding first, so a request refused for tokens takes no request slot.
        if (requests_.Used(now) + 1 > limit) {
            verdict.refusal = KeyRefusal::kRequests;
            verdict.retry_after = requests_.TryAdd(1, limit, now).retry_after;
            return verdict;
        }
    }
    if (policy_.tpm > 0) {
        const std::int64_t limit = Ramped(policy_.tpm, fraction);
        const SlidingWindow::Decision decision = tokens_.TryAdd(tokens, limit, now);
        if (!decision.admitted) {
            verdict.refusal = KeyRefusal::kTokens;
            verdict.retry_after = decision.retry_after;
            return verdict;
        }
        verdict.tokens = std::clamp<std::int64_t>(tokens, 0, limit);  // what the window counted
    }
    // A key without a request limit is counted all the same: its usage is reported.
    if (policy_.rpm > 0) {
        requests_.TryAdd(1, Ramped(policy_.rpm, fraction), now);
    } else {
        requests_.Adjust(1, now, now);
    }
    ramp_.Fraction(now);  // records the activity
    return verdict;
}

ClientKeyState::Limits ClientKeyState::RampedLimits(TimePoint now) const {
    std::lock_guard lock(mutex_);
    const double fraction = ramp_.Peek(now);
    return {policy_.rpm > 0 ? Ramped(policy_.rpm, fraction) : 0,
            policy_.tpm > 0 ? Ramped(policy_.tpm, fraction) : 0};
}

KeyAdmission ClientKeyState::Record(std::int64_t tokens, TimePoint now) {
    KeyAdmission admission;
    admission.at = now;
    std::lock_guard lock(mutex_);
    requests_.Adjust(1, now, now);
    if (policy_.tpm > 0) {
        tokens_.Adjust(tokens, now, now);
        admission.tokens = tokens;
    }
    ramp_.Fraction(now);  // records the activity
    return admission;
}

void ClientKeyState::Settle(const KeyAdmission& admission, std::int64_t actual_tokens, double cost,
                            TimePoint now, WallTime wall_now) {
    std::lock_guard lock(mutex_);
    // Without a token limit nothing was counted at admission: the tokens used are counted now.
    if (actual_tokens >= 0) tokens_.Adjust(actual_tokens - admission.tokens, admission.at, now);
    RollMonth(wall_now);
    spent_ += cost;
    if (actual_tokens > 0) month_tokens_ += actual_tokens;
    ++month_requests_;
    unsaved_ = true;
}

void ClientKeyState::AddToMonth(std::int64_t requests, std::int64_t tokens, double cost,
                                WallTime wall_now) {
    std::lock_guard lock(mutex_);
    RollMonth(wall_now);
    spent_ += cost;
    month_tokens_ += std::max<std::int64_t>(tokens, 0);
    month_requests_ += requests;
    unsaved_ = true;
}

std::optional<ClientKeyState::MonthTotals> ClientKeyState::TakeUnsaved(bool all) {
    std::lock_guard lock(mutex_);
    if (month_ < 0 || (!unsaved_ && !all)) return std::nullopt;
    unsaved_ = false;
    return MonthTotals{month_, spent_, month_tokens_, month_requests_};
}

void ClientKeyState::Restore(const MonthTotals& totals, WallTime wall_now) {
    std::lock_guard lock(mutex_);
    if (totals.month != MonthIndex(wall_now)) return;
    RollMonth(wall_now);
    // Whatever this process counted already (nothing, at start) adds to what was stored.
    spent_ += totals.spent;
    month_tokens_ += totals.tokens;
    month_requests_ += totals.requests;
}

ClientKeyState::Usage ClientKeyState::Snapshot(TimePoint now, WallTime wall_now) const {
    std::lock_guard lock(mutex_);
    Usage usage;
    usage.requests_last_minute = requests_.Used(now);
    usage.tokens_last_minute = tokens_.Used(now);
    if (MonthIndex(wall_now) == month_) {
        usage.spent_this_month = spent_;
        usage.tokens_this_month = month_tokens_;
        usage.requests_this_month = month_requests_;
    }
    return usage;
}

ClientKeys::ClientKeys(const std::vector<config::ClientKey>& keys) {
    for (const config::ClientKey& key : keys) {
        by_hash_.emplace(key.sha256, std::make_shared<ClientKeyState>(key, /*from_config=*/true));
    }
    count_ = by_hash_.size();
}

std::shared_ptr<ClientKeyState> ClientKeys::Find(std::string_view presented) const {
    if (presented.empty()) return nullptr;
    const std::string hash = core::Sha256Hex(presented);
    std::shared_lock lock(mutex_);
    const auto it = by_hash_.find(hash);
    return it == by_hash_.end() ? nullptr : it->second;
}

std::shared_ptr<ClientKeyState> ClientKeys::FindHash(const std::string& sha256) const {
    std::shared_lock lock(mutex_);
    const auto it = by_hash_.find(sha256);
    return it == by_hash_.end() ? nullptr : it->second;
}

std::shared_ptr<ClientKeyState> ClientKeys::Add(config::ClientKey key, std::string& error) {
    std::unique_lock lock(mutex_);
    if (by_hash_.contains(key.sha256)) {
        error = "a key with the same value exists already";
        return nullptr;
    }
    for (const auto& [hash, state] : by_hash_) {
        if (state->Policy().name == key.name) {
            error = "a key named '" + key.name + "' exists already";
            return nullptr;
        }
    }
    std::string hash = key.sha256;
    auto state = std::make_shared<ClientKeyState>(std::move(key), /*from_config=*/false);
    by_hash_.emplace(std::move(hash), state);
    count_ = by_hash_.size();
    return state;
}

bool ClientKeys::Remove(std::string_view name) {
    std::unique_lock lock(mutex_);
    for (auto it = by_hash_.begin(); it != by_hash_.end(); ++it) {
        if (it->second->Policy().name == name) {
            by_hash_.erase(it);
            count_ = by_hash_.size();
            return true;
        }
    }
    return false;
}

namespace {

bool SamePolicy(const config::ClientKey& a, const config::ClientKey& b) {
    return a.name == b.name && a.sha256 == b.sha256 && a.rpm == b.rpm && a.tpm == b.tpm &&
           a.monthly_budget == b.monthly_budget && a.models == b.models &&
           a.lane_name == b.lane_name && a.fallbacks == b.fallbacks &&
           a.stream_mode == b.stream_mode && a.slow_start == b.slow_start &&
           a.residency == b.residency;
}

}  // namespace

void ClientKeyState::TakeCountersFrom(const ClientKeyState& old) {
    std::scoped_lock lock(mutex_, old.mutex_);
    requests_ = old.requests_;
    tokens_ = old.tokens_;
    ramp_ = old.ramp_;
    spent_ = old.spent_;
    month_tokens_ = old.month_tokens_;
    month_requests_ = old.month_requests_;
    month_ = old.month_;
    unsaved_ = true;
}

void ClientKeys::Reload(const std::vector<config::ClientKey>& keys) {
    std::unique_lock lock(mutex_);
    std::unordered_map<std::string, std::shared_ptr<ClientKeyState>> next;
    std::set<std::string> names;
    for (const config::ClientKey& key : keys) {
        names.insert(key.name);
        const auto it = by_hash_.find(key.sha256);
        if (it != by_hash_.end() && it->second->FromConfig() &&
            SamePolicy(it->second->Policy(), key)) {
            next[key.sha256] = it->second;
            continue;
        }
        auto state = std::make_shared<ClientKeyState>(key, /*from_config=*/true);
        // The same key with new limits keeps what it used: no fresh monthly budget by editing.
        if (it != by_hash_.end()) state->TakeCountersFrom(*it->second);
        next[key.sha256] = std::move(state);
    }
    // Keys added at runtime stay, unless the file now has their name or their value.
    for (const auto& [hash, state] : by_hash_) {
        if (!state->FromConfig() && !next.contains(hash) && !names.contains(state->Policy().name)) {
            next.emplace(hash, state);
        }
    }
    by_hash_ = std::move(next);
    count_ = by_hash_.size();
}

std::vector<std::shared_ptr<ClientKeyState>> ClientKeys::List() const {
    std::shared_lock lock(mutex_);
    std::vector<std::shared_ptr<ClientKeyState>> out;
    out.reserve(by_hash_.size());
    for (const auto& [hash, state] : by_hash_) out.push_back(state);
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a->Policy().name < b->Policy().name; });
    return out;
}

}  // namespace switchyard::limits
