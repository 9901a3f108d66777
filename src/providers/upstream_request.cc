#include "providers/upstream_request.h"

#include <boost/json.hpp>

#include "api/translate.h"
#include "core/json.h"
#include "core/version.h"

namespace switchyard::providers {
namespace {

bool Overridden(const api::RequestOverrides& overrides) {
    return (overrides.system_prompt != nullptr && overrides.system_prompt->has_value()) ||
           (overrides.params != nullptr && !overrides.params->empty()) || overrides.stream_upstream;
}

void CommonHeaders(const api::ChatRequest& request, const api::RequestOverrides& overrides,
                   UpstreamRequest& out) {
    static const std::string user_agent = std::string("switchyard/") + kVersion;
    const bool stream = request.stream || overrides.stream_upstream;
    out.headers.reserve(5);
    out.headers.emplace_back("content-type", "application/json");
    out.headers.emplace_back("accept", stream ? "text/event-stream" : "application/json");
    out.headers.emplace_back("user-agent", user_agent);
}

// A Responses request for a deployment that speaks the Responses API: the client's request with
// the deployment's model and a fallback entry's prompt (as `instructions`) and params.
UpstreamRequest ResponsesRequest(const config::Deployment& deployment,
                                 const api::ChatRequest& request, const std::string& client_body,
                                 const api::RequestOverrides& overrides) {
    UpstreamRequest out;
    out.wire = api::Wire::kResponses;
    out.target = deployment.base_url.path_prefix + "/responses";
    if (request.model == deployment.model && !request.has_gateway_fields &&
        !Overridden(overrides)) {
        out.shared = &client_body;
    } else {
        boost::json::object body = request.original;
        body["model"] = deployment.model;
        if (overrides.system_prompt != nullptr && overrides.system_prompt->has_value()) {
            body["instructions"] = **overrides.system_prompt;
        }
        if (overrides.params != nullptr) {
            for (const auto& [name, json] : *overrides.params) {
                boost::system::error_code ec;
                boost::json::value value = core::ParseJson(json, ec);
                if (ec) continue;
                // Chat's max_tokens is the Responses API's max_output_tokens.
                body[name == "max_tokens" || name == "max_completion_tokens" ? "max_output_tokens"
                                                                             : name] =
                    std::move(value);
            }
        }
        out.rendered = boost::json::serialize(body);
    }
    CommonHeaders(request, overrides, out);
    if (!deployment.api_key.Empty()) {
        out.authorization = "Bearer " + deployment.api_key.Reveal();
    }
    return out;
}

UpstreamRequest OpenAiRequest(const config::Deployment& deployment, const api::ChatRequest& request,
                              const std::string& client_body,
                              const api::RequestOverrides& overrides) {
    UpstreamRequest out;
    out.target =
        deployment.base_url.path_prefix +
        (request.endpoint == api::Endpoint::kEmbeddings ? "/embeddings" : "/chat/completions");
    if (request.wire == api::Wire::kOpenAi && request.model == deployment.model &&
        !request.has_gateway_fields && !Overridden(overrides)) {
        out.shared = &client_body;
    } else {
        out.rendered = api::RenderUpstreamBody(request, deployment.model, overrides);
    }
    CommonHeaders(request, overrides, out);
    if (!deployment.api_key.Empty()) {
        out.authorization = "Bearer " + deployment.api_key.Reveal();
    }
    return out;
}

std::variant<UpstreamRequest, core::LocalError> AnthropicRequest(
    const config::Deployment& deployment, const api::ChatRequest& request,
    const std::string& client_body, const api::RequestOverrides& overrides) {
    UpstreamRequest out;
    out.wire = api::Wire::kAnthropic;
    out.target = deployment.base_url.path_prefix + "/messages";
    if (request.wire == api::Wire::kAnthropic && !Overridden(overrides)) {
        // The client speaks Anthropic already: its request, with the deployment's model.
        if (request.model == deployment.model && !request.has_gateway_fields) {
            out.shared = &client_body;
        } else {
            const boost::json::value model(deployment.model);
            const core::MemberEdit edits[] = {{"model", &model}};
            out.rendered = core::SerializeEdited(request.original, edits);
        }
    } else {
        const std::string canonical = api::RenderUpstreamBody(request, deployment.model, overrides);
        boost::system::error_code ec;
        const boost::json::value parsed = core::ParseJson(canonical, ec);
        if (ec || !parsed.is_object()) {
            // The client's body was read with the same limits, so this cannot happen; if it
            // does, it is the client's request that cannot be carried over, not a crash.
            return core::LocalError{core::ErrorKind::kInvalidRequest,
                                    "Cannot send this request to Anthropic deployment '" +
                                        deployment.name + "': it cannot be re-encoded."};
        }
        auto translated =
            api::OpenAiRequestToAnthropic(parsed.get_object(), kDefaultAnthropicMaxTokens);
        if (auto* error = std::get_if<core::LocalError>(&translated)) {
            error->message = "Cannot send this request to Anthropic deployment '" +
                             deployment.name + "': " + error->message;
            return *error;
        }
        out.rendered = boost::json::serialize(std::get<boost::json::object>(translated));
    }
    CommonHeaders(request, overrides, out);
    out.headers.emplace_back("anthropic-version", deployment.anthropic_version);
    if (!deployment.api_key.Empty()) {
        out.headers.emplace_back("x-api-key", deployment.api_key.Reveal());
    }
    return out;
}

}  // namespace

std::variant<UpstreamRequest, core::LocalError> BuildUpstreamRequest(
    const config::Deployment& deployment, const api::ChatRequest& request,
    const std::string& client_body, const api::RequestOverrides& overrides) {
    if (request.wire == api::Wire::kResponses) {
        if (deployment.provider == config::Provider::kOpenAi && deployment.responses_api) {
            return ResponsesRequest(deployment, request, client_body, overrides);
        }
        if (request.cannot_cross) {
            core::LocalError error = *request.cannot_cross;
            error.message = "Deployment '" + deployment.name +
                            "' does not speak the Responses API: " + error.message;
            return error;
        }
    }
    switch (deployment.provider) {
        case config::Provider::kOpenAi:
            return OpenAiRequest(deployment, request, client_body, overrides);
        case config::Provider::kAnthropic:
            if (request.endpoint == api::Endpoint::kEmbeddings) {
                // The config keeps embeddings groups OpenAI-compatible; this is the last guard.
                return core::LocalError{core::ErrorKind::kInvalidRequest,
                                        "Deployment '" + deployment.name +
                                            "' speaks Anthropic's API, which has no embeddings."};
            }
            return AnthropicRequest(deployment, request, client_body, overrides);
    }
    return OpenAiRequest(deployment, request, client_body, overrides);
}

api::Wire WireOf(config::Provider provider) {
    return provider == config::Provider::kAnthropic ? api::Wire::kAnthropic : api::Wire::kOpenAi;
}

std::string_view RequestIdHeader(config::Provider provider) {
    return provider == config::Provider::kAnthropic ? "request-id" : "x-request-id";
}

}  // namespace switchyard::providers
