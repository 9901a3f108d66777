#include "batches/provider_lines.h"

#include <boost/json.hpp>
#include <charconv>

#include "api/local_reply.h"
#include "api/translate.h"

namespace switchyard::batches {
namespace {

namespace json = boost::json;

constexpr std::int64_t kDefaultMaxTokens = 4096;  // Anthropic requires max_tokens

bool Anthropic(const config::Deployment& deployment) {
    return deployment.provider == config::Provider::kAnthropic;
}

}  // namespace

bool ProviderTakes(const config::Deployment& deployment, Api api, std::string_view endpoint) {
    if (deployment.provider == config::Provider::kOpenAi) {
        return api == Api::kAnthropic || BatchableEndpoint(endpoint);
    }
    if (Anthropic(deployment)) return api == Api::kAnthropic || endpoint == "/v1/chat/completions";
    return false;
}

std::variant<std::string, core::LocalError> ProviderBody(const config::Deployment& deployment,
                                                         Api api, const InputLine& line) {
    boost::system::error_code ec;
    json::value parsed = json::parse(line.body, ec);
    if (ec || !parsed.is_object()) {
        return core::LocalError{core::ErrorKind::kMalformedJson, "The request is not JSON."};
    }
    json::object body = std::move(parsed.as_object());
    body.erase("models");
    body.erase("fallbacks");
    const bool to_anthropic = Anthropic(deployment);
    if (api == Api::kOpenAi && to_anthropic) {
        auto translated = api::OpenAiRequestToAnthropic(body, kDefaultMaxTokens);
        if (auto* error = std::get_if<core::LocalError>(&translated)) return *error;
        body = std::move(std::get<json::object>(translated));
    } else if (api == Api::kAnthropic && !to_anthropic) {
        auto translated = api::AnthropicRequestToOpenAi(body);
        if (auto* error = std::get_if<core::LocalError>(&translated)) return *error;
        body = std::move(std::get<json::object>(translated));
    }
    body["model"] = deployment.model;
    body.erase("stream");
    return json::serialize(body);
}

std::string ProviderCustomId(std::int64_t line) { return "l" + std::to_string(line); }

std::optional<std::int64_t> LineOfProviderId(std::string_view id) {
    if (id.size() < 2 || id[0] != 'l') return std::nullopt;
    std::int64_t n = -1;
    const auto [ptr, ec] = std::from_chars(id.data() + 1, id.data() + id.size(), n);
    if (ec != std::errc() || ptr != id.data() + id.size() || n < 0) return std::nullopt;
    return n;
}

std::optional<ProviderResult> ReadProviderResult(const config::Deployment& deployment,
                                                 std::string_view text) {
    boost::system::error_code ec;
    const json::value value = json::parse(text, ec);
    if (ec || !value.is_object()) return std::nullopt;
    const json::object& o = value.as_object();
    const json::value* id = o.if_contains("custom_id");
    if (id == nullptr || !id->is_string()) return std::nullopt;
    const std::optional<std::int64_t> line = LineOfProviderId(id->as_string());
    if (!line) return std::nullopt;
    ProviderResult out;
    out.line = *line;
    if (Anthropic(deployment)) {
        const json::value* result = o.if_contains("result");
        if (result == nullptr || !result->is_object()) return std::nullopt;
        const json::object& r = result->as_object();
        const json::value* type = r.if_contains("type");
        if (type == nullptr || !type->is_string()) return std::nullopt;
        const std::string_view kind = type->as_string();
        if (kind == "succeeded" && r.contains("message")) {
            out.status = 200;
            out.body = json::serialize(r.at("message"));
        } else if (kind == "errored" && r.contains("error")) {
            const json::value& error = r.at("error");
            const json::value* inner =
                error.is_object() ? error.as_object().if_contains("error") : nullptr;
            const json::value* inner_type = inner != nullptr && inner->is_object()
                                                ? inner->as_object().if_contains("type")
                                                : nullptr;
            const std::string_view t = inner_type != nullptr && inner_type->is_string()
                                           ? std::string_view(inner_type->as_string())
                                           : std::string_view("api_error");
            out.status = t == "invalid_request_error"  ? 400
                         : t == "authentication_error" ? 401
                         : t == "permission_error"     ? 403
                         : t == "not_found_error"      ? 404
                         : t == "request_too_large"    ? 413
                         : t == "rate_limit_error"     ? 429
                         : t == "overloaded_error"     ? 529
                                                       : 500;
            out.body = json::serialize(error);
        } else if (kind == "canceled") {
            out.unrun = Unrun::kCanceled;
        } else if (kind == "expired") {
            out.unrun = Unrun::kExpired;
        } else {
            return std::nullopt;
        }
        return out;
    }
    const json::value* response = o.if_contains("response");
    if (response != nullptr && response->is_object()) {
        const json::object& r = response->as_object();
        const json::value* status = r.if_contains("status_code");
        if (status == nullptr || !status->is_int64()) return std::nullopt;
        out.status = static_cast<unsigned>(status->as_int64());
        if (const json::value* rid = r.if_contains("request_id"); rid && rid->is_string()) {
            out.request_id = std::string(rid->as_string());
        }
        out.body = r.contains("body") ? json::serialize(r.at("body")) : std::string("{}");
        return out;
    }
    const json::value* error = o.if_contains("error");
    const json::value* code =
        error != nullptr && error->is_object() ? error->as_object().if_contains("code") : nullptr;
    if (code != nullptr && code->is_string()) {
        out.unrun = code->as_string() == "batch_cancelled" ? Unrun::kCanceled : Unrun::kExpired;
        return out;
    }
    return std::nullopt;
}

std::string ClientBody(const config::Deployment& deployment, Api api, std::string_view endpoint,
                       unsigned status, std::string_view body, std::int64_t created) {
    const bool from_anthropic = Anthropic(deployment);
    const bool to_anthropic = api == Api::kAnthropic;
    if (from_anthropic == to_anthropic || endpoint == "/v1/embeddings" ||
        endpoint == "/v1/responses") {
        return std::string(body);
    }
    const bool ok = status >= 200 && status < 300;
    if (!ok) {
        return from_anthropic ? api::AnthropicErrorToOpenAi(body, status)
                              : api::OpenAiErrorToAnthropic(body, status);
    }
    boost::system::error_code ec;
    const json::value parsed = json::parse(body, ec);
    if (ec || !parsed.is_object()) return std::string(body);
    if (from_anthropic) {
        return json::serialize(api::AnthropicResponseToOpenAi(parsed.as_object(), created));
    }
    auto translated = api::OpenAiResponseToAnthropic(parsed.as_object());
    if (auto* error = std::get_if<core::LocalError>(&translated)) {
        return api::RenderError(api::Wire::kAnthropic, *error).body;
    }
    return json::serialize(std::get<json::object>(translated));
}

double BatchCost(const config::Deployment& deployment, double ratio, const Tokens& tokens) {
    const double input = deployment.batch_input_price >= 0 ? deployment.batch_input_price
                                                           : deployment.input_price * ratio;
    const double output = deployment.batch_output_price >= 0 ? deployment.batch_output_price
                                                             : deployment.output_price * ratio;
    return (static_cast<double>(tokens.input) * input +
            static_cast<double>(tokens.output) * output) /
           1e6;
}

}  // namespace switchyard::batches
