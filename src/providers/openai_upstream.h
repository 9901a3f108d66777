#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/openai_chat.h"
#include "config/config.h"

namespace switchyard::providers {

// An upstream HTTP request before it meets a socket: target, extra headers, body. Host,
// Content-Length and Connection are added by the upstream client. The body is either rendered
// for this deployment (`rendered`) or the client's bytes, shared across attempts (`shared`).
struct UpstreamRequest {
    std::string target;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string rendered;
    const std::string* shared = nullptr;

    std::string_view Body() const { return shared != nullptr ? *shared : rendered; }
};

// An OpenAI chat completions call to `deployment`: the model is rewritten to the deployment's
// model, gateway fields are removed and `overrides` applied; when none of that changes anything
// the client's bytes (`client_body`, which must outlive the call) are forwarded untouched. The
// deployment's key is sent as a bearer token.
UpstreamRequest BuildOpenAiChat(const config::Deployment& deployment,
                                const api::ChatRequest& request, const std::string& client_body,
                                const api::RequestOverrides& overrides = {});

// The response header that carries the provider's request id (x-request-id for OpenAI,
// request-id for Anthropic).
std::string_view RequestIdHeader(config::Provider provider);

}  // namespace switchyard::providers
