#include "core/error.h"

namespace switchyard::core {

unsigned StatusOf(ErrorKind kind) {
    switch (kind) {
        case ErrorKind::kMalformedJson:
        case ErrorKind::kInvalidRequest:
            return 400;
        case ErrorKind::kUnauthorized:
            return 401;
        case ErrorKind::kForbidden:
        case ErrorKind::kModelNotAllowed:
        case ErrorKind::kResidencyNotSatisfied:
            return 403;
        case ErrorKind::kRateLimited:
        case ErrorKind::kBudgetExceeded:
        case ErrorKind::kHeadroomExhausted:
            return 429;
        case ErrorKind::kModelNotFound:
        case ErrorKind::kRouteNotFound:
            return 404;
        case ErrorKind::kIdempotencyUnavailable:
        case ErrorKind::kIdempotencyKeyInUse:
            return 409;
        case ErrorKind::kIdempotencyKeyReused:
            return 422;
        case ErrorKind::kMethodNotAllowed:
            return 405;
        case ErrorKind::kPayloadTooLarge:
            return 413;
        case ErrorKind::kUpstreamUnreachable:
        case ErrorKind::kUpstreamProtocol:
        case ErrorKind::kInvalidOutput:
            return 502;
        case ErrorKind::kUnavailable:
        case ErrorKind::kOverloaded:
            return 503;
        case ErrorKind::kUpstreamTimeout:
            return 504;
        case ErrorKind::kAllAttemptsFailed:
            return 502;
        case ErrorKind::kInternal:
            return 500;
    }
    return 500;
}

}  // namespace switchyard::core
