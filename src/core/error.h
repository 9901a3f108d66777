#pragma once

#include <string>

namespace switchyard::core {

// What went wrong with a request that the gateway answers itself (a local reply). The kind decides
// the status code and the wire-format error type; api/local_reply.cc is the one place that maps it.
enum class ErrorKind {
    kMalformedJson,        // body is not JSON, or not a JSON object
    kInvalidRequest,       // well-formed JSON that the gateway cannot serve as is
    kModelNotFound,        // missing or unknown model group
    kPayloadTooLarge,      // body over server.max_body_bytes
    kMethodNotAllowed,     // known path, wrong method
    kRouteNotFound,        // unknown path
    kUnauthorized,         // missing or wrong key
    kUpstreamUnreachable,  // connect / TLS / reset before a response: 502
    kUpstreamTimeout,      // no (complete) response in time: 504
    kUpstreamProtocol,     // upstream answered something that is not HTTP we understand: 502
    kUnavailable,          // gateway is draining: 503
    kInternal,
};

// A local error: its kind, a message for the client (never a secret or prompt text), and an
// optional offending parameter name.
struct LocalError {
    ErrorKind kind = ErrorKind::kInternal;
    std::string message;
    std::string param;
};

// The HTTP status a local error is answered with.
unsigned StatusOf(ErrorKind kind);

}  // namespace switchyard::core
