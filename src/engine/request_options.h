#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <variant>

#include "config/config.h"
#include "core/error.h"
#include "engine/attempt_state.h"
#include "routing/residency.h"

namespace switchyard::engine {

// The request's headers as the options read them: a value by lowercase name, nullopt if absent.
using HeaderLookup = std::function<std::optional<std::string_view>(std::string_view name)>;

// How one request is served: the config's settings with the request's and the client key's own
// applied.
struct RequestOptions {
    EnginePolicy policy;
    std::chrono::milliseconds deadline;  // from the request's arrival, every attempt and wait in
    config::Timeouts timeouts;
    bool background = false;       // stream mode: hold the whole stream, retry any failure
    bool stream_upstream = false;  // a JSON request streamed upstream and assembled
    bool fallbacks = true;         // walk the fallback chain
    int client_retry_count = 0;    // x-stainless-retry-count: the client SDK's own retry number
    // The regions it may be served in, from the header and the key (the requested groups' own
    // constraints are added when the chain is planned); nullopt: any.
    routing::Regions residency;
};

// Reads the options (pure). Headers, each ignored when malformed unless said otherwise:
//  - x-switchyard-deadline-ms / x-switchyard-timeout-total-ms: the request's deadline (named after
//    the Vercel AI SDK's totalMs), at most 10 minutes;
//  - x-switchyard-timeout-step-ms: one attempt's total time (stepMs);
//  - x-switchyard-timeout-chunk-ms: between stream events, and at most that to the first token
//    (chunkMs);
//  - x-switchyard-stream-mode: interactive | background (over the key's and the server's mode);
//    any other value is refused: the result is then an invalid-request error naming the header;
//  - x-switchyard-stream-upstream: 1 streams a JSON request upstream (also when max_tokens is over
//    timeouts.stream_upstream_over_max_tokens);
//  - x-switchyard-no-fallbacks: 1 (or a key with `fallbacks: false`) keeps to the requested groups;
//  - x-switchyard-residency: eu[, us...]: the regions it may be served in (with the key's
//    `residency`, the narrower of the two); a malformed value is refused like a stream mode;
//  - x-stainless-retry-count ≥ 1: the client SDK is retrying a request the gateway already
//    retried, so this one makes one attempt per target that can serve now and never waits for a
//    rate limit (docs/resilience.md#one-layer-retries).
// `key` is the client key's policy, or null.
std::variant<RequestOptions, core::LocalError> ReadRequestOptions(const config::Config& config,
                                                                  const HeaderLookup& header,
                                                                  const config::ClientKey* key,
                                                                  bool stream,
                                                                  std::int64_t max_tokens);

// A header's value as a non-negative integer; -1 when absent or malformed.
int HeaderInt(const HeaderLookup& header, std::string_view name);

}  // namespace switchyard::engine
