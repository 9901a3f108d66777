#pragma once

#include <string_view>

#include "api/local_reply.h"
#include "core/error.h"

namespace switchyard::api {

// Anthropic's error type for an HTTP status (docs/providers.md#anthropic-errors):
// 400 invalid_request_error, 401 authentication_error, 402 billing_error, 403 permission_error,
// 404 not_found_error, 409 conflict_error, 413 request_too_large, 429 rate_limit_error,
// 500 api_error, 504 timeout_error, 529 overloaded_error; any other 4xx invalid_request_error,
// any other status api_error (the same table as switchyard-mock's ErrorTypeForStatus; a unit
// test keeps the two in agreement).
std::string_view AnthropicErrorTypeOf(unsigned status);

// Anthropic's error envelope for a local error: {"type":"error","error":{"type":T,"message":M}}
// (plus "attempts" inside "error" when error.attempts is non-empty, with the same fields as the
// OpenAI rendering). Status: error.status if set, else core::StatusOf(kind); the type follows the
// status (AnthropicErrorTypeOf).
LocalReply RenderAnthropicError(const core::LocalError& error);

}  // namespace switchyard::api
