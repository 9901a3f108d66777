#include "observe/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <map>
#include <string_view>

namespace switchyard::observe {
namespace {

constexpr char kSep = '\x1f';

using Names = std::initializer_list<std::string_view>;

// The series key of `values`, built in this thread's buffer (no allocation once it has grown to
// the longest key): valid, and changeable, until the next call on this thread.
std::string& Key(Names values) {
    thread_local std::string key;
    key.clear();
    bool first = true;
    for (const std::string_view v : values) {
        if (!first) key.push_back(kSep);
        first = false;
        key.append(v);
    }
    return key;
}

// The value of `key` in `series`; the key is copied into the series only the first time.
template <class Value>
Value& At(std::map<std::string, Value, std::less<>>& series, std::string_view key) {
    const auto it = series.find(key);
    if (it != series.end()) return it->second;
    return series.emplace(std::string(key), Value{}).first->second;
}

// `name="value",...` for a series key and its label names.
std::string Labels(Names names, std::string_view key) {
    std::string out;
    for (const std::string_view name : names) {
        const std::size_t at = key.find(kSep);
        if (!out.empty()) out.push_back(',');
        out.append(name).append("=\"").append(EscapeLabel(key.substr(0, at))).push_back('"');
        key = at == std::string_view::npos ? std::string_view{} : key.substr(at + 1);
    }
    return out;
}

void Family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} {2}\n", name, help, type);
}

void Counters(std::string& out, std::string_view name, std::string_view help, Names labels,
              const Metrics::Series<std::uint64_t>& series) {
    Family(out, name, "counter", help);
    for (const auto& [k, v] : series)
        out += fmt::format("{}{{{}}} {}\n", name, Labels(labels, k), v);
}

void Histograms(std::string& out, std::string_view name, std::string_view help, Names labels,
                const Metrics::Series<Metrics::Histogram>& series) {
    Family(out, name, "histogram", help);
    for (const auto& [k, h] : series) {
        std::string l = Labels(labels, k);
        const std::string_view comma = l.empty() ? "" : ",";
        for (std::size_t i = 0; i < Metrics::kLatencyBuckets.size(); ++i) {
            out += fmt::format("{}_bucket{{{}{}le=\"{}\"}} {}\n", name, l, comma,
                               Metrics::kLatencyBuckets[i], h.buckets[i]);
        }
        out += fmt::format("{}_bucket{{{}{}le=\"+Inf\"}} {}\n", name, l, comma, h.count);
        out +=
            fmt::format("{}_sum{{{}}} {}\n{}_count{{{}}} {}\n", name, l, h.sum, name, l, h.count);
    }
}

template <typename Value>
void Merge(Metrics::Series<Value>& into, const Metrics::Series<Value>& from) {
    for (const auto& [k, v] : from) into[k] += v;
}

}  // namespace

std::string EscapeLabel(std::string_view value) {
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

void Metrics::Histogram::Observe(double seconds) {
    ++count;
    sum += seconds;
    for (std::size_t i = 0; i < kLatencyBuckets.size(); ++i) {
        if (seconds <= kLatencyBuckets[i]) ++buckets[i];
    }
}

Metrics::Histogram& Metrics::Histogram::operator+=(const Histogram& other) {
    count += other.count;
    sum += other.sum;
    for (std::size_t i = 0; i < buckets.size(); ++i) buckets[i] += other.buckets[i];
    return *this;
}

Metrics::Usage& Metrics::Usage::operator+=(const Usage& other) {
    input_tokens += other.input_tokens;
    output_tokens += other.output_tokens;
    cost_usd += other.cost_usd;
    return *this;
}

Metrics::Metrics(unsigned shards) : shards_(std::max(1u, shards)) {}

void Metrics::Record(unsigned shard, const RequestRecord& r) {
    std::string& key = Key({r.route, r.model_group, r.deployment});
    const std::size_t duration_key_size = key.size();
    key.push_back(kSep);
    key.append(std::to_string(r.status));

    Shard& s = shards_[shard % shards_.size()];
    std::lock_guard lock(s.mutex);
    ++At(s.requests, key);
    key.resize(duration_key_size);
    At(s.durations, key).Observe(r.latency_seconds);
    if (!r.deployment.empty() && (r.input_tokens > 0 || r.output_tokens > 0)) {
        Usage& u = At(s.usage, Key({r.key, r.deployment}));
        u.input_tokens += static_cast<std::uint64_t>(std::max<std::int64_t>(r.input_tokens, 0));
        u.output_tokens += static_cast<std::uint64_t>(std::max<std::int64_t>(r.output_tokens, 0));
        u.cost_usd += r.cost_usd;
    }
}

void Metrics::CountAttempt(unsigned shard, std::string_view deployment,
                           std::string_view error_class) {
    const std::string& key = Key({deployment, error_class});
    Shard& s = shards_[shard % shards_.size()];
    std::lock_guard lock(s.mutex);
    ++At(s.attempts, key);
}

void Metrics::CountRetry(unsigned shard, std::string_view model_group,
                         std::string_view error_class) {
    const std::string& key = Key({model_group, error_class});
    Shard& s = shards_[shard % shards_.size()];
    std::lock_guard lock(s.mutex);
    ++At(s.retries, key);
}

void Metrics::ObserveTimeToFirstToken(unsigned shard, std::string_view model_group,
                                      std::string_view deployment, double seconds) {
    const std::string& key = Key({model_group, deployment});
    Shard& s = shards_[shard % shards_.size()];
    std::lock_guard lock(s.mutex);
    At(s.first_token, key).Observe(seconds);
}

void Metrics::ObserveWait(unsigned shard, std::string_view reason, double seconds) {
    Shard& s = shards_[shard % shards_.size()];
    std::lock_guard lock(s.mutex);
    const auto it = s.waits.find(reason);
    (it != s.waits.end() ? it->second : s.waits[std::string(reason)]).Observe(seconds);
}

void Metrics::CountEvent(std::string_view metric, std::string labels, std::uint64_t n) {
    std::string key(metric);
    key.push_back(kSep);
    key += labels;
    std::lock_guard lock(event_mutex_);
    events_[std::move(key)] += n;
}

void Metrics::CountFallback(int depth) {
    CountEvent("switchyard_fallbacks_total", fmt::format("depth=\"{}\"", depth));
}

void Metrics::CountKeyRefusal(std::string_view key, std::string_view reason) {
    CountEvent("switchyard_key_refusals_total",
               fmt::format("key=\"{}\",reason=\"{}\"", EscapeLabel(key), EscapeLabel(reason)));
}

void Metrics::CountHeadroomWait(std::string_view lane) {
    CountEvent("switchyard_headroom_waits_total", fmt::format("lane=\"{}\"", EscapeLabel(lane)));
}

void Metrics::CountShed(std::string_view lane) {
    CountEvent("switchyard_shed_total", fmt::format("lane=\"{}\"", EscapeLabel(lane)));
}

void Metrics::CountCache(std::string_view model_group, std::string_view result) {
    CountEvent("switchyard_cache_total",
               fmt::format("model_group=\"{}\",result=\"{}\"", EscapeLabel(model_group),
                           EscapeLabel(result)));
}

void Metrics::CountIdempotency(std::string_view outcome) {
    CountEvent("switchyard_idempotency_total", fmt::format("outcome=\"{}\"", EscapeLabel(outcome)));
}

void Metrics::CountValidation(std::string_view deployment, std::string_view result) {
    CountEvent("switchyard_output_validations_total",
               fmt::format("deployment=\"{}\",result=\"{}\"", EscapeLabel(deployment),
                           EscapeLabel(result)));
}

void Metrics::CountSpendCapDisable(std::string_view deployment) {
    CountEvent("switchyard_spend_cap_disables_total",
               fmt::format("deployment=\"{}\"", EscapeLabel(deployment)));
}

void Metrics::CountPanicAttempt(std::string_view deployment) {
    CountEvent("switchyard_panic_attempts_total",
               fmt::format("deployment=\"{}\"", EscapeLabel(deployment)));
}

void Metrics::CountHedge(std::string_view deployment, std::string_view result) {
    CountEvent("switchyard_hedges_total",
               fmt::format("deployment=\"{}\",result=\"{}\"", EscapeLabel(deployment), result));
}

void Metrics::CountDrillCase(std::string_view group, std::string_view deployment,
                             std::string_view result) {
    CountEvent("switchyard_drill_cases_total",
               fmt::format("group=\"{}\",deployment=\"{}\",result=\"{}\"", EscapeLabel(group),
                           EscapeLabel(deployment), result));
}

void Metrics::SetDrillRun(std::string_view group,
                          const std::vector<std::pair<std::string, int>>& failing,
                          double unix_seconds) {
    std::lock_guard lock(event_mutex_);
    auto& entries = drill_failing_[std::string(group)];
    entries.clear();
    for (const auto& [deployment, cases] : failing) entries[deployment] = cases;
    drill_last_run_[std::string(group)] = unix_seconds;
}

void Metrics::KeepDrillGroups(const std::vector<std::string>& groups) {
    std::lock_guard lock(event_mutex_);
    const auto gone = [&](const auto& item) {
        return std::find(groups.begin(), groups.end(), item.first) == groups.end();
    };
    std::erase_if(drill_failing_, gone);
    std::erase_if(drill_last_run_, gone);
}

void Metrics::CountStateFallback(std::string_view operation) {
    CountEvent("switchyard_state_fallbacks_total",
               fmt::format("operation=\"{}\"", EscapeLabel(operation)));
}

void Metrics::CountSpansDropped(std::string_view reason, std::uint64_t n) {
    CountEvent("switchyard_trace_spans_dropped_total",
               fmt::format("reason=\"{}\"", EscapeLabel(reason)), n);
}

std::string Metrics::Render() const {
    std::string out;
    const std::uint64_t attempts = RenderShardSeries(out);
    RenderEngine(out, attempts);
    RenderEvents(out);
    RenderTotalsAndGauges(out);
    return out;
}

std::uint64_t Metrics::RenderShardSeries(std::string& out) const {
    Series<std::uint64_t> requests, attempts, retries;
    Series<Histogram> durations, first_token, waits;
    Series<Usage> usage;
    for (const Shard& s : shards_) {
        std::lock_guard lock(s.mutex);
        Merge(requests, s.requests);
        Merge(durations, s.durations);
        Merge(first_token, s.first_token);
        Merge(attempts, s.attempts);
        Merge(retries, s.retries);
        Merge(waits, s.waits);
        Merge(usage, s.usage);
    }
    Counters(out, "switchyard_requests_total",
             "Downstream requests by route, model group, serving deployment and status.",
             {"route", "model_group", "deployment", "status"}, requests);
    Histograms(out, "switchyard_request_duration_seconds",
               "Downstream request latency, first byte in to last byte out.",
               {"route", "model_group", "deployment"}, durations);
    Histograms(out, "switchyard_time_to_first_token_seconds",
               "Streams: time from the serving attempt's start to its first content event.",
               {"model_group", "deployment"}, first_token);
    Counters(out, "switchyard_upstream_attempts_total",
             "Upstream attempts by deployment and error class (none: success).",
             {"deployment", "error_class"}, attempts);
    Counters(out, "switchyard_retries_total",
             "Attempts sent after an earlier attempt of the same request failed, by the model "
             "group of the failed attempt and its error class.",
             {"model_group", "error_class"}, retries);
    Histograms(out, "switchyard_wait_seconds",
               "Waits of the attempt engine before an attempt, by reason (backoff, retry_after, "
               "headroom).",
               {"reason"}, waits);
    {
        Series<std::uint64_t> input, output;
        Family(out, "switchyard_cost_usd_total", "counter",
               "Cost of the tokens used, at the serving deployment's configured prices, by "
               "client key and deployment.");
        for (const auto& [k, u] : usage) {
            input[k + kSep + "input"] = u.input_tokens;
            output[k + kSep + "output"] = u.output_tokens;
            out += fmt::format("switchyard_cost_usd_total{{{}}} {}\n",
                               Labels({"key", "deployment"}, k), u.cost_usd);
        }
        Merge(input, output);
        Counters(out, "switchyard_tokens_total",
                 "Tokens reported by the providers, by client key, deployment and direction "
                 "(input, output).",
                 {"key", "deployment", "direction"}, input);
    }
    std::uint64_t total_attempts = 0;
    for (const auto& [k, v] : attempts) total_attempts += v;
    return total_attempts;
}

void Metrics::RenderEngine(std::string& out, std::uint64_t total_attempts) const {
    const std::uint64_t engine_requests = engine_requests_.load(std::memory_order_relaxed);
    out += fmt::format(
        "# HELP switchyard_engine_requests_total Requests that reached the attempt engine "
        "(chat, messages, responses, embeddings).\n"
        "# TYPE switchyard_engine_requests_total counter\n"
        "switchyard_engine_requests_total {}\n"
        "# HELP switchyard_retry_amplification_ratio Upstream attempts per request that reached "
        "the attempt engine, since start (1: no retries).\n"
        "# TYPE switchyard_retry_amplification_ratio gauge\n"
        "switchyard_retry_amplification_ratio {}\n",
        engine_requests,
        engine_requests == 0
            ? 0.0
            : static_cast<double>(total_attempts) / static_cast<double>(engine_requests));
}

void Metrics::RenderEvents(std::string& out) const {
    {
        static constexpr std::pair<std::string_view, std::string_view> kEvents[] = {
            {"switchyard_fallbacks_total",
             "Requests answered by a fallback model group, by its depth in the chain (1: the "
             "first fallback)."},
            {"switchyard_key_refusals_total",
             "Requests refused by their client key's limits (requests, tokens, budget)."},
            {"switchyard_headroom_waits_total",
             "Times a request waited for upstream headroom, by lane."},
            {"switchyard_shed_total",
             "Requests answered 429 because no deployment had headroom for their lane in time."},
            {"switchyard_cache_total",
             "Response cache lookups and stores by model group: hit (served, serve: always), "
             "miss, stale (served after the whole chain failed) and stored."},
            {"switchyard_idempotency_total",
             "Requests with an idempotency key, by what the key did: claimed (ran), replayed "
             "(a kept answer), waited (for the request in flight, then its answer), reused (422: "
             "another body), in_use (409: still running at the deadline), unavailable (409: the "
             "answer was too large to keep)."},
            {"switchyard_output_validations_total",
             "Answers checked against a requested JSON schema, by the deployment that produced "
             "them: passed or failed."},
            {"switchyard_spend_cap_disables_total",
             "Times a provider's spend cap disabled a deployment until the end of the month."},
            {"switchyard_panic_attempts_total",
             "Attempts sent to a benched deployment because every target that could serve the "
             "request was benched and this one still answers some of its calls."},
            {"switchyard_hedges_total",
             "Hedged attempts, by the deployment the hedge went to and how its race ended: won "
             "(the hedge answered), lost (the attempt it hedged answered first; the hedge was "
             "cancelled), failed (neither answered)."},
            {"switchyard_drill_cases_total",
             "Fallback drill cases as they end, by model group, the entry (deployment) they were "
             "sent to, and result: passed, failed (an error or an unmet expectation), skipped "
             "(the drill's cost cap, or no headroom in time)."},
            {"switchyard_state_fallbacks_total",
             "Shared-state operations decided from this replica's own state because Redis did "
             "not answer in time, by operation."},
            {"switchyard_trace_spans_dropped_total",
             "Trace spans not exported, by reason (queue_full: the exporter fell behind; export: "
             "the collector refused or was unreachable)."}};
        std::lock_guard lock(event_mutex_);
        for (const auto& [name, help] : kEvents) {
            Family(out, name, "counter", help);
            for (const auto& [k, v] : events_) {
                const std::string_view key = k;
                const std::size_t at = key.find(kSep);
                if (key.substr(0, at) != name) continue;
                out += fmt::format("{}{{{}}} {}\n", name, key.substr(at + 1), v);
            }
        }
        Family(out, "switchyard_drill_failing_cases", "gauge",
               "Cases each entry of a chain failed (or skipped) in the last fallback drill of its "
               "model group, by group and deployment; 0: it passed every case.");
        for (const auto& [group, entries] : drill_failing_) {
            for (const auto& [deployment, cases] : entries) {
                out += fmt::format(
                    "switchyard_drill_failing_cases{{group=\"{}\",deployment=\"{}\"}} {}\n",
                    EscapeLabel(group), EscapeLabel(deployment), cases);
            }
        }
        Family(
            out, "switchyard_drill_last_run_timestamp_seconds", "gauge",
            "When the last fallback drill of each model group ended, by group, in Unix seconds.");
        for (const auto& [group, at] : drill_last_run_) {
            out += fmt::format("switchyard_drill_last_run_timestamp_seconds{{group=\"{}\"}} {}\n",
                               EscapeLabel(group), at);
        }
    }
}

void Metrics::RenderTotalsAndGauges(std::string& out) const {
    out += fmt::format(
        "# HELP switchyard_client_retries_total Requests a client SDK sent as its own retry "
        "(x-stainless-retry-count > 0); clients should set maxRetries to 0.\n"
        "# TYPE switchyard_client_retries_total counter\n"
        "switchyard_client_retries_total {}\n"
        "# HELP switchyard_client_repeats_total Requests served as a client's own retry because "
        "they repeat one Switchyard just gave up on (same credential, route and body), sent "
        "without a retry header.\n"
        "# TYPE switchyard_client_repeats_total counter\n"
        "switchyard_client_repeats_total {}\n"
        "# HELP switchyard_trace_spans_exported_total Trace spans sent to the OTLP collector.\n"
        "# TYPE switchyard_trace_spans_exported_total counter\n"
        "switchyard_trace_spans_exported_total {}\n",
        client_retries_.load(), client_repeats_.load(), spans_exported_.load());
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
    // The durable store's families are declared always (alert rules name them); samples come
    // with a store.
    out +=
        "# HELP switchyard_state_store_up Whether the durable state store's last write reached "
        "the disk (state.backend sqlite).\n"
        "# TYPE switchyard_state_store_up gauge\n";
    if (const int up = store_up_.load(); up >= 0) {
        out += fmt::format("switchyard_state_store_up {}\n", up);
    }
    out +=
        "# HELP switchyard_state_store_writes_total Writes of the durable state store, by result "
        "(ok; failed: a full or read-only disk, what they held is written later).\n"
        "# TYPE switchyard_state_store_writes_total counter\n";
    if (store_up_.load() >= 0) {
        out += fmt::format(
            "switchyard_state_store_writes_total{{result=\"ok\"}} {}\n"
            "switchyard_state_store_writes_total{{result=\"failed\"}} {}\n",
            store_writes_ok_.load(), store_writes_failed_.load());
    }
    static constexpr const char* kLineResults[] = {"succeeded", "failed", "canceled", "expired"};
    out +=
        "# HELP switchyard_batch_lines_total Lines of batch jobs as they end, by where they ran "
        "(gateway, provider) and result.\n"
        "# TYPE switchyard_batch_lines_total counter\n";
    for (std::size_t i = 0; i < batch_lines_.size(); ++i) {
        out += fmt::format("switchyard_batch_lines_total{{mode=\"{}\",result=\"{}\"}} {}\n",
                           i < 4 ? "gateway" : "provider", kLineResults[i % 4],
                           batch_lines_[i].load());
    }
    out += fmt::format(
        "# HELP switchyard_batch_jobs_running Batch jobs running now.\n"
        "# TYPE switchyard_batch_jobs_running gauge\n"
        "switchyard_batch_jobs_running {}\n",
        batch_jobs_running_.load());
    static constexpr const char* kJobStatuses[] = {"completed", "failed", "expired", "cancelled"};
    out +=
        "# HELP switchyard_batch_jobs_total Batch jobs as they end, by status.\n"
        "# TYPE switchyard_batch_jobs_total counter\n";
    for (std::size_t i = 0; i < batch_jobs_ended_.size(); ++i) {
        out += fmt::format("switchyard_batch_jobs_total{{status=\"{}\"}} {}\n", kJobStatuses[i],
                           batch_jobs_ended_[i].load());
    }
}

}  // namespace switchyard::observe
