#include "observe/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace switchyard::observe {
namespace {

constexpr char kSep = '\x1f';

// Label values escaped as the exposition format requires (backslash, quote, newline).
std::string Escape(std::string_view value) {
    std::string out;
    out.reserve(value.size());
    for (char c : value) {
        if (c == '\\' || c == '"') {
            out.push_back('\\');
            out.push_back(c);
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out.push_back(c);
        }
    }
    return out;
}

std::vector<std::string_view> Split(std::string_view key) {
    std::vector<std::string_view> parts;
    for (;;) {
        const std::size_t at = key.find(kSep);
        parts.push_back(key.substr(0, at));
        if (at == std::string_view::npos) return parts;
        key.remove_prefix(at + 1);
    }
}

}  // namespace

Metrics::Metrics(unsigned shards) : shards_(std::max(1u, shards)) {}

void Metrics::Record(unsigned shard, const RequestRecord& r) {
    std::string key;
    key.reserve(r.route.size() + r.model_group.size() + r.deployment.size() + 8);
    key.append(r.route).push_back(kSep);
    key.append(r.model_group);
    const std::size_t histogram_key_size = key.size();
    key.push_back(kSep);
    key.append(r.deployment).push_back(kSep);
    key.append(std::to_string(r.status));

    Shard& s = shards_[shard % shards_.size()];
    std::lock_guard lock(s.mutex);
    ++s.requests[key];
    key.resize(histogram_key_size);
    Histogram& h = s.latency[key];
    ++h.count;
    h.sum += r.latency_seconds;
    for (std::size_t i = 0; i < kLatencyBuckets.size(); ++i) {
        if (r.latency_seconds <= kLatencyBuckets[i]) ++h.buckets[i];
    }
}

void Metrics::CountAttempt(unsigned shard, std::string_view deployment,
                           std::string_view error_class) {
    std::string key;
    key.reserve(deployment.size() + error_class.size() + 1);
    key.append(deployment).push_back(kSep);
    key.append(error_class);
    Shard& s = shards_[shard % shards_.size()];
    std::lock_guard lock(s.mutex);
    ++s.attempts[key];
}

void Metrics::CountLimitEvent(std::string_view metric, std::string labels) {
    std::string key(metric);
    key.push_back(kSep);
    key += labels;
    std::lock_guard lock(limit_mutex_);
    ++limit_events_[std::move(key)];
}

void Metrics::CountKeyRefusal(std::string_view key, std::string_view reason) {
    CountLimitEvent("switchyard_key_refusals_total",
                    fmt::format("key=\"{}\",reason=\"{}\"", Escape(key), Escape(reason)));
}

void Metrics::CountHeadroomWait(std::string_view lane) {
    CountLimitEvent("switchyard_headroom_waits_total", fmt::format("lane=\"{}\"", Escape(lane)));
}

void Metrics::CountStateFallback(std::string_view operation) {
    CountLimitEvent("switchyard_state_fallbacks_total",
                    fmt::format("operation=\"{}\"", Escape(operation)));
}

void Metrics::CountShed(std::string_view lane) {
    CountLimitEvent("switchyard_shed_total", fmt::format("lane=\"{}\"", Escape(lane)));
}

std::string Metrics::Render() const {
    std::map<std::string, std::uint64_t, std::less<>> attempts;
    std::map<std::string, std::uint64_t, std::less<>> requests;
    std::map<std::string, Histogram, std::less<>> latency;
    for (const Shard& s : shards_) {
        std::lock_guard lock(s.mutex);
        for (const auto& [k, v] : s.requests) requests[k] += v;
        for (const auto& [k, v] : s.attempts) attempts[k] += v;
        for (const auto& [k, v] : s.latency) {
            Histogram& h = latency[k];
            h.count += v.count;
            h.sum += v.sum;
            for (std::size_t i = 0; i < v.buckets.size(); ++i) h.buckets[i] += v.buckets[i];
        }
    }
    std::string out;
    out +=
        "# HELP switchyard_requests_total Downstream requests by route, model group, serving "
        "deployment and status.\n"
        "# TYPE switchyard_requests_total counter\n";
    for (const auto& [k, v] : requests) {
        const auto p = Split(k);
        out += fmt::format(
            "switchyard_requests_total{{route=\"{}\",model_group=\"{}\",deployment=\"{}\","
            "status=\"{}\"}} {}\n",
            Escape(p[0]), Escape(p[1]), Escape(p[2]), p[3], v);
    }
    out +=
        "# HELP switchyard_request_duration_seconds Downstream request latency, first byte in to "
        "last byte out.\n"
        "# TYPE switchyard_request_duration_seconds histogram\n";
    for (const auto& [k, h] : latency) {
        const auto p = Split(k);
        const std::string labels =
            fmt::format("route=\"{}\",model_group=\"{}\"", Escape(p[0]), Escape(p[1]));
        for (std::size_t i = 0; i < kLatencyBuckets.size(); ++i) {
            out += fmt::format("switchyard_request_duration_seconds_bucket{{{},le=\"{}\"}} {}\n",
                               labels, kLatencyBuckets[i], h.buckets[i]);
        }
        out += fmt::format("switchyard_request_duration_seconds_bucket{{{},le=\"+Inf\"}} {}\n",
                           labels, h.count);
        out += fmt::format("switchyard_request_duration_seconds_sum{{{}}} {}\n", labels, h.sum);
        out += fmt::format("switchyard_request_duration_seconds_count{{{}}} {}\n", labels, h.count);
    }
    out +=
        "# HELP switchyard_upstream_attempts_total Upstream attempts by deployment and error class "
        "(none: success). Divided by chat requests it is the retry amplification.\n"
        "# TYPE switchyard_upstream_attempts_total counter\n";
    for (const auto& [k, v] : attempts) {
        const auto p = Split(k);
        out += fmt::format(
            "switchyard_upstream_attempts_total{{deployment=\"{}\",error_class=\"{}\"}} {}\n",
            Escape(p[0]), Escape(p[1]), v);
    }
    {
        static constexpr std::pair<std::string_view, std::string_view> kLimitMetrics[] = {
            {"switchyard_key_refusals_total",
             "Requests refused by their client key's limits (requests, tokens, budget)."},
            {"switchyard_headroom_waits_total",
             "Times a request waited for upstream headroom, by lane."},
            {"switchyard_shed_total",
             "Requests answered 429 because no deployment had headroom for their lane in time."},
            {"switchyard_state_fallbacks_total",
             "Shared-state operations decided from this replica's own state because Redis did "
             "not answer in time, by operation."}};
        std::lock_guard lock(limit_mutex_);
        for (const auto& [name, help] : kLimitMetrics) {
            out += fmt::format("# HELP {0} {1}\n# TYPE {0} counter\n", name, help);
            for (const auto& [k, v] : limit_events_) {
                const std::string_view key = k;
                const std::size_t at = key.find(kSep);
                if (key.substr(0, at) != name) continue;
                out += fmt::format("{}{{{}}} {}\n", name, key.substr(at + 1), v);
            }
        }
    }
    out += fmt::format(
        "# HELP switchyard_client_retries_total Requests a client SDK sent as its own retry "
        "(x-stainless-retry-count > 0); clients should set maxRetries to 0.\n"
        "# TYPE switchyard_client_retries_total counter\n"
        "switchyard_client_retries_total {}\n"
        "# HELP switchyard_fallbacks_total Requests served by a fallback model group.\n"
        "# TYPE switchyard_fallbacks_total counter\n"
        "switchyard_fallbacks_total {}\n",
        client_retries_.load(), fallbacks_.load());
    out += fmt::format(
        "# HELP switchyard_in_flight_requests Requests being served now.\n"
        "# TYPE switchyard_in_flight_requests gauge\n"
        "switchyard_in_flight_requests {}\n"
        "# HELP switchyard_downstream_connections Open downstream connections.\n"
        "# TYPE switchyard_downstream_connections gauge\n"
        "switchyard_downstream_connections {}\n"
        "# HELP switchyard_upstream_connects_total New upstream connections opened.\n"
        "# TYPE switchyard_upstream_connects_total counter\n"
        "switchyard_upstream_connects_total {}\n"
        "# HELP switchyard_access_log_dropped_total Access log lines dropped because the queue "
        "was full.\n"
        "# TYPE switchyard_access_log_dropped_total counter\n"
        "switchyard_access_log_dropped_total {}\n",
        in_flight_.load(), connections_.load(), upstream_connects_.load(), log_dropped_.load());
    if (const int up = state_up_.load(); up >= 0) {
        out += fmt::format(
            "# HELP switchyard_state_redis_up Whether every connection to the shared state's "
            "Redis is up.\n"
            "# TYPE switchyard_state_redis_up gauge\n"
            "switchyard_state_redis_up {}\n",
            up);
    }
    return out;
}

}  // namespace switchyard::observe
