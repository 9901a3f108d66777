#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <vector>

namespace switchyard::limits {

using TimePoint = std::chrono::steady_clock::time_point;

// An exact per-window limit for one client key ("at most N tokens per minute"). Counts what was
// admitted in `slots` sub-buckets of window/slots each (rounded up to whole nanoseconds) and
// admits a cost only when the total counted plus the cost stays <= limit. To be conservative the
// count spans one extra slot (the current, partly elapsed one plus `slots` full ones before it),
// so in ANY real interval of length `window`, closed at both ends, the admitted total never exceeds
// the limit; the price is that an admission may wait up to one slot longer than a perfectly exact
// log would make it. Memory is O(slots), time per call amortised O(1) (O(slots) to compute a
// retry_after). Pure and not thread-safe: the owner serialises access and passes the time in.
// A time earlier than one already seen counts as that later time.
class SlidingWindow final {
  public:
    struct Decision {
        bool admitted = false;
        std::chrono::milliseconds retry_after{0};  // 0 when admitted
    };

    // Preconditions: window > 0, slots >= 1 (a smaller count is taken as 1).
    explicit SlidingWindow(std::chrono::milliseconds window = std::chrono::minutes(1),
                           int slots = 600);

    // Admits `cost` (adding it at `now`) if Used(now) + cost <= limit; otherwise admits nothing and
    // says exactly how long until enough old slots expire for it to fit: a TryAdd of the same cost
    // at now + retry_after succeeds and one a millisecond earlier does not, if nothing else is
    // added meanwhile. A cost larger than the limit counts as the limit: it waits until the window
    // is empty and is then admitted, so a single request larger than the limit is not blocked
    // forever (and fills the window). A limit <= 0 admits nothing (retry_after is
    // milliseconds::max()). A negative cost counts as 0.
    Decision TryAdd(std::int64_t cost, std::int64_t limit, TimePoint now);
    // Reconciles an earlier admission made at `at` by `delta` (may be negative: the request used
    // less than it reserved); ignored when that slot has already left the window. Never lets a slot
    // go below zero.
    void Adjust(std::int64_t delta, TimePoint at, TimePoint now);
    // The total counted at `now`.
    std::int64_t Used(TimePoint now) const;

  private:
    static constexpr std::int64_t kNoSlot = std::numeric_limits<std::int64_t>::min();

    std::int64_t SlotOf(TimePoint t) const;
    // The slot `now` counts in: its own, or the newest seen if time ran backwards.
    std::int64_t CurrentSlot(TimePoint now) const;
    std::int64_t& Count(std::int64_t slot);
    std::int64_t Count(std::int64_t slot) const;
    // Moves head_ to CurrentSlot(now), clearing the slots that left the window.
    void Advance(TimePoint now);

    std::int64_t slot_ns_;
    std::int64_t span_;                 // slots counted: `slots` + 1
    std::vector<std::int64_t> counts_;  // ring of span_ slots, head_ - span_ + 1 .. head_
    std::int64_t head_ = kNoSlot;       // the newest slot, kNoSlot before the first call
    std::int64_t total_ = 0;            // sum of counts_
};

}  // namespace switchyard::limits
