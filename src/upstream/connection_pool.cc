#include "upstream/connection_pool.h"

#include <sys/socket.h>

#include <cerrno>

namespace switchyard::upstream {
namespace {

// Limits of this process or machine, not of the upstream: no more file descriptors, socket
// buffers or memory.
bool IsLocalLimit(const boost::system::error_code& ec) {
    using boost::system::errc::errc_t;
    return ec == errc_t::too_many_files_open || ec == errc_t::too_many_files_open_in_system ||
           ec == errc_t::no_buffer_space || ec == errc_t::not_enough_memory;
}

core::LocalError Unreachable(const config::Deployment& d, std::string_view step,
                             const boost::system::error_code& ec) {
    if (IsLocalLimit(ec)) {
        return {core::ErrorKind::kOverloaded,
                "Switchyard is at a limit of its own and cannot "
                "open a connection to '" +
                    d.name + "' now (" + ec.message() + "); retry shortly."};
    }
    if (ec == beast::error::timeout) {
        return {core::ErrorKind::kUpstreamTimeout,
                "Upstream '" + d.name + "' did not complete " + std::string(step) + " in time."};
    }
    return {core::ErrorKind::kUpstreamUnreachable, "Upstream '" + d.name +
                                                       "' is unreachable: " + std::string(step) +
                                                       " failed (" + ec.message() + ")."};
}

}  // namespace

bool Quiet(Connection& connection) {
    if (connection.buffer.size() != 0) return false;
    if (connection.tls && SSL_pending(connection.tls->native_handle()) > 0) return false;
    // One non-blocking peek (a syscall per reuse, the price of never reading a stray answer):
    // "would block" is the only quiet result. 0 is the peer's close, > 0 bytes nobody asked for
    // (a late or extra response, which would be read as the next request's answer).
    char byte;
    const ssize_t n =
        ::recv(connection.Lowest().socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

ConnectionPool::ConnectionPool(asio::any_io_executor executor, TlsContexts& tls,
                               observe::Metrics& metrics, Watchdog& watchdog)
    : executor_(executor),
      tls_(tls),
      metrics_(metrics),
      watchdog_(watchdog),
      clock_(watchdog.Clock()),
      resolver_(executor) {}

std::string ConnectionPool::KeyOf(const config::Deployment& d) {
    return (d.base_url.tls ? "https://" : "http://") + d.base_url.host + ":" +
           std::to_string(d.base_url.port) + "|" + d.ca_file;
}

std::unique_ptr<Connection> ConnectionPool::TakeIdle(const config::Deployment& deployment) {
    const auto it = idle_.find(KeyOf(deployment));
    if (it == idle_.end()) return nullptr;
    auto& list = it->second;
    const auto now = clock_.Now();
    while (!list.empty()) {
        std::unique_ptr<Connection> c = std::move(list.back());
        list.pop_back();
        if (now - c->idle_since < kIdleTtl && Quiet(*c)) {
            c->reused = true;
            return c;
        }
    }
    return nullptr;
}

asio::awaitable<std::unique_ptr<Connection>> ConnectionPool::Connect(
    const config::Deployment& deployment, std::chrono::milliseconds timeout, Watch& watch,
    core::LocalError& error, policy::Transport& transport) {
    transport = policy::Transport::kConnect;
    const core::BaseUrl& url = deployment.base_url;
    auto [resolve_ec, endpoints] = co_await resolver_.async_resolve(
        url.host, std::to_string(url.port), tcp::resolver::numeric_service, kTuple);
    if (resolve_ec) {
        error = Unreachable(deployment, "name resolution", resolve_ec);
        co_return nullptr;
    }
    auto c = std::make_unique<Connection>();
    c->key = KeyOf(deployment);
    // Reads fill what the buffer has room for (at least 512 bytes): room for a whole typical
    // answer means one read per answer instead of two.
    c->buffer.reserve(16 * 1024);
    if (url.tls) {
        c->tls.emplace(executor_, tls_.For(deployment.ca_file));
    } else {
        c->tcp.emplace(executor_);
    }
    beast::tcp_stream& lowest = c->Lowest();
    // A descriptor is taken here, before the connect (which closes and opens the socket once per
    // address, reusing it): out of descriptors is the gateway's limit, which a connect over a
    // range of addresses would report only as "cancelled".
    boost::system::error_code open_ec;
    if (!endpoints.empty()) lowest.socket().open(endpoints.begin()->endpoint().protocol(), open_ec);
    if (open_ec) {
        error = Unreachable(deployment, "connect", open_ec);
        transport = IsLocalLimit(open_ec) ? policy::Transport::kLocal : policy::Transport::kConnect;
        co_return nullptr;
    }
    watch.Arm(lowest.socket(), clock_.Now() + timeout);
    auto [connect_result, endpoint] = co_await lowest.async_connect(endpoints, kTuple);
    const boost::system::error_code connect_ec =
        connect_result && watch.Fired() ? make_error_code(beast::error::timeout) : connect_result;
    if (connect_ec) {
        watch.Disarm();
        error = Unreachable(deployment, "connect", connect_ec);
        if (connect_ec == beast::error::timeout) transport = policy::Transport::kTimeout;
        if (IsLocalLimit(connect_ec)) transport = policy::Transport::kLocal;
        co_return nullptr;
    }
    lowest.socket().set_option(tcp::no_delay(true));
    metrics_.CountUpstreamConnect();
    if (url.tls) {
        transport = policy::Transport::kTls;
        // SNI, and the certificate must name the host (RFC 6125).
        if (!SSL_set_tlsext_host_name(c->tls->native_handle(), url.host.c_str())) {
            watch.Disarm();
            error = {core::ErrorKind::kUpstreamUnreachable,
                     "Upstream '" + deployment.name + "': cannot set TLS server name."};
            co_return nullptr;
        }
        c->tls->set_verify_callback(asio::ssl::host_name_verification(url.host));
        auto [handshake_result] =
            co_await c->tls->async_handshake(asio::ssl::stream_base::client, kTuple);
        const boost::system::error_code handshake_ec = handshake_result && watch.Fired()
                                                           ? make_error_code(beast::error::timeout)
                                                           : handshake_result;
        if (handshake_ec) {
            watch.Disarm();
            error = Unreachable(deployment, "TLS handshake", handshake_ec);
            if (handshake_ec == beast::error::timeout) transport = policy::Transport::kTimeout;
            co_return nullptr;
        }
    }
    watch.Disarm();
    transport = policy::Transport::kOk;
    co_return c;
}

void ConnectionPool::Release(std::unique_ptr<Connection> connection) {
    auto& list = idle_[connection->key];
    if (list.size() >= kMaxIdlePerKey) return;
    connection->idle_since = clock_.Now();
    list.push_back(std::move(connection));
}

}  // namespace switchyard::upstream
