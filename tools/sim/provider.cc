#include "provider.h"

#include <cmath>
#include <cstdio>
#include <utility>

#include "anthropic_wire.h"
#include "http_head.h"
#include "openai_wire.h"

namespace switchyard::sim {

namespace {

constexpr double kZ99 = 2.3263478740408408;  // the standard normal's 99th percentile
constexpr int kReplyWords = 4;               // the mock's default reply: "Mock reply from <m>."

}  // namespace

double LatencyModel::Draw(std::mt19937_64& rng) const {
    if (median_ms <= 0) return 0;
    const double sigma = p99_ms > median_ms ? std::log(p99_ms / median_ms) / kZ99 : 0;
    std::lognormal_distribution<double> dist(std::log(median_ms), sigma);
    return dist(rng);
}

std::vector<policy::HeaderField> Reply::Fields() const {
    std::vector<policy::HeaderField> fields;
    std::string_view rest = head;
    while (!rest.empty()) {
        const std::size_t end = rest.find("\r\n");
        const std::string_view line = rest.substr(0, end);
        rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 2);
        const std::size_t colon = line.find(": ");
        if (colon == std::string_view::npos) continue;
        fields.emplace_back(line.substr(0, colon), line.substr(colon + 2));
    }
    return fields;
}

std::optional<std::string_view> Reply::Header(std::string_view name) const {
    for (const auto& [field, value] : Fields()) {
        if (field == name) return value;
    }
    return std::nullopt;
}

SimProvider::SimProvider(std::string deployment, config::Provider api, ProviderModel model,
                         const VirtualClock& clock, std::uint64_t seed)
    : deployment_(std::move(deployment)),
      api_(api),
      model_(std::move(model)),
      clock_(clock),
      rng_(seed) {
    if (!model_.limits.empty()) {
        limits_.Configure(mock::ParseRateLimitSpec(model_.limits).config, clock_.Now());
    }
}

const TimedFault* SimProvider::ActiveFault() {
    const double at = clock_.ElapsedMs() / 1000.0;
    for (const TimedFault& fault : model_.faults) {
        if (at < fault.from_s || at >= fault.to_s) continue;
        // Drawn for every active fault, hit or not, so one fault's draws never shift another's.
        const double draw = std::uniform_real_distribution<double>(0, 1)(rng_);
        if (draw < fault.spec.probability) return &fault;
    }
    return nullptr;
}

Reply SimProvider::Call(bool stream, std::int64_t input_tokens, std::int64_t max_tokens) {
    Reply reply = Answer(stream, input_tokens, max_tokens);
    if (trace_ != nullptr) {
        std::fprintf(trace_, "%.3f %s %u%s\n", clock_.ElapsedMs() / 1000.0, deployment_.c_str(),
                     reply.transport == policy::Transport::kOk ? reply.status : 0,
                     reply.stalls ? " stall" : "");
    }
    return reply;
}

Reply SimProvider::Answer(bool stream, std::int64_t input_tokens, std::int64_t max_tokens) {
    ++calls_;
    ++in_flight_;
    call_times_.push_back(clock_.ElapsedMs() / 1000.0);
    const bool anthropic = api_ == config::Provider::kAnthropic;
    const mock::RateLimitApi api =
        anthropic ? mock::RateLimitApi::kAnthropic : mock::RateLimitApi::kOpenAi;
    const TimePoint now = clock_.Now();
    const auto wall = clock_.WallNow();
    Reply reply;
    reply.duration =
        milliseconds(static_cast<std::int64_t>(std::llround(model_.latency.Draw(rng_))));
    reply.output_tokens = kReplyWords;
    auto head = [&](const std::optional<milliseconds>& rate_limit_retry) {
        if (anthropic) {
            mock::AppendAnthropicRateLimitHeaders(
                reply.head, limits_.AnthropicSnapshot(input_tokens, now, wall));
        } else {
            mock::AppendRateLimitHeaders(reply.head, limits_.Snapshot(input_tokens, now));
        }
        if (rate_limit_retry) mock::AppendRetryAfterHeaders(reply.head, api, *rate_limit_retry);
    };
    const mock::RateLimitDecision decision =
        limits_.Admit(api, {input_tokens, anthropic ? 0 : max_tokens}, now);
    if (decision.reason) {
        // Refused at once, before any model ran.
        ++rate_limited_;
        ++failed_;
        reply.rate_limited = true;
        reply.duration = milliseconds(std::min<std::int64_t>(reply.duration.count(), 30));
        reply.status = 429;
        reply.body =
            anthropic ? mock::anthropic::RateLimitBody(*decision.reason, decision.limit, "req_sim")
                      : mock::openai::RateLimitBody(*decision.reason, decision.limit);
        head(decision.retry_after);
        return reply;
    }
    if (anthropic) limits_.TakeOutputTokens(kReplyWords, now);
    const mock::FaultSpec* fault = nullptr;
    mock::FaultSpec overloaded;
    if (model_.max_concurrency > 0 && in_flight_ > model_.max_concurrency) {
        overloaded.status = anthropic ? 529 : 503;
        fault = &overloaded;
    } else if (const TimedFault* timed = ActiveFault()) {
        fault = &timed->spec;
    }
    head(std::nullopt);
    if (fault == nullptr) return reply;
    mock::FaultSpec headers = *fault;
    if (anthropic && mock::anthropic::SuppressesRetryAfter(*fault)) {
        headers.retry_after_s.reset();
        headers.retry_after_date_s.reset();
        headers.retry_after_ms.reset();
    }
    mock::AppendFaultHeaders(reply.head, headers, wall);
    reply.duration += fault->delay_headers;
    if (fault->stall) {
        reply.stalls = true;
        ++failed_;
        return reply;
    }
    if (fault->reset) {
        reply.transport = policy::Transport::kReset;
        reply.status = 0;
        ++failed_;
        return reply;
    }
    if (const std::optional<int> status = fault->ErrorStatus()) {
        reply.status = static_cast<unsigned>(*status);
        reply.body = anthropic ? mock::anthropic::ErrorBody(*status, fault->error, "sim", "req_sim")
                               : mock::openai::ErrorBody(*status, fault->error, "sim");
        ++failed_;
        return reply;
    }
    if (fault->truncate_body && !stream) {
        reply.transport = policy::Transport::kTruncated;
        ++failed_;
        return reply;
    }
    if (stream && fault->CutAfterChunks()) {
        reply.cut_mid_stream = true;
        if (fault->error_after_chunks) {
            const mock::NamedError error = fault->error.value_or(mock::NamedError::kServerError);
            const int status = mock::NamedErrorStatus(error);
            reply.stream_error = anthropic
                                     ? mock::anthropic::ErrorBody(status, error, "sim", "req_sim")
                                     : mock::openai::ErrorBody(status, error, "sim");
        }
        if (fault->stall_after_chunks) {
            reply.stalls = true;
            reply.stalls_before_content = *fault->stall_after_chunks == 0;
        }
        ++failed_;
    }
    return reply;
}

}  // namespace switchyard::sim
