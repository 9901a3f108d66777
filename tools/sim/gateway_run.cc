#include "gateway_run.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>

#include "config/config_loader.h"
#include "gateway.h"
#include "policy/retry_after.h"

namespace switchyard::sim {

namespace {

// What a client's retry layer reads from an answer.
struct Answer {
    unsigned status = 0;  // 0: no HTTP answer (connection failure, timeout)
    bool degraded = false;
    bool interrupted = false;
    bool shed = false;
    std::string head;

    bool Ok() const { return status >= 200 && status < 300 && !degraded && !interrupted; }
};

std::optional<std::string_view> HeaderOf(std::string_view head, std::string_view name) {
    while (!head.empty()) {
        const std::size_t end = head.find("\r\n");
        const std::string_view line = head.substr(0, end);
        head = end == std::string_view::npos ? std::string_view() : head.substr(end + 2);
        if (line.size() > name.size() + 1 && line.substr(0, name.size()) == name &&
            line.substr(name.size(), 2) == ": ") {
            return line.substr(name.size() + 2);
        }
    }
    return std::nullopt;
}

// The official SDKs' retry decision (docs/providers.md#how-the-official-sdks-retry): x-should-retry
// first, then 408, 409, 429, 5xx and failures without an answer.
bool Retryable(const RetryLayer& layer, const Answer& answer) {
    if (answer.status >= 200 && answer.status < 300) return false;  // a stream cut, a degradation
    if (layer.respect_should_retry) {
        if (const auto should = HeaderOf(answer.head, "x-should-retry")) return *should == "true";
    }
    const unsigned s = answer.status;
    return s == 0 || s == 408 || s == 409 || s == 429 || s >= 500;
}

// The wait before retry `n` (0 for the first): the answer's retry-after-ms or retry-after when
// the SDKs honour it (0 to 60 s), else the layer's backoff.
double DelayMs(const RetryLayer& layer, int n, const Answer& answer, double uniform) {
    if (layer.backoff != RetryLayer::Backoff::kNone) {
        std::optional<double> hinted;
        if (const auto ms = HeaderOf(answer.head, "retry-after-ms")) {
            hinted = std::strtod(std::string(*ms).c_str(), nullptr);
        } else if (const auto s = HeaderOf(answer.head, "retry-after")) {
            hinted = std::strtod(std::string(*s).c_str(), nullptr) * 1000.0;
        }
        if (hinted && *hinted >= 0 && *hinted <= 60'000) return *hinted;
    }
    const double exponential = std::min(layer.base_ms * std::pow(2.0, n), layer.cap_ms);
    switch (layer.backoff) {
        case RetryLayer::Backoff::kStainless:
            return exponential * (1 - 0.25 * uniform);
        case RetryLayer::Backoff::kExponential:
            return exponential;
        case RetryLayer::Backoff::kNone:
            return 0;
    }
    return exponential;
}

double Percentile(std::vector<double> values, double p) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const std::size_t rank =
        static_cast<std::size_t>(std::ceil(p * static_cast<double>(values.size()))) - 1;
    return values[std::min(rank, values.size() - 1)];
}

// One logical request of a client and what became of it.
struct Record {
    std::size_t client = 0;
    double arrival_s = 0;
    double latency_ms = 0;
    Answer answer;
    int http_calls = 0;  // requests the innermost layer sent
    bool finished = false;
};

class Run {
  public:
    Run(const Scenario& scenario, std::uint64_t seed)
        : scenario_(scenario),
          loop_(clock_),
          client_rng_(seed * 3 + 1),
          config_(LoadGatewayConfig(scenario)) {
        std::vector<SimProvider*> by_index(config_->deployment_count, nullptr);
        std::uint64_t provider_seed = seed * 7919;
        for (const config::ModelGroup& group : config_->models) {
            for (const config::Deployment& d : group.deployments) {
                const auto model = scenario.providers.find(d.name);
                providers_.push_back(std::make_unique<SimProvider>(
                    d.name, d.provider,
                    model == scenario.providers.end() ? ProviderModel{} : model->second, clock_,
                    ++provider_seed));
                by_index[d.index] = providers_.back().get();
                if (std::getenv("SWITCHYARD_SIM_TRACE") != nullptr) {
                    providers_.back()->Trace(stderr);
                }
                by_name_[d.name] = providers_.back().get();
            }
        }
        for (const auto& [name, model] : scenario.providers) {
            if (!by_name_.contains(name)) {
                throw std::runtime_error("providers." + name + ": no deployment of that name");
            }
        }
        gateway_ = std::make_unique<SimGateway>(*config_, loop_, clock_, by_index, seed * 31 + 5);
        for (const ClientSpec& c : scenario.clients) {
            budgets_.push_back(std::make_unique<policy::RetryBudget>(
                config_->retry.budget_max_tokens, config_->retry.budget_token_ratio));
            std::size_t lane = 0;
            if (!c.lane.empty()) {
                const auto& lanes = config_->limits.lanes;
                const auto it =
                    std::find_if(lanes.begin(), lanes.end(),
                                 [&](const config::Lane& l) { return l.name == c.lane; });
                if (it == lanes.end())
                    throw std::runtime_error("client lane '" + c.lane + "' unknown");
                lane = static_cast<std::size_t>(it - lanes.begin());
            }
            lanes_.push_back(lane);
            if (!c.direct.empty() && !by_name_.contains(c.direct)) {
                throw std::runtime_error("client " + c.name + ": no deployment '" + c.direct + "'");
            }
        }
    }

    RunResult Execute() {
        ScheduleArrivals();
        loop_.Run();
        return Summarize();
    }

  private:
    void ScheduleArrivals() {
        for (std::size_t i = 0; i < scenario_.clients.size(); ++i) {
            const ClientSpec& c = scenario_.clients[i];
            const double stop = c.stop_s.value_or(scenario_.duration_s);
            if (c.burst > 0) {
                for (int n = 0; n < c.burst; ++n) Arrive(i, c.start_s);
                continue;
            }
            std::exponential_distribution<double> gap(c.rate_per_s);
            double t = c.start_s;
            for (int n = 1;; ++n) {
                // Evenly spaced arrivals are counted, not summed, so that no rounding adds one.
                t = c.poisson ? t + gap(client_rng_) : c.start_s + n / c.rate_per_s;
                if (t >= stop) break;
                Arrive(i, t);
            }
        }
    }

    void Arrive(std::size_t client, double at_s) {
        const auto record = std::make_shared<Record>();
        record->client = client;
        record->arrival_s = at_s;
        records_.push_back(record);
        loop_.At(VirtualClock::Start() + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                             std::chrono::duration<double>(at_s)),
                 [this, record] {
                     Through(record, 0, [this, record](Answer answer) {
                         record->answer = std::move(answer);
                         record->latency_ms = clock_.ElapsedMs() - record->arrival_s * 1000.0;
                         record->finished = true;
                     });
                 });
    }

    // Sends `record`'s request through retry layers [layer, end), then over HTTP.
    void Through(const std::shared_ptr<Record>& record, std::size_t layer,
                 std::function<void(Answer)> done) {
        const ClientSpec& c = scenario_.clients[record->client];
        if (layer == c.layers.size()) {
            Http(record, -1, std::move(done));
            return;
        }
        Try(record, layer, 0, std::move(done));
    }

    void Try(const std::shared_ptr<Record>& record, std::size_t layer, int n,
             std::function<void(Answer)> done) {
        const ClientSpec& c = scenario_.clients[record->client];
        const RetryLayer& spec = c.layers[layer];
        auto next = [this, record, layer, n, done = std::move(done)](Answer answer) mutable {
            const RetryLayer& l = scenario_.clients[record->client].layers[layer];
            if (!answer.Ok() && n < l.max_retries && Retryable(l, answer)) {
                const double uniform = std::uniform_real_distribution<double>(0, 1)(client_rng_);
                const double delay = DelayMs(l, n, answer, uniform);
                loop_.After(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::duration<double, std::milli>(delay)),
                            [this, record, layer, n, done = std::move(done)]() mutable {
                                Try(record, layer, n + 1, std::move(done));
                            });
                return;
            }
            done(std::move(answer));
        };
        if (layer + 1 == c.layers.size()) {
            Http(record, spec.send_retry_count ? n : -1, std::move(next));
        } else {
            Through(record, layer + 1, std::move(next));
        }
    }

    // One HTTP request: to the gateway, or straight to a provider.
    void Http(const std::shared_ptr<Record>& record, int retry_count,
              std::function<void(Answer)> done) {
        ++record->http_calls;
        const ClientSpec& c = scenario_.clients[record->client];
        if (!c.direct.empty()) {
            SimProvider* provider = by_name_.at(c.direct);
            Reply reply = provider->Call(c.stream, c.input_tokens, c.max_tokens);
            Answer answer;
            answer.status = reply.transport == policy::Transport::kOk ? reply.status : 0;
            answer.interrupted = reply.cut_mid_stream;
            answer.head = reply.head;
            // An SDK's own timeout: 10 minutes.
            const milliseconds duration = reply.stalls ? milliseconds(600'000) : reply.duration;
            if (reply.stalls) answer.status = 0;
            loop_.After(duration,
                        [provider, answer = std::move(answer), done = std::move(done)]() mutable {
                            provider->Ended();
                            done(std::move(answer));
                        });
            return;
        }
        GatewayRequest request;
        request.model = c.model;
        request.lane = lanes_[record->client];
        request.input_tokens = c.input_tokens;
        request.max_tokens = c.max_tokens;
        request.stream = c.stream;
        request.sdk_retry_count = retry_count;
        if (c.deadline_ms) request.deadline = milliseconds(*c.deadline_ms);
        request.client_budget = budgets_[record->client].get();
        gateway_->Handle(std::move(request), [done = std::move(done)](GatewayAnswer g) {
            Answer answer;
            answer.status = g.status;
            answer.degraded = g.degraded;
            answer.interrupted = g.interrupted;
            answer.shed = g.shed;
            answer.head = std::move(g.head);
            done(std::move(answer));
        });
    }

    RunResult Summarize() const {
        RunResult result;
        Figures& f = result.figures;
        std::uint64_t ok = 0, degraded = 0, interrupted = 0, shed = 0, http = 0, unfinished = 0;
        std::vector<double> ok_latency;
        for (const auto& r : records_) {
            if (!r->finished) {
                ++unfinished;
                continue;
            }
            http += static_cast<std::uint64_t>(r->http_calls);
            if (r->answer.Ok()) {
                ++ok;
                ok_latency.push_back(r->latency_ms);
            }
            degraded += r->answer.degraded;
            interrupted += r->answer.interrupted;
            shed += r->answer.shed;
        }
        std::uint64_t calls = 0, rate_limited = 0, failed = 0;
        for (const auto& p : providers_) {
            calls += p->Calls();
            rate_limited += p->RateLimited();
            failed += p->Failed();
        }
        const double requests = static_cast<double>(records_.size());
        const auto per = [&](double x) { return requests > 0 ? x / requests : 0.0; };
        f.emplace_back("requests", requests);
        f.emplace_back("ok", static_cast<double>(ok));
        f.emplace_back("availability_pct", 100.0 * per(static_cast<double>(ok)));
        f.emplace_back("degraded", static_cast<double>(degraded));
        f.emplace_back("interrupted", static_cast<double>(interrupted));
        f.emplace_back("shed", static_cast<double>(shed));
        f.emplace_back("unfinished", static_cast<double>(unfinished));
        f.emplace_back("client_http_per_request", per(static_cast<double>(http)));
        f.emplace_back("upstream_calls", static_cast<double>(calls));
        f.emplace_back("upstream_per_request", per(static_cast<double>(calls)));
        f.emplace_back("upstream_failed", static_cast<double>(failed));
        f.emplace_back("upstream_429", static_cast<double>(rate_limited));
        double mean = 0;
        for (const double ms : ok_latency) mean += ms / static_cast<double>(ok_latency.size());
        f.emplace_back("mean_ok_ms", mean);
        f.emplace_back("p50_ok_ms", Percentile(ok_latency, 0.5));
        f.emplace_back("p99_ok_ms", Percentile(ok_latency, 0.99));
        for (const auto& p : providers_) {
            f.emplace_back("calls." + p->Deployment(), static_cast<double>(p->Calls()));
        }
        if (scenario_.clients.size() > 1) {
            for (std::size_t i = 0; i < scenario_.clients.size(); ++i) {
                std::vector<double> latency;
                std::uint64_t n = 0, good = 0, client_shed = 0;
                for (const auto& r : records_) {
                    if (r->client != i || !r->finished) continue;
                    ++n;
                    client_shed += r->answer.shed;
                    if (!r->answer.Ok()) continue;
                    ++good;
                    latency.push_back(r->latency_ms);
                }
                const std::string& name = scenario_.clients[i].name;
                f.emplace_back(
                    name + ".ok_pct",
                    n > 0 ? 100.0 * static_cast<double>(good) / static_cast<double>(n) : 0.0);
                f.emplace_back(name + ".shed", static_cast<double>(client_shed));
                f.emplace_back(name + ".p50_ok_ms", Percentile(latency, 0.5));
                f.emplace_back(name + ".p99_ok_ms", Percentile(latency, 0.99));
            }
        }
        if (scenario_.timeline_s > 0) {
            const auto buckets =
                static_cast<std::size_t>(std::ceil(scenario_.duration_s / scenario_.timeline_s));
            result.timeline.resize(buckets);
            for (std::size_t b = 0; b < buckets; ++b) {
                result.timeline[b].start_s = static_cast<double>(b) * scenario_.timeline_s;
            }
            for (const auto& r : records_) {
                const auto b = static_cast<std::size_t>(r->arrival_s / scenario_.timeline_s);
                if (b >= buckets) continue;
                ++result.timeline[b].requests;
                if (r->finished && r->answer.Ok()) ++result.timeline[b].ok;
            }
            for (const auto& p : providers_) {
                for (const double at : p->CallTimes()) {
                    const auto b = static_cast<std::size_t>(at / scenario_.timeline_s);
                    if (b < buckets) ++result.timeline[b].upstream_calls;
                }
            }
        }
        return result;
    }

    const Scenario& scenario_;
    VirtualClock clock_;
    EventLoop loop_;
    std::mt19937_64 client_rng_;
    std::shared_ptr<const config::Config> config_;
    std::vector<std::unique_ptr<SimProvider>> providers_;
    std::map<std::string, SimProvider*> by_name_;
    std::unique_ptr<SimGateway> gateway_;
    std::vector<std::unique_ptr<policy::RetryBudget>> budgets_;
    std::vector<std::size_t> lanes_;
    std::vector<std::shared_ptr<Record>> records_;
};

}  // namespace

std::shared_ptr<const config::Config> LoadGatewayConfig(const Scenario& scenario) {
    const config::EnvLookup env = [](std::string_view) -> std::optional<std::string> {
        return std::string("sim-key");
    };
    const config::LoadResult loaded =
        config::LoadConfigText(scenario.gateway_yaml, scenario.name + " (gateway)", env);
    if (!loaded.config) {
        std::string problems;
        for (const auto& p : loaded.problems) problems += "\n  " + p.ToString();
        throw std::runtime_error("the scenario's gateway config does not load:" + problems);
    }
    return loaded.config;
}

RunResult RunGatewayScenario(const Scenario& scenario, std::uint64_t seed) {
    Run run(scenario, seed);
    return run.Execute();
}

}  // namespace switchyard::sim
