#include "server.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <chrono>
#include <csignal>
#include <random>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

#include "responder.h"
#include "server_state.h"

namespace switchyard::mock {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using std::chrono::milliseconds;

namespace {

// Large enough for long-context requests (a context_length test may send megabytes).
constexpr std::uint64_t kBodyLimit = 64 * 1024 * 1024;
constexpr std::uint32_t kHeaderLimit = 64 * 1024;
constexpr auto kTlsHandshakeTimeout = std::chrono::seconds(10);
constexpr auto kTlsShutdownTimeout = std::chrono::seconds(1);

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// One downstream connection: reads its requests and hands each to its Responder, which writes
// through this object. Lives in the frame of the coroutine that runs it; one request at a time.
template <class AsyncStream>
class Session final : public Downstream {
  public:
    static constexpr bool kTls = std::is_same_v<AsyncStream, TlsStream>;

    Session(AsyncStream stream, Shared& shared, Worker& worker)
        : stream_(std::move(stream)), responder_(shared, worker, *this, stream_.get_executor()) {}

    asio::awaitable<void> Run();

    asio::awaitable<bool> Write(std::string_view bytes) override;
    asio::awaitable<void> WaitForPeerClose() override;
    void Reset() override;

  private:
    asio::awaitable<void> CloseGracefully();

    AsyncStream stream_;
    beast::flat_buffer buffer_;
    std::optional<http::request_parser<http::string_body>> parser_;
    Responder responder_;
};

template <class AsyncStream>
asio::awaitable<void> Session<AsyncStream>::Run() {
    if constexpr (kTls) {
        auto& tcp_layer = beast::get_lowest_layer(stream_);
        tcp_layer.expires_after(kTlsHandshakeTimeout);
        auto [ec] = co_await stream_.async_handshake(ssl::stream_base::server, kAsTuple);
        if (ec) co_return;
        tcp_layer.expires_never();
    }
    for (;;) {
        parser_.emplace();
        parser_->body_limit(kBodyLimit);
        parser_->header_limit(kHeaderLimit);
        auto [ec, bytes] = co_await http::async_read_header(stream_, buffer_, *parser_, kAsTuple);
        if (ec) break;
        const auto expect = parser_->get().find(http::field::expect);
        if (expect != parser_->get().end() && beast::iequals(expect->value(), "100-continue")) {
            const bool written = co_await Write("HTTP/1.1 100 Continue\r\n\r\n");
            if (!written) co_return;
        }
        if (!parser_->is_done()) {
            auto [body_ec, body_bytes] =
                co_await http::async_read(stream_, buffer_, *parser_, kAsTuple);
            if (body_ec == http::error::body_limit) {
                co_await responder_.ReplyBodyTooLarge(parser_->get());
                break;
            }
            if (body_ec) break;
        }
        const After after = co_await responder_.Dispatch(parser_->get());
        if (after == After::kGone) co_return;
        if (after == After::kClose) break;
    }
    co_await CloseGracefully();
}

template <class AsyncStream>
asio::awaitable<bool> Session<AsyncStream>::Write(std::string_view bytes) {
    auto [ec, written] = co_await asio::async_write(stream_, asio::buffer(bytes), kAsTuple);
    co_return !ec;
}

template <class AsyncStream>
asio::awaitable<void> Session<AsyncStream>::WaitForPeerClose() {
    for (;;) {
        auto [ec, bytes] = co_await stream_.async_read_some(buffer_.prepare(4096), kAsTuple);
        if (ec) co_return;
    }
}

template <class AsyncStream>
asio::awaitable<void> Session<AsyncStream>::CloseGracefully() {
    auto& tcp_layer = beast::get_lowest_layer(stream_);
    if constexpr (kTls) {
        tcp_layer.expires_after(kTlsShutdownTimeout);
        co_await stream_.async_shutdown(kAsTuple);
    }
    boost::system::error_code ignored;
    tcp_layer.socket().shutdown(tcp::socket::shutdown_send, ignored);
    tcp_layer.socket().close(ignored);
}

// Aborts the connection with a TCP RST: a zero linger time makes close() discard unsent data and
// reset instead of sending FIN.
template <class AsyncStream>
void Session<AsyncStream>::Reset() {
    auto& socket = beast::get_lowest_layer(stream_).socket();
    boost::system::error_code ignored;
    socket.set_option(asio::socket_base::linger(true, 0), ignored);
    socket.close(ignored);
}

asio::awaitable<void> RunPlainSession(tcp::socket socket, Shared* shared, Worker* worker) {
    Session<PlainStream> session(PlainStream(std::move(socket)), *shared, *worker);
    co_await session.Run();
}

asio::awaitable<void> RunTlsSession(tcp::socket socket, ssl::context* tls, Shared* shared,
                                    Worker* worker) {
    Session<TlsStream> session(TlsStream(beast::tcp_stream(std::move(socket)), *tls), *shared,
                               *worker);
    co_await session.Run();
}

}  // namespace

struct Server::Impl final {
    Shared shared;
    std::optional<ssl::context> tls;
    std::vector<std::unique_ptr<Worker>> workers;
    std::optional<tcp::acceptor> acceptor;  // Declared after workers: closed before they go.

    asio::awaitable<void> AcceptLoop();
};

asio::awaitable<void> Server::Impl::AcceptLoop() {
    std::size_t next = 0;
    asio::steady_timer backoff(acceptor->get_executor());
    for (;;) {
        Worker& worker = *workers[next];
        next = (next + 1) % workers.size();
        auto [ec, socket] = co_await acceptor->async_accept(worker.io(), kAsTuple);
        if (ec == asio::error::operation_aborted) co_return;
        if (ec) {
            // Typically EMFILE: give connections a moment to close instead of spinning.
            backoff.expires_after(milliseconds(10));
            co_await backoff.async_wait(kAsTuple);
            continue;
        }
        boost::system::error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);
        if (tls) {
            asio::co_spawn(worker.io(), RunTlsSession(std::move(socket), &*tls, &shared, &worker),
                           asio::detached);
        } else {
            asio::co_spawn(worker.io(), RunPlainSession(std::move(socket), &shared, &worker),
                           asio::detached);
        }
    }
}

Server::Server(ServerOptions options, std::shared_ptr<const Scenario> scenario)
    : impl_(std::make_unique<Impl>()) {
    Shared& shared = impl_->shared;
    shared.options = std::move(options);
    shared.scenarios.Set(std::move(scenario));
    shared.rate_limits.Configure(shared.options.limits, std::chrono::steady_clock::now());
    if (!shared.options.tls_cert.empty()) {
        auto& tls = impl_->tls.emplace(ssl::context::tls_server);
        tls.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                        ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                        ssl::context::single_dh_use);
        boost::system::error_code ec;
        tls.use_certificate_chain_file(shared.options.tls_cert, ec);
        if (ec) {
            throw std::runtime_error(
                fmt::format("cannot load {}: {}", shared.options.tls_cert, ec.message()));
        }
        tls.use_private_key_file(shared.options.tls_key, ssl::context::pem, ec);
        if (ec) {
            throw std::runtime_error(
                fmt::format("cannot load {}: {}", shared.options.tls_key, ec.message()));
        }
    }
    std::random_device entropy;
    const std::uint64_t seed =
        shared.options.seed.value_or((static_cast<std::uint64_t>(entropy()) << 32) | entropy());
    const int threads = std::max(1, shared.options.threads);
    for (int i = 0; i < threads; ++i) {
        const std::uint64_t id_seed = (static_cast<std::uint64_t>(entropy()) << 32) | entropy();
        impl_->workers.push_back(std::make_unique<Worker>(seed + i, id_seed));
    }
}

Server::~Server() = default;

std::string Server::Bind() {
    auto& io = impl_->workers.front()->io();
    tcp::resolver resolver(io);
    boost::system::error_code ec;
    const auto results =
        resolver.resolve(impl_->shared.options.host, std::to_string(impl_->shared.options.port),
                         tcp::resolver::numeric_service, ec);
    if (ec || results.empty()) {
        throw std::runtime_error(fmt::format("cannot resolve {}: {}", impl_->shared.options.host,
                                             ec ? ec.message() : "no address"));
    }
    const tcp::endpoint endpoint = results.begin()->endpoint();
    auto& acceptor = impl_->acceptor.emplace(io);
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
        throw std::runtime_error(fmt::format("cannot listen on {}:{}: {}",
                                             endpoint.address().to_string(), endpoint.port(),
                                             ec.message()));
    }
    const tcp::endpoint bound = acceptor.local_endpoint();
    const auto address = bound.address();
    return address.is_v6() ? fmt::format("[{}]:{}", address.to_string(), bound.port())
                           : fmt::format("{}:{}", address.to_string(), bound.port());
}

void Server::Run() {
    auto& workers = impl_->workers;
    asio::io_context& main_io = workers.front()->io();
    asio::co_spawn(main_io, impl_->AcceptLoop(), asio::detached);

    const auto stop_all = [&workers] {
        for (auto& worker : workers) worker->io().stop();
    };
    asio::signal_set signals(main_io, SIGINT, SIGTERM);
    signals.async_wait([&stop_all](const boost::system::error_code& ec, int) {
        if (!ec) stop_all();
    });

    std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards;
    std::vector<std::thread> threads;
    for (std::size_t i = 1; i < workers.size(); ++i) {
        guards.push_back(asio::make_work_guard(workers[i]->io()));
        threads.emplace_back([&io = workers[i]->io()] { io.run(); });
    }
    main_io.run();
    stop_all();
    for (auto& thread : threads) thread.join();
}

}  // namespace switchyard::mock
