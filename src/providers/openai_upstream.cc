#include "providers/openai_upstream.h"

#include "core/version.h"

namespace switchyard::providers {

UpstreamRequest BuildOpenAiChat(const config::Deployment& deployment,
                                const api::ChatRequest& request, std::string client_body) {
    UpstreamRequest out;
    out.target = deployment.base_url.path_prefix + "/chat/completions";
    out.body = request.model == deployment.model ? std::move(client_body)
                                                 : api::WithModel(request, deployment.model);
    out.headers.emplace_back("content-type", "application/json");
    out.headers.emplace_back("accept", request.stream ? "text/event-stream" : "application/json");
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
