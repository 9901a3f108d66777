#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace switchyard::observe {

// Everything the gateway writes about one finished downstream request: one metrics update and
// one access log line. Views point into the request's own state and are only read during the
// call they are passed to.
struct RequestRecord {
    std::chrono::system_clock::time_point start;
    std::string_view method;
    std::string_view path;
    std::string_view route;        // chat, models, health, metrics, not_found
    std::string_view model_group;  // empty when none was resolved
    std::string_view deployment;   // the deployment that served, empty for local replies
    std::string_view region;       // that deployment's region, empty when it has none
    std::string_view key;          // the client key's name, empty without one
    std::string_view lane;         // the workload lane, empty for non-chat routes
    unsigned status = 0;
    double latency_seconds = 0;
    std::string_view upstream_request_id;
    std::size_t bytes_in = 0;
    std::size_t bytes_out = 0;
    bool stream = false;
    std::int64_t input_tokens = -1;  // as reported by the provider; -1 when unknown
    std::int64_t output_tokens = -1;
    double cost_usd = 0;         // the tokens at the serving deployment's prices
    std::string_view error;      // local error or stream failure, empty when none
    int attempts = 0;            // upstream attempts made
    int fallback_depth = 0;      // position in the fallback chain of the group that answered
    int client_retry_count = 0;  // x-stainless-retry-count: the client SDK retrying on top
    // A repeat of a request Switchyard just gave up on, without a retry header: served as a retry.
    bool client_repeat = false;
    // The serving (or last) attempt went to a benched deployment, tried because nothing else
    // could serve (docs/resilience.md#a-bench-is-a-preference).
    bool panic = false;
    // A hedge was sent (docs/resilience.md#hedged-attempts), and whether it answered.
    bool hedged = false;
    bool hedge_answered = false;
};

}  // namespace switchyard::observe
