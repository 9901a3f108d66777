#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "scenario.h"

namespace switchyard::sim {

// A run's figures, in the order they are printed: name and value.
using Figures = std::vector<std::pair<std::string, double>>;

// One bucket of a run's timeline: requests by arrival, upstream calls by sending time.
struct TimelineRow {
    double start_s = 0;
    std::uint64_t requests = 0;
    std::uint64_t ok = 0;
    std::uint64_t upstream_calls = 0;
};

struct RunResult {
    Figures figures;
    std::vector<TimelineRow> timeline;
};

// The scenario's gateway config, loaded as Switchyard loads its own (any `os.environ/NAME` reads
// a placeholder). Throws std::runtime_error listing the problems when it does not load.
std::shared_ptr<const config::Config> LoadGatewayConfig(const Scenario& scenario);

// Runs a gateway scenario once with `seed`: clients send through their retry layers to the
// simulated gateway (or directly to a provider), which answers from the simulated providers.
// Throws std::runtime_error when the scenario's gateway config does not load.
RunResult RunGatewayScenario(const Scenario& scenario, std::uint64_t seed);

}  // namespace switchyard::sim
