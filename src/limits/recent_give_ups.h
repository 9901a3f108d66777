#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string_view>
#include <unordered_map>

namespace switchyard::limits {

// The requests Switchyard recently gave up on, by fingerprint (the client's credential, the route
// and the body): the same request arriving again within `window` is a client's retry even when it
// carries no retry header (the Vercel AI SDK sends none and ignores x-should-retry). The handler
// then serves it as an SDK retry — one attempt per target that can serve now, no waits — so a
// retry layer above adds at most one upstream call per retry. Bounded: at most `capacity`
// fingerprints, the oldest forgotten first. Time comes from the caller. Thread-safe; a lookup
// while nothing is remembered takes no lock.
class RecentGiveUps final {
  public:
    using TimePoint = std::chrono::steady_clock::time_point;

    RecentGiveUps(std::size_t capacity, std::chrono::milliseconds window)
        : capacity_(capacity), window_(window) {}

    // The fingerprint of a request: a 64-bit hash, not a digest (a collision makes one request a
    // retry: fewer retries for it, nothing worse).
    static std::uint64_t Fingerprint(std::string_view credential, std::string_view route,
                                     std::string_view body);

    // Switchyard gave up on the request with `fingerprint` at `now`.
    void Note(std::uint64_t fingerprint, TimePoint now);
    // Whether it gave up on that request within the window before `now`.
    bool Recent(std::uint64_t fingerprint, TimePoint now) const;
    // Whether anything is remembered (a request need not be fingerprinted otherwise).
    bool Empty() const { return count_.load(std::memory_order_relaxed) == 0; }
    std::size_t Size() const;

  private:
    void Forget(TimePoint now);

    const std::size_t capacity_;
    const std::chrono::milliseconds window_;
    mutable std::mutex mutex_;
    std::unordered_map<std::uint64_t, TimePoint> last_;      // each fingerprint's latest give-up
    std::deque<std::pair<TimePoint, std::uint64_t>> order_;  // every note, oldest first
    std::atomic<std::size_t> count_{0};
};

}  // namespace switchyard::limits
