#pragma once

#include "config/config.h"
#include "core/asio.h"
#include "core/clock.h"
#include "drills/drill_case.h"
#include "drills/drill_entries.h"
#include "drills/drill_report.h"
#include "upstream/connection_pool.h"

namespace switchyard::drills {

// Sends `drill_case` to `entry` exactly as an attempt of production would
// (docs/drills.md#what-a-drill-calls): the request built for the deployment's API with the
// entry's prompt and params at depth > 0, the config's connect, first-byte and total timeouts,
// one try, no retry; then the answer checked to be one, translated to the case's API and held
// against the case's expectations. Nothing is recorded in any deployment's health.
asio::awaitable<CaseResult> CallEntry(upstream::ConnectionPool& pool, const core::Clock& clock,
                                      const config::Config& config, const DrillEntry& entry,
                                      const DrillCase& drill_case);

}  // namespace switchyard::drills
