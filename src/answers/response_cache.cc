#include "answers/response_cache.h"

namespace switchyard::answers {

void ResponseCache::Erase(Group& group, std::list<Entry>::iterator it) {
    bytes_ -= it->answer->Bytes();
    --entries_;
    group.index.erase(it->key);
    group.recent.erase(it);
}

std::shared_ptr<const StoredAnswer> ResponseCache::Find(const std::string& group_name,
                                                        const std::string& key, TimePoint now,
                                                        std::chrono::milliseconds max_age) {
    std::lock_guard lock(mutex_);
    const auto g = groups_.find(group_name);
    if (g == groups_.end()) return nullptr;
    Group& group = g->second;
    const auto found = group.index.find(key);
    if (found == group.index.end()) return nullptr;
    const auto it = found->second;
    if (now - it->stored > max_age) {
        Erase(group, it);
        return nullptr;
    }
    group.recent.splice(group.recent.begin(), group.recent, it);
    return it->answer;
}

void ResponseCache::Put(const std::string& group_name, const std::string& key,
                        std::shared_ptr<const StoredAnswer> answer, TimePoint now,
                        std::size_t max_entries) {
    if (max_entries == 0 || answer == nullptr) return;
    std::lock_guard lock(mutex_);
    Group& group = groups_[group_name];
    if (const auto found = group.index.find(key); found != group.index.end()) {
        Erase(group, found->second);
    }
    while (group.recent.size() >= max_entries) Erase(group, std::prev(group.recent.end()));
    bytes_ += answer->Bytes();
    ++entries_;
    group.recent.push_front(Entry{key, std::move(answer), now});
    group.index.emplace(key, group.recent.begin());
}

std::size_t ResponseCache::Entries() const {
    std::lock_guard lock(mutex_);
    return entries_;
}

std::size_t ResponseCache::Bytes() const {
    std::lock_guard lock(mutex_);
    return bytes_;
}

}  // namespace switchyard::answers
