#include "stats.h"

#include <fmt/format.h>

#include "json_text.h"
#include "rate_limits.h"

namespace switchyard::mock {
namespace {

void Count(std::map<std::string, std::uint64_t, std::less<>>& counts, std::string_view key) {
    const auto it = counts.find(key);
    if (it != counts.end()) {
        ++it->second;
    } else {
        counts.emplace(std::string(key), 1);
    }
}

void Assign(std::optional<std::string>& field, std::optional<std::string_view> value) {
    if (value) {
        field.emplace().assign(value->data(), value->size());
    } else {
        field.reset();
    }
}

void AppendCounts(std::string& out,
                  const std::map<std::string, std::uint64_t, std::less<>>& counts) {
    out.push_back('{');
    bool first = true;
    for (const auto& [key, count] : counts) {
        if (!first) out.push_back(',');
        first = false;
        AppendJsonString(out, key);
        fmt::format_to(std::back_inserter(out), ":{}", count);
    }
    out.push_back('}');
}

void AppendHeader(std::string& out, bool& first, std::string_view name,
                  const std::optional<std::string>& value) {
    if (!value) return;
    if (!first) out.push_back(',');
    first = false;
    AppendJsonString(out, name);
    out.push_back(':');
    AppendJsonString(out, *value);
}

}  // namespace

Stats::Stats() : log_(kCapacity) {}

void Stats::Record(const RequestObservation& observation) {
    std::lock_guard lock(mutex_);
    ++total_;
    Count(paths_, observation.path);
    if (!observation.model.empty()) Count(models_, observation.model);
    if (!observation.rate_limit.empty()) {
        ++rate_limited_;
        Count(rate_limited_paths_, observation.path);
        Count(rate_limited_reasons_, observation.rate_limit);
    }
    Entry& entry = log_[total_ % kCapacity];
    entry.seq = total_;
    entry.path.assign(observation.path);
    entry.model.assign(observation.model);
    entry.t_ms = observation.t_ms;
    entry.status = observation.status;
    entry.fault.assign(observation.fault);
    entry.rate_limit.assign(observation.rate_limit);
    Assign(entry.authorization, observation.authorization);
    Assign(entry.retry_count, observation.retry_count);
    Assign(entry.traceparent, observation.traceparent);
    Assign(entry.user_agent, observation.user_agent);
    Assign(entry.content_type, observation.content_type);
    entry.body.assign(observation.body.substr(0, kBodyPrefix));
}

void Stats::CountClientClosed(std::string_view model) {
    std::lock_guard lock(mutex_);
    ++client_closed_;
    const auto it = client_closed_models_.find(model);
    if (it != client_closed_models_.end()) {
        ++it->second;
    } else {
        client_closed_models_.emplace(std::string(model), 1);
    }
}

void Stats::CountBatch(BatchEvent event, std::uint64_t count) {
    std::lock_guard lock(mutex_);
    switch (event) {
        case BatchEvent::kCreated:
            batches_created_ += count;
            break;
        case BatchEvent::kPoll:
            batch_polls_ += count;
            break;
        case BatchEvent::kLine:
            batch_lines_ += count;
            break;
        case BatchEvent::kRefused:
            batches_refused_ += count;
            break;
    }
}

void Stats::Reset() {
    std::lock_guard lock(mutex_);
    total_ = 0;
    client_closed_ = 0;
    client_closed_models_.clear();
    paths_.clear();
    models_.clear();
    rate_limited_ = 0;
    rate_limited_paths_.clear();
    rate_limited_reasons_.clear();
    batches_created_ = 0;
    batch_polls_ = 0;
    batch_lines_ = 0;
    batches_refused_ = 0;
    for (auto& entry : log_) entry.seq = 0;
}

std::string Stats::ToJson() const {
    std::string out;
    std::lock_guard lock(mutex_);
    out.reserve(256 + std::min<std::uint64_t>(total_, kCapacity) * 256);
    fmt::format_to(std::back_inserter(out), R"({{"total":{},"paths":)", total_);
    AppendCounts(out, paths_);
    out += R"(,"models":)";
    AppendCounts(out, models_);
    fmt::format_to(std::back_inserter(out), R"(,"rate_limited":{{"total":{},"paths":)",
                   rate_limited_);
    AppendCounts(out, rate_limited_paths_);
    // Every reason is listed, 0 included, so that tests can read any of them.
    out += R"(,"reasons":{)";
    for (const RateLimitReason reason : kRateLimitReasons) {
        const std::string_view name = RateLimitReasonName(reason);
        const auto it = rate_limited_reasons_.find(name);
        if (reason != kRateLimitReasons.front()) out.push_back(',');
        AppendJsonString(out, name);
        fmt::format_to(std::back_inserter(out), ":{}",
                       it == rate_limited_reasons_.end() ? 0 : it->second);
    }
    fmt::format_to(std::back_inserter(out), R"(}}}},"client_closed":{{"total":{},"models":)",
                   client_closed_);
    AppendCounts(out, client_closed_models_);
    fmt::format_to(std::back_inserter(out),
                   R"(}},"batches":{{"created":{},"polls":{},"lines":{},"refused":{}}})",
                   batches_created_, batch_polls_, batch_lines_, batches_refused_);
    out += R"(,"requests":[)";
    const std::uint64_t first_seq = total_ > kCapacity ? total_ - kCapacity + 1 : 1;
    for (std::uint64_t seq = first_seq; seq <= total_; ++seq) {
        const Entry& entry = log_[seq % kCapacity];
        if (seq != first_seq) out.push_back(',');
        fmt::format_to(std::back_inserter(out), R"({{"seq":{},"path":)", entry.seq);
        AppendJsonString(out, entry.path);
        out += R"(,"model":)";
        AppendJsonString(out, entry.model);
        fmt::format_to(std::back_inserter(out), R"(,"t_ms":{:.3f},"status":{},"fault":)",
                       entry.t_ms, entry.status);
        AppendJsonString(out, entry.fault);
        out += R"(,"rate_limit":)";
        AppendJsonString(out, entry.rate_limit);
        out += R"(,"headers":{)";
        bool first = true;
        AppendHeader(out, first, "authorization", entry.authorization);
        AppendHeader(out, first, "x-stainless-retry-count", entry.retry_count);
        AppendHeader(out, first, "user-agent", entry.user_agent);
        AppendHeader(out, first, "content-type", entry.content_type);
        AppendHeader(out, first, "traceparent", entry.traceparent);
        out += R"(},"body":)";
        AppendJsonString(out, entry.body);
        out += "}";
    }
    out += "]}";
    return out;
}

}  // namespace switchyard::mock
