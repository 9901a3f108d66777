#pragma once

#include <string>

#include "core/clock.h"
#include "upstream/connection_pool.h"

namespace switchyard::upstream {

// Fire-and-forget POST of a JSON document to `url` (an alert webhook), on the worker of `pool`,
// through the same client as every upstream call (TLS with SNI and host name verification, the
// pool's keep-alive connections). Bounded by a 10 s timeout; a failure is reported on stderr and
// never retried, and never delays a request.
void PostWebhook(ConnectionPool& pool, const core::Clock& clock, const std::string& url,
                 std::string json);

}  // namespace switchyard::upstream
