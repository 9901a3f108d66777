#include "api/anthropic_wire.h"

#include <boost/json.hpp>

namespace switchyard::api {

std::string_view AnthropicErrorTypeOf(unsigned status) {
    switch (status) {
        case 400:
            return "invalid_request_error";
        case 401:
            return "authentication_error";
        case 402:
            return "billing_error";
        case 403:
            return "permission_error";
        case 404:
            return "not_found_error";
        case 409:
            return "conflict_error";
        case 413:
            return "request_too_large";
        case 429:
            return "rate_limit_error";
        case 504:
            return "timeout_error";
        case 529:
            return "overloaded_error";
        default:
            // Unlisted 4xx: the type Anthropic documents for them; anything else: the generic one.
            return status >= 400 && status < 500 ? "invalid_request_error" : "api_error";
    }
}

LocalReply RenderAnthropicError(const core::LocalError& error) {
    const unsigned status = error.status != 0 ? error.status : core::StatusOf(error.kind);
    boost::json::object inner;
    inner["type"] = AnthropicErrorTypeOf(status);
    inner["message"] = error.message;
    if (!error.attempts.empty()) inner["attempts"] = AttemptsJson(error.attempts);
    boost::json::object outer{{"type", "error"}, {"error", std::move(inner)}};
    return {status, boost::json::serialize(outer)};
}

}  // namespace switchyard::api
