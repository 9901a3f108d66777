#pragma once

#include <chrono>
#include <string>

#include "server/runtime.h"

namespace switchyard::server {

// The runtime's state as Prometheus gauges, read at scrape time (docs/observability.md#metrics):
// each deployment's health state (1 for the current one, 0 for the others), its headroom
// buckets' level and capacity, and each lane's queue depth.
std::string RenderStateGauges(const Runtime& runtime, std::chrono::steady_clock::time_point now);

}  // namespace switchyard::server
