#include "server/output_check.h"

#include <boost/json.hpp>

#include "api/structured_output.h"
#include "core/json.h"

namespace switchyard::server {

std::optional<OutputCheck> OutputCheckOf(RequestContext& ctx, const api::ChatRequest& request,
                                         std::string_view body, const config::ModelGroup* group) {
    std::optional<boost::json::value> schema;
    if (body.find("json_schema") != std::string_view::npos) {
        // Anthropic and Responses requests keep their object; chat requests were only scanned.
        if (request.wire != api::Wire::kOpenAi) {
            schema = api::RequestedSchema(request.original, request.wire);
        } else {
            boost::system::error_code ec;
            const boost::json::value parsed = core::ParseJson(body, ec);
            if (!ec && parsed.is_object()) {
                schema = api::RequestedSchema(parsed.get_object(), request.wire);
            }
        }
    }
    if (!schema && group != nullptr && !group->validation.schema.empty()) {
        boost::system::error_code ec;
        schema = core::ParseJson(group->validation.schema, ec);
        if (ec) schema.reset();
    }
    if (!schema) return std::nullopt;
    auto compiled = answers::OutputSchema::Compile(*schema);
    if (std::holds_alternative<std::string>(compiled)) {
        ctx.validation = "skipped";
        return std::nullopt;
    }
    OutputCheck check;
    check.schema = std::move(std::get<std::shared_ptr<const answers::OutputSchema>>(compiled));
    check.fall_back = group == nullptr || group->validation.on_invalid ==
                                              config::ValidationConfig::OnInvalid::kFallback;
    return check;
}

std::optional<std::string> CheckOutput(RequestContext& ctx, const OutputCheck& check,
                                       const std::optional<std::string>& text,
                                       std::string_view deployment) {
    if (!text) {
        ctx.validation = "unchecked";
        return std::nullopt;
    }
    std::optional<std::string> problem = check.schema->Check(*text);
    ctx.validation = problem ? "failed" : "passed";
    ctx.Context().metrics.CountValidation(deployment, ctx.validation);
    return problem;
}

}  // namespace switchyard::server
