#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/config.h"
#include "core/asio.h"
#include "core/clock.h"
#include "core/error.h"
#include "observe/metrics.h"
#include "policy/classify.h"
#include "upstream/tls_contexts.h"
#include "upstream/watchdog.h"

namespace switchyard::upstream {

// One upstream connection, plain TCP or TLS over TCP, with its read buffer.
struct Connection {
    std::string key;  // the pool it belongs to
    std::optional<beast::tcp_stream> tcp;
    std::optional<beast::ssl_stream<beast::tcp_stream>> tls;
    beast::flat_buffer buffer;
    std::chrono::steady_clock::time_point idle_since;
    bool reused = false;  // served an earlier exchange

    beast::tcp_stream& Lowest() { return tls ? beast::get_lowest_layer(*tls) : *tcp; }
};

// Whether nothing arrived on `connection` since its last exchange ended: no bytes buffered by us
// or by TLS, none waiting in the socket, and no close from the peer. Only a quiet connection may
// carry another request: HTTP/1.1 matches a response to a request by order alone, so bytes that
// arrived while idle would be taken for the next request's answer, whichever client sent it.
bool Quiet(Connection& connection);

// Keep-alive connections of one worker, keyed by scheme, host, port and trust anchors. Lives on
// its worker's io_context and is only used from that thread, so it takes no locks.
class ConnectionPool final {
  public:
    ConnectionPool(asio::any_io_executor executor, TlsContexts& tls, observe::Metrics& metrics,
                   Watchdog& watchdog);

    Watchdog& WatchdogOf() { return watchdog_; }
    const asio::any_io_executor& Executor() const { return executor_; }

    static std::string KeyOf(const config::Deployment& deployment);

    // An idle, quiet connection for `deployment`, or null. Connections that are not quiet are
    // closed, never reused.
    std::unique_ptr<Connection> TakeIdle(const config::Deployment& deployment);

    // Opens a new connection (resolve, connect, TLS handshake with SNI and host name
    // verification) within `timeout`, enforced through `watch`. On failure returns null and
    // fills `error` and `transport`.
    asio::awaitable<std::unique_ptr<Connection>> Connect(const config::Deployment& deployment,
                                                         std::chrono::milliseconds timeout,
                                                         Watch& watch, core::LocalError& error,
                                                         policy::Transport& transport);

    // Keeps a connection whose last exchange ended cleanly for reuse.
    void Release(std::unique_ptr<Connection> connection);

    static constexpr std::size_t kMaxIdlePerKey = 256;
    static constexpr std::chrono::seconds kIdleTtl{30};

  private:
    asio::any_io_executor executor_;
    TlsContexts& tls_;
    observe::Metrics& metrics_;
    Watchdog& watchdog_;
    const core::Clock& clock_;
    tcp::resolver resolver_;
    std::unordered_map<std::string, std::vector<std::unique_ptr<Connection>>> idle_;
};

}  // namespace switchyard::upstream
