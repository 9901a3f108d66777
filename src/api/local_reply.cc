#include "api/local_reply.h"

#include <boost/json.hpp>

namespace switchyard::api {
namespace {

struct OpenAiErrorShape {
    const char* type;
    const char* code;  // nullptr: JSON null
};

OpenAiErrorShape ShapeOf(core::ErrorKind kind) {
    using core::ErrorKind;
    switch (kind) {
        case ErrorKind::kMalformedJson:
        case ErrorKind::kInvalidRequest:
        case ErrorKind::kRouteNotFound:
            return {"invalid_request_error", nullptr};
        case ErrorKind::kModelNotFound:
            return {"invalid_request_error", "model_not_found"};
        case ErrorKind::kPayloadTooLarge:
            return {"invalid_request_error", "request_too_large"};
        case ErrorKind::kMethodNotAllowed:
            return {"invalid_request_error", "method_not_allowed"};
        case ErrorKind::kUnauthorized:
            return {"invalid_request_error", "invalid_api_key"};
        case ErrorKind::kForbidden:
            return {"permission_error", "admin_disabled"};
        case ErrorKind::kModelNotAllowed:
            return {"permission_error", "model_not_allowed"};
        case ErrorKind::kResidencyNotSatisfied:
            return {"permission_error", "residency_not_satisfied"};
        case ErrorKind::kIdempotencyKeyReused:
            return {"invalid_request_error", "idempotency_key_reused"};
        case ErrorKind::kIdempotencyUnavailable:
            return {"invalid_request_error", "idempotent_answer_unavailable"};
        case ErrorKind::kIdempotencyKeyInUse:
            return {"invalid_request_error", "idempotency_key_in_use"};
        case ErrorKind::kRateLimited:
            return {"rate_limit_error", "rate_limit_exceeded"};
        case ErrorKind::kBudgetExceeded:
            return {"insufficient_quota", "budget_exceeded"};
        case ErrorKind::kHeadroomExhausted:
            return {"rate_limit_error", "upstream_headroom_exhausted"};
        case ErrorKind::kUpstreamUnreachable:
            return {"upstream_error", "upstream_unreachable"};
        case ErrorKind::kUpstreamTimeout:
            return {"upstream_error", "upstream_timeout"};
        case ErrorKind::kUpstreamProtocol:
            return {"upstream_error", "upstream_protocol_error"};
        case ErrorKind::kInvalidOutput:
            return {"upstream_error", "invalid_output"};
        case ErrorKind::kUnavailable:
            return {"service_unavailable_error", "gateway_draining"};
        case ErrorKind::kOverloaded:
            return {"service_unavailable_error", "gateway_overloaded"};
        case ErrorKind::kAllAttemptsFailed:
            return {"upstream_error", "all_attempts_failed"};
        case ErrorKind::kInternal:
            return {"server_error", nullptr};
    }
    return {"server_error", nullptr};
}

}  // namespace

boost::json::array AttemptsJson(const std::vector<core::AttemptNote>& attempts) {
    boost::json::array out;
    for (const core::AttemptNote& a : attempts) {
        boost::json::object note{{"model_group", a.model_group},
                                 {"deployment", a.deployment},
                                 {"error_class", a.error_class},
                                 {"upstream_request_id", a.upstream_request_id},
                                 {"wait_ms", a.wait_ms}};
        note["status"] = a.status == 0 ? boost::json::value(nullptr) : boost::json::value(a.status);
        out.push_back(std::move(note));
    }
    return out;
}

LocalReply RenderOpenAiError(const core::LocalError& error) {
    const OpenAiErrorShape shape = ShapeOf(error.kind);
    boost::json::object inner;
    inner["message"] = error.message;
    inner["type"] = shape.type;
    if (error.param.empty()) {
        inner["param"] = nullptr;
    } else {
        inner["param"] = error.param;
    }
    if (shape.code == nullptr) {
        inner["code"] = nullptr;
    } else {
        inner["code"] = shape.code;
    }
    if (!error.attempts.empty()) inner["attempts"] = AttemptsJson(error.attempts);
    boost::json::object outer;
    outer["error"] = std::move(inner);
    return {error.status != 0 ? error.status : core::StatusOf(error.kind),
            boost::json::serialize(outer)};
}

std::string RenderOpenAiStaticCompletion(std::string_view content, long long created_unix,
                                         bool stream) {
    constexpr std::string_view kId = "chatcmpl-switchyard-degraded";
    constexpr std::string_view kModel = "switchyard-degraded";
    if (!stream) {
        boost::json::object message{{"role", "assistant"}, {"content", content}};
        boost::json::object choice{{"index", 0},
                                   {"message", std::move(message)},
                                   {"logprobs", nullptr},
                                   {"finish_reason", "stop"}};
        boost::json::object body{
            {"id", kId},
            {"object", "chat.completion"},
            {"created", created_unix},
            {"model", kModel},
            {"choices", boost::json::array{std::move(choice)}},
            {"usage", {{"prompt_tokens", 0}, {"completion_tokens", 0}, {"total_tokens", 0}}}};
        return boost::json::serialize(body);
    }
    auto chunk = [&](boost::json::object delta, boost::json::value finish) {
        boost::json::object choice{{"index", 0},
                                   {"delta", std::move(delta)},
                                   {"logprobs", nullptr},
                                   {"finish_reason", std::move(finish)}};
        boost::json::object body{{"id", kId},
                                 {"object", "chat.completion.chunk"},
                                 {"created", created_unix},
                                 {"model", kModel},
                                 {"choices", boost::json::array{std::move(choice)}}};
        return "data: " + boost::json::serialize(body) + "\n\n";
    };
    return chunk({{"role", "assistant"}, {"content", content}}, nullptr) + chunk({}, "stop") +
           "data: [DONE]\n\n";
}

}  // namespace switchyard::api
