#pragma once

#include <string>
#include <vector>

namespace switchyard::core {

// What went wrong with a request that the gateway answers itself (a local reply). The kind decides
// the status code and the wire-format error type; api/local_reply.cc is the one place that maps it.
enum class ErrorKind {
    kMalformedJson,           // body is not JSON, or not a JSON object
    kInvalidRequest,          // well-formed JSON that the gateway cannot serve as is
    kModelNotFound,           // missing or unknown model group
    kPayloadTooLarge,         // body over server.max_body_bytes
    kMethodNotAllowed,        // known path, wrong method
    kRouteNotFound,           // unknown path
    kUnauthorized,            // missing or wrong key
    kForbidden,               // the endpoint is switched off
    kModelNotAllowed,         // the client key may not use the model group: 403
    kResidencyNotSatisfied,   // no deployment of the chain is in an allowed region: 403
    kIdempotencyKeyReused,    // an idempotency key sent again with another body: 422
    kIdempotencyUnavailable,  // the key's request ran; its answer was too large to keep: 409
    kIdempotencyKeyInUse,     // the key's request still runs past this one's deadline: 409
    kRateLimited,             // the client key is over its RPM or TPM: 429
    kBudgetExceeded,          // the client key spent its monthly budget: 429
    kHeadroomExhausted,       // no deployment has headroom within the deadline, or the lane's queue
                              // is full: 429
    kUpstreamUnreachable,     // connect / TLS / reset before a response: 502
    kUpstreamTimeout,         // no (complete) response in time: 504
    kUpstreamProtocol,        // upstream answered something that is not HTTP we understand: 502
    kInvalidOutput,           // the answer does not match the requested JSON schema: 502
    kUnavailable,             // gateway is draining: 503
    kOverloaded,              // the gateway is at a limit of its own (file descriptors, memory
                              // for request bodies): 503, retry shortly
    kAllAttemptsFailed,       // every target of the fallback chain failed (status: the last one's)
    kInternal,
};

// One upstream attempt as an error body lists it.
struct AttemptNote {
    std::string model_group;
    std::string deployment;
    unsigned status = 0;  // 0: no HTTP answer (transport failure)
    std::string error_class;
    std::string upstream_request_id;
    long long wait_ms = 0;  // waited before this attempt
};

// A local error: its kind, a message for the client (never a secret or prompt text), and an
// optional offending parameter name.
struct LocalError {
    ErrorKind kind = ErrorKind::kInternal;
    std::string message;
    std::string param;
    unsigned status = 0;                // overrides StatusOf(kind) when set
    std::vector<AttemptNote> attempts;  // what was tried, for kAllAttemptsFailed
};

// The HTTP status a local error is answered with.
unsigned StatusOf(ErrorKind kind);

}  // namespace switchyard::core
