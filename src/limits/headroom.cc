#include "limits/headroom.h"

#include <algorithm>

namespace switchyard::limits {
namespace {

using std::chrono::milliseconds;

// How often a lane that has to yield looks again.
constexpr milliseconds kYieldPoll{20};

// The share of a provider's rate the buckets refill at: the rest absorbs the jitter between our
// clock and the provider's, so a bucket drained to zero here is not one request short there.
constexpr double kRefillMargin = 0.95;

// How much later than our reservation a provider may count the request (a new connection, a TLS
// handshake, a busy worker): a reservation that finds a bucket full holds its refill back this
// long, as the provider's bucket, still full, gains nothing until the request arrives.
constexpr milliseconds kTransit{50};

// The refill period of a bucket holding `burst` worth of a per-minute limit.
milliseconds RefillPeriod(milliseconds burst) {
    return std::chrono::ceil<milliseconds>(
        std::chrono::duration<double, std::milli>(burst.count() / kRefillMargin));
}

// A deployment entry's bucket by its name in a BucketDemand (const or not, as the entry is).
template <class Entry>
auto& BucketNamed(Entry& e, std::string_view name) {
    if (name == "requests") return e.requests;
    if (name == "tokens") return e.tokens;
    if (name == "input_tokens") return e.input_tokens;
    return e.output_tokens;
}

// Takes a request about to be sent from a deployment's buckets (and its lane's ramp, if any).
template <class Entry>
void TakeOnSend(Entry& e, TokenBucket* ramped, const HeadroomCost& cost, TimePoint now) {
    if (ramped != nullptr) ramped->Take(cost.requests, now, kTransit);
    e.requests.Take(cost.requests, now, kTransit);
    e.tokens.Take(cost.tokens, now, kTransit);
    e.input_tokens.Take(cost.input_tokens, now, kTransit);
}

// The floor a lane with `share` leaves in `bucket`.
double FloorOf(const TokenBucket& bucket, double share) {
    return bucket.Limited() ? bucket.Capacity() * (1 - share) : 0;
}

}  // namespace

HeadroomCost CostOf(config::Provider provider, std::int64_t input_estimate,
                    std::int64_t max_tokens) {
    HeadroomCost cost;
    if (provider == config::Provider::kOpenAi) {
        cost.tokens = static_cast<double>(std::max(max_tokens, input_estimate));
    } else {
        cost.input_tokens = static_cast<double>(input_estimate);
        cost.output = true;
    }
    return cost;
}

Headroom::Headroom(const config::Config& config, TimePoint now) : burst_(config.limits.burst) {
    entries_.resize(config.deployment_count);
    for (const auto& group : config.models) {
        for (const auto& d : group.deployments) {
            auto entry = std::make_unique<Entry>();
            entry->provider = d.provider;
            entry->requests = Bucket(d.limits.rpm, now);
            entry->tokens = Bucket(d.limits.tpm, now);
            entry->input_tokens = Bucket(d.limits.itpm, now);
            entry->output_tokens = Bucket(d.limits.otpm, now);
            entry->ramps.resize(config.limits.lanes.size());
            entries_[d.index] = std::move(entry);
        }
    }
}

void Headroom::CarryOver(const Headroom& old, std::size_t from, std::size_t to) {
    const Entry& source = *old.entries_[from];
    Entry& target = *entries_[to];
    std::scoped_lock lock(source.mutex, target.mutex);
    if (source.provider != target.provider) return;
    // A bucket whose configured limit changed starts afresh under the new one.
    const auto carry = [](TokenBucket& to_bucket, const TokenBucket& from_bucket) {
        if (to_bucket.Capacity() == from_bucket.Capacity()) to_bucket = from_bucket;
    };
    carry(target.requests, source.requests);
    carry(target.tokens, source.tokens);
    carry(target.input_tokens, source.input_tokens);
    carry(target.output_tokens, source.output_tokens);
}

TokenBucket Headroom::Bucket(std::int64_t per_minute, TimePoint now) const {
    if (per_minute <= 0) return {};
    const double capacity = static_cast<double>(per_minute) * burst_.count() /
                            milliseconds(std::chrono::minutes(1)).count();
    return TokenBucket(capacity, RefillPeriod(burst_), now);
}

TokenBucket* Headroom::Ramp(Entry& e, std::size_t lane, double ramp, TimePoint now) const {
    if (lane >= e.ramps.size()) return nullptr;
    if (ramp >= 1 || !e.requests.Limited()) {
        e.ramps[lane] = TokenBucket();  // ramped up: the next ramp starts afresh
        return nullptr;
    }
    // The ramp's bucket follows the deployment's capacity scaled by the ramp, refilling at the
    // same scaled rate; it starts full when the ramp starts.
    TokenBucket& ramped = e.ramps[lane];
    const double capacity = e.requests.Capacity() * ramp;
    if (!ramped.Limited()) {
        ramped = TokenBucket(capacity, RefillPeriod(burst_), now);
    } else {
        ramped.Correct(capacity, std::nullopt, now);
    }
    return &ramped;
}

milliseconds Headroom::TryReserve(std::size_t index, const HeadroomCost& cost, double share,
                                  TimePoint now, std::size_t lane, double ramp) {
    Entry& e = *entries_[index];
    std::lock_guard lock(e.mutex);
    const bool any_limited = e.requests.Limited() || e.tokens.Limited() ||
                             e.input_tokens.Limited() || e.output_tokens.Limited();
    if (!any_limited) return milliseconds(0);
    if (share <= 0) return kYieldPoll;  // a lane with a larger share is waiting
    milliseconds wait{0};
    const auto need = [&](const TokenBucket& bucket, double amount) {
        if (bucket.Limited())
            wait = std::max(wait, bucket.TimeUntil(amount, now, FloorOf(bucket, share)));
    };
    need(e.requests, cost.requests);
    need(e.tokens, cost.tokens);
    need(e.input_tokens, cost.input_tokens);
    // Output is charged after the answer; sending needs a level above the lane's floor.
    if (cost.output) need(e.output_tokens, 1);
    TokenBucket* ramped = Ramp(e, lane, ramp, now);
    if (ramped != nullptr) wait = std::max(wait, ramped->TimeUntil(cost.requests, now));
    if (wait > milliseconds(0)) return wait;
    TakeOnSend(e, ramped, cost, now);
    return milliseconds(0);
}

milliseconds Headroom::Spacing(std::size_t index, const HeadroomCost& cost, TimePoint now,
                               std::size_t lane, double ramp) {
    Entry& e = *entries_[index];
    std::lock_guard lock(e.mutex);
    milliseconds spacing =
        std::max({e.requests.TimeToRefill(cost.requests), e.tokens.TimeToRefill(cost.tokens),
                  e.input_tokens.TimeToRefill(cost.input_tokens)});
    if (const TokenBucket* ramped = Ramp(e, lane, ramp, now)) {
        spacing = std::max(spacing, ramped->TimeToRefill(cost.requests));
    }
    return spacing;
}

BucketDemand Headroom::Demand(std::string_view name, const TokenBucket& bucket) const {
    BucketDemand demand;
    demand.name = name;
    demand.capacity = bucket.Capacity();
    demand.period = RefillPeriod(burst_);
    return demand;
}

milliseconds Headroom::Demands(std::size_t index, const HeadroomCost& cost, double share,
                               TimePoint now, std::size_t lane, double ramp,
                               std::vector<BucketDemand>& out) {
    out.clear();
    Entry& e = *entries_[index];
    std::lock_guard lock(e.mutex);
    const bool any_limited = e.requests.Limited() || e.tokens.Limited() ||
                             e.input_tokens.Limited() || e.output_tokens.Limited();
    if (!any_limited) return milliseconds(0);
    if (share <= 0) return kYieldPoll;
    if (TokenBucket* ramped = Ramp(e, lane, ramp, now)) {
        if (const milliseconds wait = ramped->TimeUntil(cost.requests, now); wait > milliseconds(0))
            return wait;
    }
    const auto add = [&](std::string_view name, const TokenBucket& bucket, double need,
                         double take) {
        if (!bucket.Limited()) return;
        BucketDemand demand = Demand(name, bucket);
        demand.need = need;
        demand.take = take;
        demand.floor = FloorOf(bucket, share);
        demand.transit = kTransit;
        out.push_back(demand);
    };
    add("requests", e.requests, cost.requests, cost.requests);
    add("tokens", e.tokens, cost.tokens, cost.tokens);
    add("input_tokens", e.input_tokens, cost.input_tokens, cost.input_tokens);
    if (cost.output) add("output_tokens", e.output_tokens, 1, 0);
    return milliseconds(0);
}

void Headroom::Reserved(std::size_t index, const HeadroomCost& cost, TimePoint now,
                        std::size_t lane, double ramp) {
    Entry& e = *entries_[index];
    std::lock_guard lock(e.mutex);
    TakeOnSend(e, Ramp(e, lane, ramp, now), cost, now);
}

void Headroom::Cancel(std::size_t index, const HeadroomCost& cost, TimePoint now) {
    Entry& e = *entries_[index];
    std::lock_guard lock(e.mutex);
    e.requests.Give(cost.requests, now);
    e.tokens.Give(cost.tokens, now);
    e.input_tokens.Give(cost.input_tokens, now);
}

std::vector<BucketDemand> Headroom::Reconciliation(const Entry& e, const HeadroomCost& cost,
                                                   bool answered, std::int64_t input_tokens,
                                                   std::int64_t output_tokens) const {
    std::vector<BucketDemand> takes;
    const auto take = [&](std::string_view name, double amount) {
        BucketDemand demand;
        demand.name = name;
        demand.take = amount;
        takes.push_back(demand);
    };
    if (!answered) {
        // The request stays counted (providers count failed requests too); its tokens do not.
        take("tokens", -cost.tokens);
        take("input_tokens", -cost.input_tokens);
        return takes;
    }
    if (e.provider == config::Provider::kOpenAi) {
        if (input_tokens >= 0 && output_tokens >= 0) {
            take("tokens", static_cast<double>(input_tokens + output_tokens) - cost.tokens);
        }
        return takes;
    }
    if (input_tokens >= 0) {
        take("input_tokens", static_cast<double>(input_tokens) - cost.input_tokens);
    }
    if (output_tokens > 0) take("output_tokens", static_cast<double>(output_tokens));
    return takes;
}

namespace {

// Applies a take (negative: gives back) to a bucket.
void ApplyTake(TokenBucket& bucket, double amount, TimePoint now) {
    if (amount > 0) {
        bucket.Take(amount, now);
    } else if (amount < 0) {
        bucket.Give(-amount, now);
    }
}

}  // namespace

void Headroom::Settle(std::size_t index, const HeadroomCost& cost, bool answered,
                      std::int64_t input_tokens, std::int64_t output_tokens, TimePoint now) {
    Entry& e = *entries_[index];
    std::lock_guard lock(e.mutex);
    for (const BucketDemand& d : Reconciliation(e, cost, answered, input_tokens, output_tokens)) {
        ApplyTake(BucketNamed(e, d.name), d.take, now);
    }
}

std::vector<BucketDemand> Headroom::SettleDemands(std::size_t index, const HeadroomCost& cost,
                                                  bool answered, std::int64_t input_tokens,
                                                  std::int64_t output_tokens) const {
    const Entry& e = *entries_[index];
    std::lock_guard lock(e.mutex);
    std::vector<BucketDemand> out;
    for (BucketDemand d : Reconciliation(e, cost, answered, input_tokens, output_tokens)) {
        const TokenBucket& bucket = BucketNamed(e, d.name);
        if (!bucket.Limited() || d.take == 0) continue;
        const double take = d.take;
        d = Demand(d.name, bucket);
        d.take = take;
        out.push_back(d);
    }
    return out;
}

std::vector<BucketDemand> Headroom::CancelDemands(std::size_t index,
                                                  const HeadroomCost& cost) const {
    const Entry& e = *entries_[index];
    std::lock_guard lock(e.mutex);
    std::vector<BucketDemand> out;
    const auto give = [&](std::string_view name, const TokenBucket& bucket, double amount) {
        if (!bucket.Limited() || amount == 0) return;
        BucketDemand d = Demand(name, bucket);
        d.take = -amount;
        out.push_back(d);
    };
    give("requests", e.requests, cost.requests);
    give("tokens", e.tokens, cost.tokens);
    give("input_tokens", e.input_tokens, cost.input_tokens);
    return out;
}

std::vector<BucketDemand> Headroom::CorrectionDemands(
    std::size_t index, const policy::RateLimitHeaders& headers) const {
    const Entry& e = *entries_[index];
    std::lock_guard lock(e.mutex);
    std::vector<BucketDemand> out;
    const auto report = [&](std::string_view name, const TokenBucket& bucket,
                            const policy::RateLimitWindow& window, double rounding) {
        if (!bucket.Limited() || !window.remaining) return;
        BucketDemand d = Demand(name, bucket);
        d.take = static_cast<double>(*window.remaining) + (rounding > 1 ? rounding / 2 : 0);
        out.push_back(d);
    };
    report("requests", e.requests, headers.requests, 1);
    if (e.provider == config::Provider::kOpenAi) {
        report("tokens", e.tokens, headers.tokens, 1);
    } else {
        report("input_tokens", e.input_tokens, headers.input_tokens, 1000);
        report("output_tokens", e.output_tokens, headers.output_tokens, 1);
    }
    return out;
}

void Headroom::CorrectBucket(TokenBucket& bucket, const policy::RateLimitWindow& window,
                             TimePoint now, double rounding) const {
    if (!window.limit && !window.remaining) return;
    const double per_burst =
        static_cast<double>(burst_.count()) / milliseconds(std::chrono::minutes(1)).count();
    std::optional<double> limit;
    if (window.limit && *window.limit > 0) limit = static_cast<double>(*window.limit) * per_burst;
    std::optional<double> remaining;
    if (!bucket.Limited() && !limit) return;  // a level without a limit says nothing
    if (window.remaining) {
        // Reports arrive out of order (responses to concurrent requests), so one may be older
        // than the level here: a report only ever lowers it. Refill and reconciliation raise it.
        // A rounded count stands for up to half a unit more.
        remaining = static_cast<double>(*window.remaining) + (rounding > 1 ? rounding / 2 : 0);
        if (bucket.Limited()) remaining = std::min(*remaining, bucket.Level(now));
    }
    bucket.Correct(limit, remaining, now, RefillPeriod(burst_));
}

void Headroom::Correct(std::size_t index, const policy::RateLimitHeaders& headers, TimePoint now) {
    Entry& e = *entries_[index];
    std::lock_guard lock(e.mutex);
    CorrectBucket(e.requests, headers.requests, now);
    if (e.provider == config::Provider::kOpenAi) {
        CorrectBucket(e.tokens, headers.tokens, now);
    } else {
        CorrectBucket(e.input_tokens, headers.input_tokens, now, /*rounding=*/1000);
        CorrectBucket(e.output_tokens, headers.output_tokens, now);
    }
}

Headroom::View Headroom::Snapshot(std::size_t index, TimePoint now) const {
    const Entry& e = *entries_[index];
    std::lock_guard lock(e.mutex);
    const auto view = [&](const TokenBucket& b) {
        return BucketView{b.Limited(), b.Limited() ? b.Capacity() : 0,
                          b.Limited() ? b.Level(now) : 0};
    };
    return {view(e.requests), view(e.tokens), view(e.input_tokens), view(e.output_tokens)};
}

}  // namespace switchyard::limits
