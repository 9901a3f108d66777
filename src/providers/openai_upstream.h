#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/openai_chat.h"
#include "config/config.h"

namespace switchyard::providers {

// An upstream HTTP request before it meets a socket: target, extra headers, body. Host,
// Content-Length and Connection are added by the upstream client.
struct UpstreamRequest {
    std::string target;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
};

// An OpenAI chat completions call to `deployment`: the model is rewritten to the deployment's
// model (the client's bytes are forwarded untouched when it already matches), and the
// deployment's key is sent as a bearer token.
UpstreamRequest BuildOpenAiChat(const config::Deployment& deployment,
                                const api::ChatRequest& request, std::string client_body);

// The response header that carries the provider's request id (x-request-id for OpenAI,
// request-id for Anthropic).
std::string_view RequestIdHeader(config::Provider provider);

}  // namespace switchyard::providers
