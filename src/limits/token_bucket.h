#pragma once

#include <chrono>
#include <optional>

namespace switchyard::limits {

using TimePoint = std::chrono::steady_clock::time_point;

// A continuously refilling token bucket: `capacity` tokens, refilled at `capacity` per `period`
// (a provider's "N per minute" limit). The level may go negative (debt) after an unconditional Take
// or an oversized request; it then refills through zero as usual. A default-constructed bucket is
// unlimited: every take succeeds, TimeUntil is 0, Level and Capacity read as +infinity.
// Pure and not thread-safe: the owner serialises access and passes the time in. A time earlier than
// one already seen refills nothing (the bucket never runs backwards).
class TokenBucket final {
  public:
    TokenBucket() = default;
    // Starts full. Preconditions: capacity > 0, period > 0.
    TokenBucket(double capacity, std::chrono::milliseconds period, TimePoint now);

    bool Limited() const { return limited_; }
    double Capacity() const;
    // The level refilled up to `now`: never above capacity, negative while in debt.
    double Level(TimePoint now) const;

    // Takes `cost` when the level after taking stays >= `floor` (a floor lets a lower-priority user
    // leave a reserve for others). A cost larger than capacity - floor is admitted when the bucket
    // is full (level == capacity), so a huge request is not starved forever; it then goes into
    // debt.
    bool TryTake(double cost, TimePoint now, double floor = 0);
    // How long until TryTake(cost, ., floor) would succeed, assuming nothing else changes the
    // bucket; 0 when it would succeed now. Rounded up to whole milliseconds, so a TryTake at
    // now + TimeUntil(...) succeeds.
    std::chrono::milliseconds TimeUntil(double cost, TimePoint now, double floor = 0) const;
    // How long the bucket takes to refill `amount` (0 when unlimited): the spacing of requests
    // of that cost once it is empty.
    std::chrono::milliseconds TimeToRefill(double amount) const;
    // Takes `cost` unconditionally (a request already sent); may go into debt. A take that finds
    // the bucket full holds the refill back for `transit`: the provider's bucket, full as well,
    // loses its refill until the request reaches it, which may be that much later.
    void Take(double cost, TimePoint now, std::chrono::milliseconds transit = {});
    // Returns `amount` tokens (reconciliation: a request used less than it reserved); the level
    // stays capped at capacity.
    void Give(double amount, TimePoint now);

    // Corrects the bucket from a provider's report (rate-limit response headers). `limit`, a
    // per-period limit, replaces the capacity when present (the period, and so the meaning of
    // "per", is kept; the level is clamped to a lowered capacity). `remaining` replaces the level
    // when present, clamped to at most the capacity. On an unlimited bucket a report with a limit
    // makes it limited with `period`, full unless `remaining` says otherwise; a report without one
    // changes nothing. A limit <= 0 is not credible and is ignored.
    void Correct(std::optional<double> limit, std::optional<double> remaining, TimePoint now,
                 std::chrono::milliseconds period = std::chrono::minutes(1));

  private:
    // Brings level_ up to date at `now` (the later of now and last_).
    void Refill(TimePoint now);
    // Slack for floating-point rounding in the refill arithmetic, so a take that is due by the
    // exact arithmetic is not refused by a rounding error of a few ulps.
    double Tolerance() const;
    // A level within Tolerance() of a whole number of tokens is that number: repeated refills
    // otherwise leave 0.999... where the exact arithmetic says 1.
    double Snap(double level) const;

    bool limited_ = false;
    double capacity_ = 0;
    std::chrono::nanoseconds period_{0};
    double level_ = 0;  // at last_
    TimePoint last_{};
};

}  // namespace switchyard::limits
