#include "api/local_reply.h"

#include <boost/json.hpp>

#include "api/anthropic_wire.h"
#include "api/responses.h"
#include "api/translate.h"
#include "api/whole_answer.h"
#include "core/json.h"
#include "core/sse_parser.h"

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

LocalReply RenderError(Wire front, const core::LocalError& error) {
    return front == Wire::kAnthropic ? RenderAnthropicError(error) : RenderOpenAiError(error);
}

std::string StreamErrorEvent(Wire front, std::string_view message, std::int64_t sequence) {
    if (front == Wire::kResponses) {
        return ResponsesErrorEvent("stream_interrupted", message, sequence);
    }
    if (front == Wire::kAnthropic) {
        boost::json::object error{
            {"type", "api_error"},
            {"message", message},
            {"details", boost::json::object{{"error_code", "stream_interrupted"}}}};
        return "event: error\ndata: " +
               boost::json::serialize(
                   boost::json::object{{"type", "error"}, {"error", std::move(error)}}) +
               "\n\n";
    }
    boost::json::object error{{"message", message},
                              {"type", "upstream_error"},
                              {"param", nullptr},
                              {"code", "stream_interrupted"}};
    return "data: " + boost::json::serialize(boost::json::object{{"error", std::move(error)}}) +
           "\n\n";
}

namespace {

// Switchyard's own OpenAI stream, whole, through a stream translator.
template <typename Translator>
std::string TranslateStream(Translator& translate, const std::string& openai) {
    core::SseParser sse;
    core::SseEvent event;
    std::string out;
    sse.Feed(openai);
    while (sse.Next(event)) translate.Feed(event.name, event.data, out);
    return out;
}

}  // namespace

std::string RenderDegradation(Wire front, std::string_view content, std::int64_t created,
                              bool stream, const boost::json::object& request) {
    std::string openai = RenderOpenAiStaticCompletion(content, created, stream);
    if (front == Wire::kAnthropic) {
        if (!stream) {
            // Switchyard's own completion: plain text, which Anthropic's API always expresses.
            return std::get<std::string>(
                TranslateWholeAnswer(openai, 200, Wire::kOpenAi, Wire::kAnthropic, created));
        }
        OpenAiToAnthropicStream translate;
        return TranslateStream(translate, openai);
    }
    if (front == Wire::kResponses) {
        if (!stream) {
            // Switchyard's own completion: always a JSON object.
            boost::system::error_code ec;
            const boost::json::value completion = core::ParseJson(openai, ec);
            return boost::json::serialize(
                ChatAnswerToResponse(completion.as_object(), request, created));
        }
        ChatToResponsesStream translate(request, created);
        return TranslateStream(translate, openai);
    }
    return openai;
}

}  // namespace switchyard::api
