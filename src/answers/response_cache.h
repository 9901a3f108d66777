#pragma once

#include <chrono>
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "answers/stored_answer.h"

namespace switchyard::answers {

// Answers kept per model group (docs/answers.md#response-cache), least recently used first out:
// each group holds at most its configured number of entries, each entry at most the configured
// size, so memory is bounded by the config. Time comes from the caller. Thread-safe.
class ResponseCache final {
  public:
    using TimePoint = std::chrono::steady_clock::time_point;

    // The answer stored under `key` in `group` at most `max_age` ago (null: none).
    std::shared_ptr<const StoredAnswer> Find(const std::string& group, const std::string& key,
                                             TimePoint now, std::chrono::milliseconds max_age);
    // Stores `answer`; the group's least recently used entries go past `max_entries`.
    void Put(const std::string& group, const std::string& key,
             std::shared_ptr<const StoredAnswer> answer, TimePoint now, std::size_t max_entries);

    std::size_t Entries() const;
    std::size_t Bytes() const;

  private:
    struct Entry {
        std::string key;
        std::shared_ptr<const StoredAnswer> answer;
        TimePoint stored;
    };
    struct Group {
        std::list<Entry> recent;  // most recently used first
        std::unordered_map<std::string, std::list<Entry>::iterator> index;
    };

    void Erase(Group& group, std::list<Entry>::iterator it);

    mutable std::mutex mutex_;
    std::unordered_map<std::string, Group> groups_;
    std::size_t entries_ = 0;
    std::size_t bytes_ = 0;
};

}  // namespace switchyard::answers
