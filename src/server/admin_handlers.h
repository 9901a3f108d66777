#pragma once

#include "server/request_context.h"

namespace switchyard::server {

// GET /v1/models: the model groups of the config, in OpenAI's list format.
asio::awaitable<void> ServeModels(RequestContext& ctx);

// GET /health/live (the process serves) and /health/ready (it accepts traffic: not draining).
asio::awaitable<void> ServeHealth(RequestContext& ctx, bool readiness);

// GET /metrics: Prometheus text format.
asio::awaitable<void> ServeMetrics(RequestContext& ctx);

}  // namespace switchyard::server
