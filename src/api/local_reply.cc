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
        case ErrorKind::kUpstreamUnreachable:
            return {"upstream_error", "upstream_unreachable"};
        case ErrorKind::kUpstreamTimeout:
            return {"upstream_error", "upstream_timeout"};
        case ErrorKind::kUpstreamProtocol:
            return {"upstream_error", "upstream_protocol_error"};
        case ErrorKind::kUnavailable:
            return {"service_unavailable_error", "gateway_draining"};
        case ErrorKind::kInternal:
            return {"server_error", nullptr};
    }
    return {"server_error", nullptr};
}

}  // namespace

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
    boost::json::object outer;
    outer["error"] = std::move(inner);
    return {core::StatusOf(error.kind), boost::json::serialize(outer)};
}

}  // namespace switchyard::api
