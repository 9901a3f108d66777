#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "config/config.h"
#include "fault_spec.h"
#include "policy/classify.h"
#include "policy/rate_limit_headers.h"
#include "rate_limits.h"
#include "virtual_time.h"

namespace switchyard::sim {

// How long a provider takes to answer: a log-normal distribution given by its median and 99th
// percentile (the shape LLM latencies have: a long right tail).
struct LatencyModel {
    double median_ms = 500;
    double p99_ms = 2000;
    double Draw(std::mt19937_64& rng) const;
};

// A fault of the mock's fault-spec language (docs/mock.md#faults) active over [from, to) of the
// run.
struct TimedFault {
    double from_s = 0;
    double to_s = std::numeric_limits<double>::infinity();
    std::string text;  // as written, e.g. "status=529; probability=0.5"
    mock::FaultSpec spec;
};

// One simulated provider endpoint behind a deployment.
struct ProviderModel {
    LatencyModel latency;
    std::string limits;              // the mock's --limits spec, e.g. "rpm=600"; empty: unlimited
    int max_concurrency = 0;         // more attempts in flight than this are refused as overloaded
    std::vector<TimedFault> faults;  // the first active one that applies wins
};

// What one upstream attempt got, as the gateway's attempt would read it off the wire.
struct Reply {
    milliseconds duration{0};  // from sending to the end of the answer or of the failure
    policy::Transport transport = policy::Transport::kOk;
    unsigned status = 200;
    std::string body;     // the error body of a non-2xx answer
    std::string head;     // response headers, "name: value\r\n" each
    bool stalls = false;  // never answers: only the attempt's timeout ends it
    // A stream that failed after content flowed (error_after_chunks, reset_after_chunks,
    // end_after_chunks): `stream_error` is the in-stream error event's body, if any.
    bool cut_mid_stream = false;
    std::string stream_error;
    // A stream whose head came after `duration` and whose first content event never comes
    // (stall_after_chunks=0): the first-token limit ends it.
    bool stalls_before_content = false;
    bool rate_limited = false;  // refused by the provider's own rate limits
    std::int64_t output_tokens = 0;

    // The header fields of `head`, viewing into it.
    std::vector<policy::HeaderField> Fields() const;
    std::optional<std::string_view> Header(std::string_view name) const;
};

// A provider as the mock is one (tools/mock/): the mock's rate limiter, error bodies and retry
// headers, with a latency model, a concurrency limit and faults scheduled over time.
class SimProvider final {
  public:
    SimProvider(std::string deployment, config::Provider api, ProviderModel model,
                const VirtualClock& clock, std::uint64_t seed);

    // An attempt sent now. `stream`: the request streams (mid-stream faults apply).
    Reply Call(bool stream, std::int64_t input_tokens, std::int64_t max_tokens);
    // The attempt's answer ended (or was abandoned): it no longer counts as in flight.
    void Ended() { --in_flight_; }

    const std::string& Deployment() const { return deployment_; }
    std::uint64_t Calls() const { return calls_; }
    std::uint64_t RateLimited() const { return rate_limited_; }
    std::uint64_t Failed() const { return failed_; }
    // When each attempt was sent, in seconds since the run started.
    const std::vector<double>& CallTimes() const { return call_times_; }

    // Writes a line per attempt to `trace`: seconds since the start, deployment, status.
    void Trace(std::FILE* trace) { trace_ = trace; }

  private:
    Reply Answer(bool stream, std::int64_t input_tokens, std::int64_t max_tokens);
    const TimedFault* ActiveFault();

    std::string deployment_;
    config::Provider api_;
    ProviderModel model_;
    const VirtualClock& clock_;
    std::mt19937_64 rng_;
    mock::RateLimits limits_;
    int in_flight_ = 0;
    std::uint64_t calls_ = 0;
    std::uint64_t rate_limited_ = 0;
    std::uint64_t failed_ = 0;
    std::vector<double> call_times_;
    std::FILE* trace_ = nullptr;
};

}  // namespace switchyard::sim
