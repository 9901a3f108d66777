#pragma once

#include "server/request_context.h"

namespace switchyard::server {

// Whether the request presents the master key (`Authorization: Bearer KEY` or `x-api-key: KEY`),
// compared in constant time.
bool PresentsMasterKey(const RequestContext& ctx);

// The master key check of admin endpoints: an error to answer with, or nullopt when allowed.
std::optional<core::LocalError> CheckMasterKey(const RequestContext& ctx);

// GET /v1/models (the model groups a caller may use) and GET /v1/models/{id} (one of them, or a
// 404 that names no other), in OpenAI's format — or Anthropic's for a request that carries
// `anthropic-version`, as the Anthropic SDK's models.list and models.retrieve send.
asio::awaitable<void> ServeModels(RequestContext& ctx, std::optional<std::string> id = {});

// GET /health/live (the process serves) and /health/ready (it accepts traffic: not draining).
asio::awaitable<void> ServeHealth(RequestContext& ctx, bool readiness);

// GET /metrics: Prometheus text format.
asio::awaitable<void> ServeMetrics(RequestContext& ctx);

// GET /status (master key): every deployment's health — rate-limited, cooling, breaker and
// disabled states with their end times, in-flight attempts, latency, last error, retry budget.
asio::awaitable<void> ServeStatus(RequestContext& ctx);
// GET /dashboard: the live dashboard page (it asks for the master key itself).
asio::awaitable<void> ServeDashboard(RequestContext& ctx);

// POST /admin/reload (master key): loads the config file again, validates it fully and swaps it
// in for new requests; 200 with the new groups' and deployments' counts, or 400 listing every
// problem (the old config keeps serving).
asio::awaitable<void> ServeReload(RequestContext& ctx);

// POST /admin/deployments/{name}/enable (master key): an operator re-enables a deployment that
// a spend cap disabled (also clears its cooldown, breaker and rate limit).
asio::awaitable<void> ServeEnable(RequestContext& ctx, std::string_view name);

// GET /admin/state (master key): the durable store's contents as `switchyard state export`
// writes them, read from the running gateway (a backup; docs/state.md#backups-and-moves).
asio::awaitable<void> ServeStateExport(RequestContext& ctx);

// GET /admin/drills (master key): the last report of every scheduled fallback drill
// (docs/drills.md#scheduled-drills), {"drills": [...]}.
asio::awaitable<void> ServeDrills(RequestContext& ctx);

}  // namespace switchyard::server
