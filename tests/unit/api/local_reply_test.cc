#include "api/local_reply.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace switchyard::api {
namespace {

using core::ErrorKind;

struct Expected {
    ErrorKind kind;
    unsigned status;
    const char* type;
    const char* code;  // nullptr: JSON null
};

TEST(LocalReplyTest, MapsEveryKindToStatusAndOpenAiEnvelope) {
    const Expected cases[] = {
        {ErrorKind::kMalformedJson, 400, "invalid_request_error", nullptr},
        {ErrorKind::kInvalidRequest, 400, "invalid_request_error", nullptr},
        {ErrorKind::kUnauthorized, 401, "invalid_request_error", "invalid_api_key"},
        {ErrorKind::kModelNotFound, 404, "invalid_request_error", "model_not_found"},
        {ErrorKind::kRouteNotFound, 404, "invalid_request_error", nullptr},
        {ErrorKind::kMethodNotAllowed, 405, "invalid_request_error", "method_not_allowed"},
        {ErrorKind::kPayloadTooLarge, 413, "invalid_request_error", "request_too_large"},
        {ErrorKind::kUpstreamUnreachable, 502, "upstream_error", "upstream_unreachable"},
        {ErrorKind::kUpstreamProtocol, 502, "upstream_error", "upstream_protocol_error"},
        {ErrorKind::kUnavailable, 503, "service_unavailable_error", "gateway_draining"},
        {ErrorKind::kUpstreamTimeout, 504, "upstream_error", "upstream_timeout"},
        {ErrorKind::kInternal, 500, "server_error", nullptr},
    };
    for (const Expected& e : cases) {
        const LocalReply reply = RenderOpenAiError({e.kind, "msg \"quoted\"", ""});
        EXPECT_EQ(reply.status, e.status);
        const auto body = boost::json::parse(reply.body).as_object();
        ASSERT_EQ(body.size(), 1u);
        const auto& error = body.at("error").as_object();
        EXPECT_EQ(error.at("message").as_string(), "msg \"quoted\"");
        EXPECT_EQ(error.at("type").as_string(), e.type);
        EXPECT_TRUE(error.at("param").is_null());
        if (e.code == nullptr) {
            EXPECT_TRUE(error.at("code").is_null()) << e.status;
        } else {
            EXPECT_EQ(error.at("code").as_string(), e.code);
        }
    }
}

TEST(LocalReplyTest, CarriesTheParameter) {
    const LocalReply reply = RenderOpenAiError({ErrorKind::kModelNotFound, "no", "model"});
    EXPECT_EQ(boost::json::parse(reply.body).at("error").at("param").as_string(), "model");
}

}  // namespace
}  // namespace switchyard::api
