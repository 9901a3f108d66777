#include "providers/openai_upstream.h"

#include "core/version.h"

namespace switchyard::providers {

UpstreamRequest BuildOpenAiChat(const config::Deployment& deployment,
                                const api::ChatRequest& request, const std::string& client_body,
                                const api::RequestOverrides& overrides) {
    UpstreamRequest out;
    out.target = deployment.base_url.path_prefix + "/chat/completions";
    const bool overridden =
        (overrides.system_prompt != nullptr && overrides.system_prompt->has_value()) ||
        (overrides.params != nullptr && !overrides.params->empty()) || overrides.stream_upstream;
    if (request.model == deployment.model && !request.has_gateway_fields && !overridden) {
        out.shared = &client_body;
    } else {
        out.rendered = api::RenderUpstreamBody(request, deployment.model, overrides);
    }
    out.headers.emplace_back("content-type", "application/json");
    const bool stream = request.stream || overrides.stream_upstream;
    out.headers.emplace_back("accept", stream ? "text/event-stream" : "application/json");
    out.headers.emplace_back("user-agent", std::string("switchyard/") + kVersion);
    if (!deployment.api_key.Empty()) {
        out.headers.emplace_back("authorization", "Bearer " + deployment.api_key.Reveal());
    }
    return out;
}

std::string_view RequestIdHeader(config::Provider provider) {
    switch (provider) {
        case config::Provider::kOpenAi:
            return "x-request-id";
    }
    return "x-request-id";
}

}  // namespace switchyard::providers
