#include "drills/drill_call.h"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <chrono>

#include "api/answer_shape.h"
#include "api/stream_events.h"
#include "api/structured_output.h"
#include "api/usage.h"
#include "api/whole_answer.h"
#include "core/json.h"
#include "policy/classify.h"
#include "providers/upstream_request.h"
#include "upstream/upstream_call.h"

namespace switchyard::drills {
namespace {

constexpr std::size_t kMaxAnswer = 64 * 1024 * 1024;
constexpr std::size_t kMaxErrorAnswer = 1024 * 1024;

std::variant<api::ChatRequest, core::LocalError> ParseRequest(const DrillCase& drill_case) {
    switch (drill_case.wire) {
        case api::Wire::kAnthropic:
            return api::ParseAnthropicMessages(drill_case.body);
        case api::Wire::kResponses:
            return api::ParseOpenAiResponses(drill_case.body);
        case api::Wire::kOpenAi:
            break;
    }
    return api::ParseOpenAiChat(drill_case.body);
}

// The provider's message (api::ErrorMessageOf). When that is the start of a body that is no JSON
// (an HTML error page, bytes), it is reduced to printable ASCII so that the reports stay UTF-8.
std::string ErrorMessage(std::string_view body) {
    std::string message = api::ErrorMessageOf(body);
    if (body.substr(0, message.size()) == message) {
        for (char& c : message) {
            if (c < 0x20 || c >= 0x7f) c = '?';
        }
    }
    return message;
}

std::string ModelOf(std::string_view body) {
    boost::system::error_code ec;
    const boost::json::value parsed = core::ParseJson(body, ec);
    if (ec || !parsed.is_object()) return {};
    const auto* model = parsed.get_object().if_contains("model");
    return model != nullptr && model->is_string() ? std::string(model->get_string()) : "";
}

void Failed(CaseResult& result, policy::Outcome outcome, std::string error) {
    result.error_class = std::string(policy::Name(outcome.error_class));
    result.error = std::move(error);
}

// Production checks an answer against the schema its request asks for, else the requested
// group's `validation.schema` (docs/answers.md#output-validation): an answer that would fail that
// check there fails the case here, whatever the case's own expectations.
void CheckAsProductionWould(const DrillCase& drill_case, const config::ModelGroup& drilled,
                            const std::optional<std::string>& text,
                            std::vector<std::string>& unmet) {
    if (!text || drill_case.expect.json_schema != nullptr) return;  // unchecked / checked already
    std::shared_ptr<const answers::OutputSchema> schema = drill_case.requested_schema;
    std::string_view whose = "the request's";
    if (schema == nullptr && !drilled.validation.schema.empty()) {
        boost::system::error_code ec;
        const boost::json::value parsed = core::ParseJson(drilled.validation.schema, ec);
        if (ec) return;
        auto compiled = answers::OutputSchema::Compile(parsed);
        auto* usable = std::get_if<std::shared_ptr<const answers::OutputSchema>>(&compiled);
        if (usable == nullptr) return;
        schema = std::move(*usable);
        whose = "the group's validation";
    }
    if (schema == nullptr) return;
    const answers::SchemaVerdict verdict = schema->Check(*text);
    if (verdict.result == answers::SchemaVerdict::Result::kFailed) {
        unmet.push_back(fmt::format("does not match {} JSON schema: {}", whose, verdict.problem));
    }
}

}  // namespace

asio::awaitable<CaseResult> CallEntry(upstream::ConnectionPool& pool, const core::Clock& clock,
                                      const config::Config& config, const DrillEntry& entry,
                                      const DrillCase& drill_case) {
    const config::Deployment& deployment = *entry.deployment;
    CaseResult result;
    result.id = drill_case.id;
    auto parsed = ParseRequest(drill_case);
    if (auto* error = std::get_if<core::LocalError>(&parsed)) {
        Failed(result, {policy::Action::kGiveUp, policy::ErrorClass::kBadRequest},
               "the case's request is refused: " + error->message);
        co_return result;
    }
    const api::ChatRequest& request = std::get<api::ChatRequest>(parsed);
    api::RequestOverrides overrides;
    if (entry.depth > 0) {
        overrides.system_prompt = &entry.group->system_prompt;
        overrides.params = &entry.group->params;
    }
    auto built = providers::BuildUpstreamRequest(deployment, request, drill_case.body, overrides);
    if (auto* error = std::get_if<core::LocalError>(&built)) {
        Failed(result, {policy::Action::kGiveUp, policy::ErrorClass::kBadRequest},
               "cannot be sent to this deployment: " + error->message);
        co_return result;
    }
    const providers::UpstreamRequest& upstream_request =
        std::get<providers::UpstreamRequest>(built);
    const auto started = clock.Now();
    upstream::UpstreamCall call(pool, clock);
    const upstream::UpstreamCall::Timeouts timeouts{
        config.timeouts.connect, config.timeouts.first_byte, started + config.timeouts.total};
    const bool answered = co_await call.Start(deployment, upstream_request, timeouts);
    const auto elapsed = [&] {
        return std::chrono::duration<double, std::milli>(clock.Now() - started).count();
    };
    if (!answered) {
        result.latency_ms = elapsed();
        Failed(result, policy::Classify({call.Transport()}, clock.WallNow()), call.Error().message);
        co_return result;
    }
    result.status = call.Header().result_int();
    const bool success = result.status >= 200 && result.status < 300;
    std::string body;
    const bool read = co_await call.ReadAll(body, success ? kMaxAnswer : kMaxErrorAnswer);
    result.latency_ms = elapsed();
    if (!read) {
        Failed(result, policy::Classify({call.Transport()}, clock.WallNow()), call.Error().message);
        co_return result;
    }
    if (!success) {
        policy::AttemptResult attempt;
        attempt.status = result.status;
        attempt.body = body;
        Failed(result, policy::Classify(attempt, clock.WallNow()), ErrorMessage(body));
        co_return result;
    }
    const api::AnswerShape shape =
        api::ShapeOfAnswer(body, upstream_request.wire, request.endpoint);
    if (shape != api::AnswerShape::kAnswer) {
        Failed(
            result,
            policy::Classify({shape == api::AnswerShape::kNotJson ? policy::Transport::kTruncated
                                                                  : policy::Transport::kProtocol},
                             clock.WallNow()),
            fmt::format("answered {} with {}", result.status, api::Describe(shape)));
        co_return result;
    }
    result.served_model = ModelOf(body);
    if (const auto usage = api::FindUsage(body)) {
        result.input_tokens = usage->input_tokens;
        result.output_tokens = usage->output_tokens;
        if (usage->input_tokens >= 0 && usage->output_tokens >= 0) {
            result.cost = (static_cast<double>(usage->input_tokens) * deployment.input_price +
                           static_cast<double>(usage->output_tokens) * deployment.output_price) /
                          1e6;
        }
    }
    if (upstream_request.wire != drill_case.wire) {
        const auto created =
            std::chrono::duration_cast<std::chrono::seconds>(clock.WallNow().time_since_epoch())
                .count();
        auto translated = api::TranslateWholeAnswer(body, result.status, upstream_request.wire,
                                                    drill_case.wire, created, &request.original);
        if (auto* error = std::get_if<core::LocalError>(&translated)) {
            Failed(result, policy::Classify({policy::Transport::kProtocol}, clock.WallNow()),
                   "its answer cannot be translated: " + error->message);
            co_return result;
        }
        body = std::move(std::get<std::string>(translated));
    }
    Observed observed;
    observed.text = api::AnswerText(body, drill_case.wire);
    observed.latency_ms = result.latency_ms;
    observed.cost = result.cost;
    result.unmet = Unmet(drill_case.expect, observed);
    CheckAsProductionWould(drill_case, *entry.drilled, observed.text, result.unmet);
    result.passed = result.unmet.empty();
    co_return result;
}

}  // namespace switchyard::drills
