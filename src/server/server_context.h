#pragma once

#include <atomic>
#include <list>
#include <memory>
#include <optional>
#include <random>

#include "config/config.h"
#include "core/asio.h"
#include "core/clock.h"
#include "limits/client_budgets.h"
#include "limits/client_keys.h"
#include "limits/headroom.h"
#include "limits/lanes.h"
#include "observe/access_log.h"
#include "observe/metrics.h"
#include "routing/deployment_health.h"
#include "upstream/connection_pool.h"
#include "upstream/tls_contexts.h"
#include "upstream/watchdog.h"

namespace switchyard::server {

// What every worker shares: the config snapshot and the process-wide sinks. Built once by the
// composition root (main) and outlives all workers.
struct ServerContext {
    std::shared_ptr<const config::Config> config;
    const core::Clock& clock;
    observe::Metrics& metrics;
    observe::AccessLog& access_log;
    upstream::TlsContexts& tls;
    routing::DeploymentHealth& health;
    limits::ClientBudgets& client_budgets;
    limits::ClientKeys& keys;
    limits::Headroom& headroom;
    limits::Lanes& lanes;
    std::atomic<bool> draining{false};
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
