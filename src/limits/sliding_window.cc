#include "limits/sliding_window.h"

#include <algorithm>

namespace switchyard::limits {
namespace {

std::int64_t FloorDiv(std::int64_t a, std::int64_t b) {
    const std::int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

std::int64_t FloorMod(std::int64_t a, std::int64_t b) { return a - FloorDiv(a, b) * b; }

}  // namespace

SlidingWindow::SlidingWindow(std::chrono::milliseconds window, int slots) {
    const std::int64_t n = std::max(1, slots);
    const std::int64_t window_ns = std::chrono::nanoseconds(window).count();
    // Rounding the slot up makes `slots` slots cover at least the window, which the guarantee
    // needs.
    slot_ns_ = std::max<std::int64_t>(1, (window_ns + n - 1) / n);
    span_ = n + 1;
    counts_.assign(static_cast<std::size_t>(span_), 0);
}

std::int64_t SlidingWindow::SlotOf(TimePoint t) const {
    return FloorDiv(std::chrono::nanoseconds(t.time_since_epoch()).count(), slot_ns_);
}

std::int64_t SlidingWindow::CurrentSlot(TimePoint now) const {
    return std::max(SlotOf(now), head_);
}

std::int64_t& SlidingWindow::Count(std::int64_t slot) {
    return counts_[static_cast<std::size_t>(FloorMod(slot, span_))];
}

std::int64_t SlidingWindow::Count(std::int64_t slot) const {
    return counts_[static_cast<std::size_t>(FloorMod(slot, span_))];
}

void SlidingWindow::Advance(TimePoint now) {
    const std::int64_t current = CurrentSlot(now);
    if (current == head_) return;
    if (head_ == kNoSlot || current - head_ >= span_) {
        std::fill(counts_.begin(), counts_.end(), 0);
        total_ = 0;
    } else {
        for (std::int64_t slot = head_ + 1; slot <= current; ++slot) {
            total_ -= Count(slot);  // the ring entry still holds slot - span_
            Count(slot) = 0;
        }
    }
    head_ = current;
}

std::int64_t SlidingWindow::Used(TimePoint now) const {
    if (head_ == kNoSlot) return 0;
    const std::int64_t current = CurrentSlot(now);
    if (current - head_ >= span_) return 0;
    std::int64_t used = total_;
    for (std::int64_t slot = head_ + 1; slot <= current; ++slot) used -= Count(slot);
    return used;
}

SlidingWindow::Decision SlidingWindow::TryAdd(std::int64_t cost, std::int64_t limit,
                                              TimePoint now) {
    if (limit <= 0) return {false, std::chrono::milliseconds::max()};
    // A cost over the limit counts as the limit: it fills the window alone, and no sum overflows.
    cost = std::clamp<std::int64_t>(cost, 0, limit);
    Advance(now);
    if (total_ + cost <= limit || total_ == 0) {
        Count(head_) += cost;
        total_ += cost;
        return {true, std::chrono::milliseconds(0)};
    }
    // Entering slot head_ + k drops slot head_ + k - span_ from the count. Find the first k after
    // which the cost fits (or the window is empty); k == span_ empties it, so the loop ends.
    std::int64_t remaining = total_;
    for (std::int64_t k = 1; k <= span_; ++k) {
        remaining -= Count(head_ + k - span_);
        if (remaining + cost <= limit || remaining == 0) {
            const std::chrono::nanoseconds opens((head_ + k) * slot_ns_);
            return {false, std::chrono::ceil<std::chrono::milliseconds>(
                               opens - std::chrono::nanoseconds(now.time_since_epoch()))};
        }
    }
    return {false, std::chrono::milliseconds::max()};  // unreachable: k == span_ empties the window
}

void SlidingWindow::Adjust(std::int64_t delta, TimePoint at, TimePoint now) {
    Advance(now);
    const std::int64_t slot = std::min(SlotOf(at), head_);
    if (slot <= head_ - span_) return;
    std::int64_t& count = Count(slot);
    const std::int64_t adjusted = std::max<std::int64_t>(0, count + delta);
    total_ += adjusted - count;
    count = adjusted;
}

}  // namespace switchyard::limits
