#include "policy/classify.h"

#include <boost/json.hpp>

#include "core/json.h"
#include "policy/retry_after.h"

namespace switchyard::policy {
namespace {

// The fields of either provider's error envelope that decide a class.
struct ErrorFields {
    std::string code;     // OpenAI error.code, Anthropic error.details.error_code
    std::string type;     // error.type
    std::string message;  // error.message
};

std::string StringAt(const boost::json::object& o, std::string_view key) {
    const boost::json::value* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

ErrorFields ReadError(std::string_view body) {
    ErrorFields f;
    boost::system::error_code ec;
    const boost::json::value parsed = core::ParseJson(body, ec);
    if (ec || !parsed.is_object()) return f;
    const boost::json::object* root = &parsed.get_object();
    // The Responses API's stream: a failed response carries its error inside.
    if (const boost::json::value* response = root->if_contains("response");
        response != nullptr && response->is_object()) {
        root = &response->get_object();
    }
    const boost::json::value* error = root->if_contains("error");
    if (error == nullptr && StringAt(*root, "type") == "error") {
        // The Responses API's flat error event: {"type":"error","code","message","param"}.
        f.code = StringAt(*root, "code");
        f.message = StringAt(*root, "message");
        return f;
    }
    if (error == nullptr || !error->is_object()) return f;
    const boost::json::object& e = error->get_object();
    f.code = StringAt(e, "code");
    f.type = StringAt(e, "type");
    f.message = StringAt(e, "message");
    if (const boost::json::value* details = e.if_contains("details");
        details && details->is_object()) {
        if (std::string code = StringAt(details->get_object(), "error_code"); !code.empty()) {
            f.code = std::move(code);
        }
    }
    return f;
}

bool IsQuota(const ErrorFields& f) {
    return f.code == "enforced_spend_limit_reached" || f.code == "insufficient_quota" ||
           f.code == "organization_spend_limit_exceeded" ||
           f.code == "project_spend_limit_exceeded" || f.code == "credit_balance_exhausted" ||
           f.type == "insufficient_quota" || f.type == "billing_error";
}

bool IsContextWindow(const ErrorFields& f) {
    return f.code == "context_length_exceeded" || f.message.starts_with("prompt is too long") ||
           f.message.find("maximum context length") != std::string::npos ||
           f.message.find("exceed context limit") != std::string::npos;
}

bool IsContentPolicy(const ErrorFields& f) {
    return f.code == "content_filter" || f.code == "content_policy_violation";
}

Outcome FromStatus(unsigned status, const ErrorFields& f) {
    if (status >= 200 && status < 300) return {Action::kSuccess, ErrorClass::kNone};
    if (status == 402 || (status == 429 && IsQuota(f))) {
        return {Action::kFailOver, ErrorClass::kQuotaExhausted};
    }
    if (status == 429) return {Action::kRetry, ErrorClass::kRateLimited};
    if (status == 504) return {Action::kRetry, ErrorClass::kTimeout};
    if (status == 529 || status == 503) return {Action::kRetry, ErrorClass::kOverloaded};
    if (status >= 500) {
        if (f.type == "overloaded_error") return {Action::kRetry, ErrorClass::kOverloaded};
        return {Action::kRetry, ErrorClass::kServerError};
    }
    if (status == 408 || status == 409) return {Action::kRetry, ErrorClass::kRetryableClient};
    if (status == 400 || status == 413 || status == 422) {
        if (IsContextWindow(f)) {
            return {Action::kContextFallback, ErrorClass::kContextWindow};
        }
        if (IsContentPolicy(f)) return {Action::kContentFallback, ErrorClass::kContentPolicy};
        return {Action::kGiveUp, ErrorClass::kBadRequest};
    }
    if (status == 401 || status == 403) return {Action::kGiveUp, ErrorClass::kAuth};
    if (status == 404) return {Action::kGiveUp, ErrorClass::kNotFound};
    return {Action::kGiveUp, ErrorClass::kBadRequest};
}

}  // namespace

unsigned StatusOfStreamError(std::string_view event_json) {
    const ErrorFields f = ReadError(event_json);
    if (f.type == "overloaded_error") return 529;
    if (f.type == "service_unavailable_error" || f.code == "server_is_overloaded") return 503;
    if (f.type == "rate_limit_error" || f.code == "rate_limit_exceeded" || f.type == "requests" ||
        f.type == "tokens") {
        return 429;
    }
    if (IsQuota(f)) return 429;
    if (f.type == "timeout_error") return 504;
    if (f.type == "invalid_request_error") return 400;
    if (f.type == "authentication_error") return 401;
    if (f.type == "permission_error") return 403;
    if (f.type == "not_found_error") return 404;
    return 500;
}

Outcome Classify(const AttemptResult& r, std::chrono::system_clock::time_point now) {
    switch (r.transport) {
        case Transport::kOk:
            break;
        case Transport::kConnect:
            return {Action::kFailOver, ErrorClass::kConnection};
        case Transport::kTls:
            return {Action::kFailOver, ErrorClass::kTls};
        case Transport::kReset:
            return {Action::kRetry, ErrorClass::kConnection};
        case Transport::kTimeout:
            return {Action::kRetry, ErrorClass::kTimeout};
        case Transport::kProtocol:
            return {Action::kFailOver, ErrorClass::kProtocol};
        case Transport::kTruncated:
            return {Action::kRetry, ErrorClass::kProtocol};
        case Transport::kLocal:
            // Every other target would hit the same local limit: answered at once, retry soon.
            return {Action::kGiveUp, ErrorClass::kLocal, std::chrono::milliseconds(1000)};
    }
    const bool success = r.status >= 200 && r.status < 300;
    Outcome outcome = FromStatus(r.status, success ? ErrorFields{} : ReadError(r.body));
    if (success) return outcome;
    outcome.retry_after = ParseRetryAfter(r.retry_after_ms, r.retry_after, now);
    // x-should-retry overrides the status (both Stainless SDKs honour it the same way).
    if (r.should_retry == "true" && outcome.action == Action::kGiveUp) {
        outcome = {Action::kRetry, ErrorClass::kRetryableClient, outcome.retry_after};
    } else if (r.should_retry == "false" && outcome.action == Action::kRetry) {
        outcome.action = Action::kFailOver;
    }
    return outcome;
}

std::string_view Name(ErrorClass c) {
    switch (c) {
        case ErrorClass::kNone:
            return "none";
        case ErrorClass::kRateLimited:
            return "rate_limited";
        case ErrorClass::kQuotaExhausted:
            return "quota_exhausted";
        case ErrorClass::kOverloaded:
            return "overloaded";
        case ErrorClass::kServerError:
            return "server_error";
        case ErrorClass::kTimeout:
            return "timeout";
        case ErrorClass::kConnection:
            return "connection";
        case ErrorClass::kTls:
            return "tls";
        case ErrorClass::kContextWindow:
            return "context_window";
        case ErrorClass::kContentPolicy:
            return "content_policy";
        case ErrorClass::kRetryableClient:
            return "retryable_client";
        case ErrorClass::kBadRequest:
            return "bad_request";
        case ErrorClass::kAuth:
            return "auth";
        case ErrorClass::kNotFound:
            return "not_found";
        case ErrorClass::kProtocol:
            return "protocol";
        case ErrorClass::kInvalidOutput:
            return "invalid_output";
        case ErrorClass::kLocal:
            return "local";
    }
    return "unknown";
}

std::optional<ErrorClass> ErrorClassNamed(std::string_view name) {
    for (std::size_t i = 0; i < kErrorClassCount; ++i) {
        const auto c = static_cast<ErrorClass>(i);
        if (Name(c) == name) return c;
    }
    return std::nullopt;
}

std::string_view Name(Action a) {
    switch (a) {
        case Action::kSuccess:
            return "success";
        case Action::kRetry:
            return "retry";
        case Action::kFailOver:
            return "fail_over";
        case Action::kGiveUp:
            return "give_up";
        case Action::kContextFallback:
            return "context_fallback";
        case Action::kContentFallback:
            return "content_fallback";
    }
    return "unknown";
}

}  // namespace switchyard::policy
