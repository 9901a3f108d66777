#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard::mock {

// One provider request as the caller describes it to Stats::Record. Views need only live for the
// duration of the call.
struct RequestObservation final {
    std::string_view path;
    std::string_view model;  // Empty if the body had none.
    double t_ms = 0;         // Arrival, milliseconds since the Unix epoch (system clock).
    int status = 0;          // Status sent; 0 when no response was sent (reset, stall).
    std::string_view fault;  // The fault spec applied, empty if none.
    // Why the rate limiter answered 429 (RateLimitReasonName), empty if it did not.
    std::string_view rate_limit;
    std::optional<std::string_view> authorization;
    std::optional<std::string_view> retry_count;  // x-stainless-retry-count
    std::optional<std::string_view> user_agent;
    std::optional<std::string_view> content_type;
    std::optional<std::string_view> traceparent;  // W3C trace context
    std::string_view body;  // the request body; the log keeps its first kBodyPrefix bytes
};

// What the Batch APIs did, counted apart from the requests (docs/mock.md#batch-apis).
enum class BatchEvent {
    kCreated,  // a create call answered with a batch (a refused OpenAI batch included)
    kPoll,     // a GET of one batch
    kLine,     // a batch line answered as its request would have been
    kRefused,  // a creation refused by batch_refuse
};

// Counters of provider requests (not /mock/* calls), served at GET /mock/stats: totals by path
// and model, rate-limit rejections by path and reason, and the most recent kCapacity requests in
// arrival order. Thread-safe.
class Stats final {
  public:
    static constexpr std::size_t kCapacity = 10'000;
    static constexpr std::size_t kBodyPrefix = 4096;

    Stats();

    void Record(const RequestObservation& observation);
    // A client closed its connection while the response head was delayed (delay_headers_ms): it
    // gave up on the request (a gateway cancelling a hedged attempt's loser, a timeout).
    void CountClientClosed(std::string_view model);
    // Batch traffic: never part of the request counters and log above.
    void CountBatch(BatchEvent event, std::uint64_t count = 1);

    // Clears every counter and the request log; sequence numbers start again at 1.
    void Reset();

    // The GET /mock/stats body.
    std::string ToJson() const;

  private:
    struct Entry {
        std::uint64_t seq = 0;
        std::string path;
        std::string model;
        double t_ms = 0;
        int status = 0;
        std::string fault;
        std::string rate_limit;
        std::optional<std::string> authorization;
        std::optional<std::string> retry_count;
        std::optional<std::string> user_agent;
        std::optional<std::string> content_type;
        std::optional<std::string> traceparent;
        std::string body;
    };

    mutable std::mutex mutex_;
    std::uint64_t total_ = 0;
    std::map<std::string, std::uint64_t, std::less<>> paths_;
    std::map<std::string, std::uint64_t, std::less<>> models_;
    std::uint64_t rate_limited_ = 0;
    std::map<std::string, std::uint64_t, std::less<>> rate_limited_paths_;
    std::map<std::string, std::uint64_t, std::less<>> rate_limited_reasons_;
    std::uint64_t client_closed_ = 0;
    std::map<std::string, std::uint64_t, std::less<>> client_closed_models_;
    std::uint64_t batches_created_ = 0;
    std::uint64_t batch_polls_ = 0;
    std::uint64_t batch_lines_ = 0;
    std::uint64_t batches_refused_ = 0;
    // Ring buffer: slot seq % kCapacity holds request `seq`. Slots are overwritten in place so
    // their strings keep their capacity.
    std::vector<Entry> log_;
};

}  // namespace switchyard::mock
