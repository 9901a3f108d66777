#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "provider.h"

namespace switchyard::sim {

// One layer of retries between a client and the gateway (an SDK, an application's own wrapper),
// outermost first in ClientSpec::layers.
struct RetryLayer {
    enum class Backoff {
        kStainless,  // the official SDKs: min(base * 2^n, cap) * (1 - 0.25 U); retry-after honoured
        kExponential,  // min(base * 2^n, cap), no jitter; retry-after honoured
        kNone,         // retries at once
    };
    int max_retries = 2;
    Backoff backoff = Backoff::kStainless;
    double base_ms = 500;
    double cap_ms = 8000;
    // x-should-retry: false stops it (the official SDKs); an application's wrapper may not look.
    bool respect_should_retry = true;
    // Sends x-stainless-retry-count (the official SDKs do; only the innermost layer sends HTTP).
    bool send_retry_count = true;
};

// A population of clients sending requests.
struct ClientSpec {
    std::string name;
    std::string model;      // the model group (through the gateway)
    std::string direct;     // a deployment to call directly, bypassing the gateway
    std::string lane;       // the gateway's lane (its first when empty)
    double rate_per_s = 1;  // open-loop arrivals
    bool poisson = true;    // exponential gaps; false: evenly spaced
    double start_s = 0;
    std::optional<double> stop_s;  // default: the scenario's duration
    int burst = 0;                 // > 0: this many requests all at start_s instead of a rate
    std::int64_t input_tokens = 500;
    std::int64_t max_tokens = 256;
    bool stream = false;
    std::optional<int> deadline_ms;  // x-switchyard-deadline-ms
    std::vector<RetryLayer> layers;
};

// N clients contending for one resource (the optimistic-concurrency experiment of the AWS
// Architecture Blog's "Exponential Backoff And Jitter"): see contention.h.
struct ContentionSpec {
    std::vector<int> clients{1, 5, 10, 20, 50, 100, 150, 200};
    std::vector<std::string> strategies{"none", "exponential", "full", "equal", "decorrelated"};
    double base_ms = 5;
    double cap_ms = 2000;
    int repetitions = 100;
};

struct Scenario {
    std::string name;
    std::string kind = "gateway";  // gateway | contention
    double duration_s = 60;
    std::uint64_t seed = 1;
    int runs = 1;              // repetitions with seeds seed, seed + 1, ...; numbers are means
    double timeline_s = 0;     // > 0: a timeline CSV in buckets of this width
    std::string gateway_yaml;  // the gateway's config, as Switchyard loads it
    std::map<std::string, ProviderModel> providers;  // by deployment name
    std::vector<ClientSpec> clients;
    ContentionSpec contention;
};

// One run of a scenario file: its base, or one of its variants, at one value of its sweep.
struct RunSpec {
    std::string variant;  // "" for the base
    std::string sweep;    // the sweep value's label (or the value as written), "" without one
    Scenario scenario;
};

// Reads a scenario file (docs/evidence/README.md#scenario-files) and expands its variants and
// sweep; `sets` are extra `path=value` overrides (YAML values) applied to every run. Throws
// std::runtime_error with the file and the problem.
std::vector<RunSpec> LoadScenario(const std::string& path, const std::vector<std::string>& sets);

}  // namespace switchyard::sim
