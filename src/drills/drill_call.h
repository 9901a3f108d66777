#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/asio.h"
#include "core/clock.h"
#include "drills/drill_case.h"
#include "drills/drill_entries.h"
#include "upstream/connection_pool.h"

namespace switchyard::drills {

// How one case went on one entry.
struct CaseResult {
    std::string id;
    bool passed = false;
    // The call was not made (the drill's cost cap, no headroom in time): not passed either.
    bool skipped = false;
    unsigned status = 0;             // the provider's HTTP status; 0: no answer
    std::string error_class;         // the classifier's name for a failed call (policy::Name)
    std::string error;               // what went wrong with the call, or why it was skipped
    std::vector<std::string> unmet;  // expectations the answer broke
    double latency_ms = 0;
    std::int64_t input_tokens = -1;  // -1: not reported
    std::int64_t output_tokens = -1;
    std::optional<double> cost;  // USD at the deployment's prices; nullopt: no usage reported
    std::string served_model;    // the `model` the provider's answer names
};

// Sends `drill_case` to `entry` exactly as an attempt of production would
// (docs/drills.md#what-a-drill-calls): the request built for the deployment's API with the
// entry's prompt and params at depth > 0, the config's connect, first-byte and total timeouts,
// one try, no retry; then the answer checked to be one, translated to the case's API and held
// against the case's expectations. Nothing is recorded in any deployment's health.
asio::awaitable<CaseResult> CallEntry(upstream::ConnectionPool& pool, const core::Clock& clock,
                                      const config::Config& config, const DrillEntry& entry,
                                      const DrillCase& drill_case);

}  // namespace switchyard::drills
