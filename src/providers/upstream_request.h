#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "api/openai_chat.h"
#include "config/config.h"
#include "core/error.h"

namespace switchyard::providers {

// An upstream HTTP request before it meets a socket: target, extra headers, body. Host,
// Content-Length and Connection are added by the upstream client. The body is either rendered
// for this deployment (`rendered`) or the client's bytes, shared across attempts (`shared`).
struct UpstreamRequest {
    std::string_view method = "POST";
    std::string target;
    // Names and values that outlive the upstream call (literals, the config's strings, or the
    // attempt's own locals such as its traceparent).
    std::vector<std::pair<std::string_view, std::string_view>> headers;
    std::string authorization;  // `Authorization` value, when the deployment has an OpenAI key
    std::string rendered;
    const std::string* shared = nullptr;
    api::Wire wire = api::Wire::kOpenAi;  // the API the request (and so its answer) speaks

    std::string_view Body() const { return shared != nullptr ? *shared : rendered; }
};

// The request for `deployment` in its provider's wire format:
//  - OpenAI: POST {base}/chat/completions, `Authorization: Bearer KEY`;
//  - Anthropic: POST {base}/messages, `x-api-key: KEY`, `anthropic-version`.
// The model is rewritten to the deployment's, gateway fields removed and a fallback entry's
// `overrides` applied. When the client already speaks the deployment's API and nothing changes,
// the client's bytes (`client_body`, which must outlive the call) are forwarded untouched. A
// request that cannot be carried over to the deployment's API is a 400 naming the feature.
std::variant<UpstreamRequest, core::LocalError> BuildUpstreamRequest(
    const config::Deployment& deployment, const api::ChatRequest& request,
    const std::string& client_body, const api::RequestOverrides& overrides = {});

// The API a deployment speaks for chat (its Responses API aside).
api::Wire WireOf(config::Provider provider);

// The response header that carries the provider's request id (x-request-id for OpenAI,
// request-id for Anthropic).
std::string_view RequestIdHeader(config::Provider provider);

// Anthropic requires max_tokens; requests translated from OpenAI without one get this.
inline constexpr std::int64_t kDefaultAnthropicMaxTokens = 4096;

}  // namespace switchyard::providers
