#pragma once

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "answers/idempotency_store.h"
#include "answers/response_cache.h"
#include "config/config.h"
#include "core/asio.h"
#include "core/clock.h"
#include "limits/body_budget.h"
#include "limits/client_budgets.h"
#include "limits/client_keys.h"
#include "limits/headroom.h"
#include "limits/lanes.h"
#include "limits/recent_give_ups.h"
#include "observe/access_log.h"
#include "observe/metrics.h"
#include "observe/trace_exporter.h"
#include "routing/deployment_health.h"
#include "server/runtime.h"
#include "state/redis_state.h"
#include "upstream/connection_pool.h"
#include "upstream/tls_contexts.h"
#include "upstream/watchdog.h"

namespace switchyard::server {

class DurableState;
class BatchRunner;
class DrillSchedule;

// The outcome of a config reload.
struct ReloadResult {
    std::vector<std::string> problems;  // empty: the new config serves new requests
    std::size_t models = 0;
    std::size_t deployments = 0;
};

// One line on stderr per reload, whatever asked for it (`trigger`: SIGHUP, admin).
void ReportReload(std::string_view trigger, const ReloadResult& result);

// What every worker shares: the current runtime (config and per-deployment state, replaced whole
// by a reload) and the process-wide parts. Built once by the composition root (main) and
// outlives all workers.
struct ServerContext {
    RuntimeSlot& runtime;
    const core::Clock& clock;
    observe::Metrics& metrics;
    observe::AccessLog& access_log;
    upstream::TlsContexts& tls;
    limits::ClientBudgets& client_budgets;
    limits::ClientKeys& keys;
    // Loads the config file again and swaps it in (SIGHUP, POST /admin/reload); serialised.
    std::function<ReloadResult()> reload;
    std::atomic<bool> draining{false};
    // The fleet's shared state (state.backend: redis); null otherwise.
    state::RedisState* shared = nullptr;
    // The durable store (state.backend: sqlite, the default); null otherwise.
    DurableState* durable = nullptr;
    // Kept answers (docs/answers.md): this replica's idempotency keys (sized at start) and the
    // model groups' response caches. Null: not kept (tools that serve no requests).
    answers::IdempotencyStore* idempotency = nullptr;
    answers::ResponseCache* cache = nullptr;
    // Where traced requests' spans go (telemetry.otlp_endpoint); null: tracing is off.
    observe::TraceExporter* traces = nullptr;
    // Where answers too large to check in passing are checked against their JSON schemas, off
    // the event loops (server/output_check.h). Null: every check runs in place.
    asio::thread_pool* checks = nullptr;
    // Requests given up on lately: the same one again is a client's retry
    // (limits/recent_give_ups.h).
    limits::RecentGiveUps* give_ups = nullptr;
    // Request bodies in flight, in all and per client (server.max_body_bytes_in_flight).
    limits::BodyBudget* bodies = nullptr;
    // The Batch APIs (docs/batches.md): the jobs' runner and its files. Null: no durable store.
    BatchRunner* batches = nullptr;
    // The scheduled fallback drills (docs/drills.md#scheduled-drills); null in tools.
    DrillSchedule* drills = nullptr;
    // A random token, new with each process, that the runner's lines carry to be admitted as
    // their batch's owner (server/admission.h). Empty: no lines run.
    std::string batch_token;
    // Detached requests whose clients left, still working for their kept answers (ClientWatch).
    std::atomic<int> orphans{0};

    // The config new requests get (settings read once at start-up use it too).
    std::shared_ptr<const config::Config> Config() const { return runtime.Current()->config; }
};

// A downstream connection as its worker sees it, for draining: idle connections are closed at
// once, busy ones finish their request first.
struct SessionHandle {
    beast::tcp_stream* stream = nullptr;
    bool busy = false;
};

// One event-loop thread: its io_context, acceptor, upstream connection pool and random source.
// Everything in here is touched only from the worker's own thread.
struct Worker {
    Worker(unsigned index_, ServerContext& context_, std::uint64_t seed)
        : index(index_),
          context(context_),
          ioc(1),
          watchdog(ioc.get_executor(), context_.clock),
          pool(ioc.get_executor(), context_.tls, context_.metrics, watchdog),
          rng(seed) {}

    unsigned index;
    ServerContext& context;
    asio::io_context ioc;
    upstream::Watchdog watchdog;
    upstream::ConnectionPool pool;
    std::mt19937_64 rng;
    std::optional<tcp::acceptor> acceptor;
    std::list<SessionHandle> sessions;
};

}  // namespace switchyard::server
