// The gateway and the mock name Anthropic's error.type for an HTTP status the same way, and both
// follow docs/providers.md#anthropic-errors. The gateway types its own errors and the upstream
// errors it translates with api::AnthropicErrorTypeOf; the mock types its fault answers with
// mock::anthropic::ErrorTypeForStatus. When they disagree, the integration tests check the
// gateway against a wire that neither Anthropic nor the gateway's own tables describe.
#include <gtest/gtest.h>

#include <string_view>
#include <utility>

#include "anthropic_wire.h"      // the mock's: tools/mock/anthropic_wire.h (sy_mock_core)
#include "api/anthropic_wire.h"  // the gateway's: src/api/anthropic_wire.h

namespace switchyard {
namespace anthropic_error_types_test {

std::string_view Gateway(int status) {
    return api::AnthropicErrorTypeOf(static_cast<unsigned>(status));
}

std::string_view Mock(int status) { return mock::anthropic::ErrorTypeForStatus(status); }

// The statuses with a row of their own in docs/providers.md#anthropic-errors.
constexpr std::pair<int, std::string_view> kDocumented[] = {
    {400, "invalid_request_error"},
    {401, "authentication_error"},
    {402, "billing_error"},
    {403, "permission_error"},
    {404, "not_found_error"},
    {409, "conflict_error"},  // newer documentation only
    {413, "request_too_large"},
    {429, "rate_limit_error"},
    {500, "api_error"},
    {504, "timeout_error"},
    {529, "overloaded_error"},
};

bool IsDocumented(int status) {
    for (const auto& [documented, type] : kDocumented) {
        if (documented == status) return true;
    }
    return false;
}

TEST(AnthropicErrorTypesTest, DocumentedStatusesHaveTheirDocumentedType) {
    for (const auto& [status, type] : kDocumented) {
        EXPECT_EQ(Gateway(status), type) << "gateway, HTTP " << status;
        EXPECT_EQ(Mock(status), type) << "mock, HTTP " << status;
    }
}

// Anthropic documents invalid_request_error for the 4xx statuses that have no row. It documents
// no type for the other 5xx: they get the generic api_error (500's "unexpected error"), and
// overloaded_error stays 529's, the API being busy for all users, which a 503 does not say.
TEST(AnthropicErrorTypesTest, StatusesWithoutARowFollowTheDocumentedRule) {
    for (int status = 400; status <= 599; ++status) {
        if (IsDocumented(status)) continue;
        const std::string_view type = status < 500 ? "invalid_request_error" : "api_error";
        EXPECT_EQ(Gateway(status), type) << "gateway, HTTP " << status;
        EXPECT_EQ(Mock(status), type) << "mock, HTTP " << status;
    }
}

TEST(AnthropicErrorTypesTest, GatewayAndMockAgreeOnEveryErrorStatus) {
    for (int status = 400; status <= 599; ++status) {
        EXPECT_EQ(Gateway(status), Mock(status)) << "HTTP " << status;
    }
}

}  // namespace anthropic_error_types_test
}  // namespace switchyard
