#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "policy/outcome.h"

namespace switchyard::policy {

// How an attempt ended at the transport level, before any HTTP status.
enum class Transport {
    kOk,        // a complete HTTP response header arrived
    kConnect,   // name resolution or connect failed
    kTls,       // TLS handshake or certificate verification failed
    kReset,     // the connection broke before a complete response
    kTimeout,   // connect, first byte or total timeout
    kProtocol,  // the upstream did not speak HTTP we understand
    // The answer ended before it was complete: a 200 whose JSON body does not parse (or is no
    // object), a stream that ended without its end event.
    kTruncated,
    // The gateway could not even try: out of file descriptors or memory for a connection.
    kLocal,
};

// One attempt's result as the classifier sees it: no sockets, just what arrived.
struct AttemptResult {
    Transport transport = Transport::kOk;
    unsigned status = 0;
    std::string_view body;  // the error body of a non-2xx answer, either provider's format
    std::optional<std::string_view> retry_after;
    std::optional<std::string_view> retry_after_ms;
    std::optional<std::string_view> should_retry;  // x-should-retry
};

// Judges one attempt (docs/resilience.md#classify-before-retrying,
// docs/providers.md#anthropic-errors, docs/providers.md#openai-errors). Pure: `now` only resolves
// HTTP-date retry-after values.
//  - 2xx: success.
//  - 429 spend/quota (Anthropic error.details.error_code enforced_spend_limit_reached, OpenAI
//    insufficient_quota / *_spend_limit_exceeded / credit_balance_exhausted) and 402: fail over,
//    never retried on this deployment.
//  - 429 otherwise: rate limited, retry (retry-after is a minimum).
//  - 500, 502, 503, 529 and other 5xx: retry with backoff; 504 is a timeout (retried once).
//  - 408, 409: retry.
//  - 400 context_length_exceeded / "prompt is too long": context fallback; content_filter /
//    content_policy_violation: content fallback; other 4xx: give up, the answer is the client's.
//  - x-should-retry: true makes a give-up retryable (class retryable_client); false stops
//    retries of this deployment.
//  - transport: connect failures and TLS failures fail over; resets and timeouts retry; a truncated
//    answer is a protocol failure that may be retried (class_retries.protocol); a local failure
//    (the gateway out of file descriptors) gives up at once with a 1 s retry-after, no deployment
//    to blame.
Outcome Classify(const AttemptResult& result, std::chrono::system_clock::time_point now);

// The HTTP status an error event inside a 200 stream stands for, from its error type or code
// (Anthropic `event: error` with overloaded_error is a 529; OpenAI's server_is_overloaded a 503;
// rate limits 429; api_error / server_error 500; timeout_error 504; invalid_request_error 400),
// so that a stream failing before its commit point is classified like any other answer.
unsigned StatusOfStreamError(std::string_view event_json);

}  // namespace switchyard::policy
