#include "server/output_check.h"

#include <boost/json.hpp>

#include "api/structured_output.h"
#include "core/json.h"
#include "server/off_loop.h"

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

asio::awaitable<std::optional<std::string>> CheckOutput(RequestContext& ctx,
                                                        const OutputCheck& check,
                                                        std::optional<std::string> text,
                                                        std::string deployment) {
    if (!text) {
        ctx.validation = "unchecked";
        co_return std::nullopt;
    }
    // In passing: at most a slice of the event loop's time (about a millisecond).
    constexpr answers::SchemaLimits kInPlace{20'000, 64 * 1024};
    answers::SchemaVerdict verdict = check.schema->Check(*text, kInPlace);
    if (verdict.result == answers::SchemaVerdict::Result::kSkipped &&
        ctx.Context().checks != nullptr) {
        std::function<answers::SchemaVerdict()> work =
            [schema = check.schema, text = std::move(*text)] { return schema->Check(text); };
        verdict = co_await RunOffLoop(*ctx.Context().checks, std::move(work));
    }
    std::optional<std::string> problem;
    switch (verdict.result) {
        case answers::SchemaVerdict::Result::kPassed:
            ctx.validation = "passed";
            break;
        case answers::SchemaVerdict::Result::kFailed:
            ctx.validation = "failed";
            problem = std::move(verdict.problem);
            break;
        case answers::SchemaVerdict::Result::kSkipped:
            ctx.validation = "skipped";
            break;
    }
    ctx.Context().metrics.CountValidation(deployment, ctx.validation);
    co_return problem;
}

}  // namespace switchyard::server
