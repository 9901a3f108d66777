#include "server/state_gauges.h"

#include <fmt/format.h>

#include <array>

#include "observe/metrics.h"

namespace switchyard::server {

namespace {

// The deployment's latency percentiles as switchyard_deployment_latency_seconds series.
void AppendLatency(std::string& out, std::string_view deployment,
                   const routing::DeploymentSnapshot& s) {
    using Measure = std::optional<std::chrono::milliseconds> policy::LatencyQuantiles::*;
    static constexpr std::pair<std::string_view, Measure> kMeasures[] = {
        {"stream_first_byte", &policy::LatencyQuantiles::stream_first_byte},
        {"first_token", &policy::LatencyQuantiles::first_token},
        {"chunk_gap", &policy::LatencyQuantiles::gap},
        {"whole_answer", &policy::LatencyQuantiles::whole}};
    for (const auto& [name, measure] : kMeasures) {
        for (const auto& [quantile, q] :
             {std::pair{"0.5", &s.latency_p50}, std::pair{"0.99", &s.latency_p99}}) {
            const std::optional<std::chrono::milliseconds> value = q->*measure;
            if (!value) continue;
            out += fmt::format(
                "switchyard_deployment_latency_seconds{{deployment=\"{}\",measure=\"{}\","
                "quantile=\"{}\"}} {}\n",
                observe::EscapeLabel(deployment), name, quantile,
                static_cast<double>(value->count()) / 1000);
        }
    }
}

}  // namespace

std::string RenderStateGauges(const Runtime& runtime, std::chrono::steady_clock::time_point now) {
    using routing::DeploymentState;
    static constexpr std::array kStates = {
        DeploymentState::kHealthy, DeploymentState::kRateLimited, DeploymentState::kCooling,
        DeploymentState::kOpen,    DeploymentState::kHalfOpen,    DeploymentState::kDisabled};
    std::string out =
        "# HELP switchyard_deployment_state Each deployment's health state: 1 for the current "
        "one (healthy, rate_limited, cooling, open, half_open, disabled), 0 for the others.\n"
        "# TYPE switchyard_deployment_state gauge\n";
    std::string latency =
        "# HELP switchyard_deployment_latency_seconds Each deployment's latency model: the p50 "
        "and p99 of its successful attempts over the last two latency windows, by measure "
        "(stream_first_byte, first_token, chunk_gap, whole_answer); absent until measured.\n"
        "# TYPE switchyard_deployment_latency_seconds gauge\n";
    std::string remaining =
        "# HELP switchyard_headroom_remaining Self-throttling: what each limited bucket of a "
        "deployment holds now (requests or tokens; below 0 while in debt).\n"
        "# TYPE switchyard_headroom_remaining gauge\n";
    std::string capacity =
        "# HELP switchyard_headroom_capacity Self-throttling: the capacity of each limited "
        "bucket of a deployment.\n"
        "# TYPE switchyard_headroom_capacity gauge\n";
    for (const auto& group : runtime.config->models) {
        for (const auto& d : group.deployments) {
            const std::string labels =
                fmt::format("model_group=\"{}\",deployment=\"{}\"",
                            observe::EscapeLabel(group.name), observe::EscapeLabel(d.name));
            const routing::DeploymentSnapshot snapshot = runtime.health->Snapshot(d.index, now);
            for (const DeploymentState s : kStates) {
                out += fmt::format("switchyard_deployment_state{{{},state=\"{}\"}} {}\n", labels,
                                   routing::Name(s), s == snapshot.state ? 1 : 0);
            }
            AppendLatency(latency, d.name, snapshot);
            const limits::Headroom::View view = runtime.headroom->Snapshot(d.index, now);
            const std::pair<std::string_view, const limits::Headroom::BucketView*> buckets[] = {
                {"requests", &view.requests},
                {"tokens", &view.tokens},
                {"input_tokens", &view.input_tokens},
                {"output_tokens", &view.output_tokens}};
            for (const auto& [name, bucket] : buckets) {
                if (!bucket->limited) continue;
                const std::string series = fmt::format("{{deployment=\"{}\",bucket=\"{}\"}}",
                                                       observe::EscapeLabel(d.name), name);
                remaining +=
                    fmt::format("switchyard_headroom_remaining{} {}\n", series, bucket->level);
                capacity +=
                    fmt::format("switchyard_headroom_capacity{} {}\n", series, bucket->capacity);
            }
        }
    }
    out += latency;
    out += remaining;
    out += capacity;
    out +=
        "# HELP switchyard_lane_queue_depth Requests waiting for headroom in each lane now.\n"
        "# TYPE switchyard_lane_queue_depth gauge\n";
    for (std::size_t i = 0; i < runtime.lanes->Size(); ++i) {
        out += fmt::format("switchyard_lane_queue_depth{{lane=\"{}\"}} {}\n",
                           observe::EscapeLabel(runtime.lanes->Config(i).name),
                           runtime.lanes->Waiting(i));
    }
    return out;
}

}  // namespace switchyard::server
