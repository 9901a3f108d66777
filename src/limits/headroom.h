#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "limits/token_bucket.h"
#include "policy/rate_limit_headers.h"

namespace switchyard::limits {

// What one request is expected to cost a deployment's rate limits, reserved before it is sent.
struct HeadroomCost {
    double requests = 1;
    double tokens = 0;        // OpenAI TPM: max(max_tokens, input estimate)
    double input_tokens = 0;  // Anthropic ITPM: the input estimate
    bool output = false;      // Anthropic OTPM: needs output headroom; charged after the answer
};

// One bucket of a reservation as a store shared by replicas checks it
// (docs/state.md#what-is-shared-and-how-exactly): its capacity and refill period as this replica
// knows them, what must fit above the floor, and what is taken (negative: given back).
struct BucketDemand {
    std::string_view name;  // requests, tokens, input_tokens, output_tokens
    double capacity = 0;
    std::chrono::milliseconds period{0};
    double need = 0;
    double take = 0;
    double floor = 0;
    // A take that finds the bucket full holds its refill back this long (TokenBucket::Take).
    std::chrono::milliseconds transit{0};
};

// How a provider counts a request of `input_estimate` tokens with `max_tokens` (0: absent).
HeadroomCost CostOf(config::Provider provider, std::int64_t input_estimate,
                    std::int64_t max_tokens);

// Each deployment's headroom (docs/resilience.md#provider-limits,
// docs/resilience.md#headroom-and-lanes): token buckets for requests and tokens (OpenAI RPM/TPM) or
// requests, input and output tokens (Anthropic RPM/ITPM/OTPM), seeded from the configured limits
// and corrected by the provider's rate-limit headers on every response. A bucket holds what the
// provider may enforce over `burst` (60 RPM as 1 per second) and refills at 95 % of the per-minute
// rate. Unknown limits are unlimited until a response reports them. Thread-safe: one mutex per
// deployment.
class Headroom final {
  public:
    using TimePoint = std::chrono::steady_clock::time_point;

    struct BucketView {
        bool limited = false;
        double capacity = 0;
        double level = 0;
    };
    struct View {
        BucketView requests, tokens, input_tokens, output_tokens;
    };

    Headroom(const config::Config& config, TimePoint now);

    // Reserves `cost` on deployment `index` for `lane` when every bucket keeps at least
    // (1 - share) of its capacity for other lanes afterwards and, while the lane ramps up
    // (`ramp` < 1), the lane's requests stay within `ramp` of the deployment's request rate.
    // Returns 0 when reserved; otherwise nothing is taken and the result says how long until it
    // would fit.
    std::chrono::milliseconds TryReserve(std::size_t index, const HeadroomCost& cost, double share,
                                         TimePoint now, std::size_t lane = 0, double ramp = 1);
    // How far apart requests of `cost` for `lane` can be sent once the buckets are empty: the
    // slowest limited bucket's time to refill that cost (the lane's slow-start bucket included).
    // 0 when nothing is limited. Predictive shedding spaces a lane's queue by it.
    std::chrono::milliseconds Spacing(std::size_t index, const HeadroomCost& cost, TimePoint now,
                                      std::size_t lane = 0, double ramp = 1);
    // A reservation that was not used (the attempt never left): everything goes back.
    void Cancel(std::size_t index, const HeadroomCost& cost, TimePoint now);
    // After an attempt: tokens counted at reservation are reconciled with the usage the provider
    // reported (-1: unknown, the estimate stands; a failed attempt returns its tokens). The request
    // itself stays counted: providers count failed requests too.
    void Settle(std::size_t index, const HeadroomCost& cost, bool answered,
                std::int64_t input_tokens, std::int64_t output_tokens, TimePoint now);
    // The provider's report on a response: its limit replaces the capacity, and its remaining
    // count lowers the level (never raises it: reports of concurrent requests arrive out of order).
    void Correct(std::size_t index, const policy::RateLimitHeaders& headers, TimePoint now);

    View Snapshot(std::size_t index, TimePoint now) const;

    // For a store shared by replicas, which holds the levels while this replica keeps the
    // capacities, the lanes' shares and ramps:
    //  - Demands: what TryReserve would check, as demands on the limited buckets (none: nothing
    //    is limited), after the parts only this replica decides (a lane that must yield, a
    //    ramp); a wait > 0 from those parts is returned and `out` is left empty;
    //  - Reserved: the shared store reserved it: taken here too, unconditionally, so this
    //    replica's own view stays current should it have to decide alone;
    //  - SettleDemands and CancelDemands: what Settle and Cancel give back or take, as takes;
    //  - CorrectionDemands: the provider's reported remaining counts (as `take`), per bucket.
    std::chrono::milliseconds Demands(std::size_t index, const HeadroomCost& cost, double share,
                                      TimePoint now, std::size_t lane, double ramp,
                                      std::vector<BucketDemand>& out);
    void Reserved(std::size_t index, const HeadroomCost& cost, TimePoint now, std::size_t lane,
                  double ramp);
    std::vector<BucketDemand> SettleDemands(std::size_t index, const HeadroomCost& cost,
                                            bool answered, std::int64_t input_tokens,
                                            std::int64_t output_tokens) const;
    std::vector<BucketDemand> CancelDemands(std::size_t index, const HeadroomCost& cost) const;
    std::vector<BucketDemand> CorrectionDemands(std::size_t index,
                                                const policy::RateLimitHeaders& headers) const;

    // A config reload: deployment `to` takes over the buckets `old` kept for its deployment
    // `from` (the same name and provider) whose capacity did not change.
    void CarryOver(const Headroom& old, std::size_t from, std::size_t to);

  private:
    struct Entry {
        mutable std::mutex mutex;
        config::Provider provider = config::Provider::kOpenAi;
        TokenBucket requests;
        TokenBucket tokens;
        TokenBucket input_tokens;
        TokenBucket output_tokens;
        // Per lane: its own request bucket at `ramp` of the deployment's, while it ramps up.
        std::vector<TokenBucket> ramps;
    };
    TokenBucket Bucket(std::int64_t per_minute, TimePoint now) const;
    // The ramp bucket of `lane` at `ramp` (null: not ramping), brought up to date.
    TokenBucket* Ramp(Entry& e, std::size_t lane, double ramp, TimePoint now) const;
    // A demand on `bucket` (limited) with this replica's capacity and refill period.
    BucketDemand Demand(std::string_view name, const TokenBucket& bucket) const;
    // What a settlement takes from each bucket (negative: gives back), on a locked entry.
    std::vector<BucketDemand> Reconciliation(const Entry& e, const HeadroomCost& cost,
                                             bool answered, std::int64_t input_tokens,
                                             std::int64_t output_tokens) const;
    // `rounding`: the provider rounds `remaining` to this many (Anthropic: input tokens to the
    // nearest thousand), so a report only moves the level into the interval it stands for.
    void CorrectBucket(TokenBucket& bucket, const policy::RateLimitWindow& window, TimePoint now,
                       double rounding = 1) const;

    std::chrono::milliseconds burst_;
    std::vector<std::unique_ptr<Entry>> entries_;
};

}  // namespace switchyard::limits
