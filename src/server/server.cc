#include "server/server.h"

#include <fmt/format.h>
#include <sys/socket.h>

#include <random>
#include <thread>

#include "server/session.h"

namespace switchyard::server {
namespace {

asio::awaitable<void> AcceptLoop(Worker* worker) {
    for (;;) {
        auto [ec, socket] = co_await worker->acceptor->async_accept(kTuple);
        if (ec) {
            if (ec == asio::error::operation_aborted || !worker->acceptor->is_open()) co_return;
            continue;  // EMFILE and friends: keep serving what we have
        }
        asio::co_spawn(worker->ioc, RunSession(std::move(socket), worker), asio::detached);
    }
}

unsigned WorkerCount(const config::ServerConfig& server) {
    if (server.workers > 0) return server.workers;
    return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

Server::Server(ServerContext& context) : context_(context) {
    std::random_device seed_source;
    const unsigned n = WorkerCount(context.config->server);
    for (unsigned i = 0; i < n; ++i) {
        const std::uint64_t seed = (std::uint64_t{seed_source()} << 32) | seed_source();
        workers_.push_back(std::make_unique<Worker>(i, context, seed));
    }
}

Server::~Server() = default;

void Server::Listen() {
    const config::ServerConfig& server = context_.config->server;
    const tcp::endpoint wanted(asio::ip::make_address(server.listen_host), server.listen_port);
    tcp::endpoint bound = wanted;
    for (auto& worker : workers_) {
        tcp::acceptor& acceptor = worker->acceptor.emplace(worker->ioc);
        acceptor.open(bound.protocol());
        acceptor.set_option(tcp::acceptor::reuse_address(true));
        // Every worker listens on the same port; the kernel spreads connections among them.
        const int one = 1;
        if (::setsockopt(acceptor.native_handle(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) !=
            0) {
            throw std::system_error(errno, std::generic_category(), "SO_REUSEPORT");
        }
        acceptor.bind(bound);
        acceptor.listen(asio::socket_base::max_listen_connections);
        bound = acceptor.local_endpoint();  // with port 0 the first bind picks the port
    }
    port_ = bound.port();
}

void Server::BeginDrain() {
    context_.draining.store(true);
    for (auto& worker : workers_) {
        asio::post(worker->ioc, [w = worker.get()] {
            boost::system::error_code ignored;
            if (w->acceptor) w->acceptor->close(ignored);
            for (SessionHandle& session : w->sessions) {
                if (!session.busy) session.stream->socket().close(ignored);
            }
        });
    }
}

bool Server::Run() {
    for (auto& worker : workers_) {
        asio::co_spawn(worker->ioc, AcceptLoop(worker.get()), asio::detached);
        worker->watchdog.Start();
    }
    std::vector<std::thread> threads;
    std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards;
    for (auto& worker : workers_) {
        guards.push_back(asio::make_work_guard(worker->ioc));
        threads.emplace_back([w = worker.get()] { w->ioc.run(); });
    }

    asio::io_context control(1);
    asio::signal_set signals(control, SIGTERM, SIGINT);
    asio::steady_timer timer(control);
    std::chrono::steady_clock::time_point drain_deadline;
    bool clean = true;
    std::function<void()> poll = [&] {
        // Every session has ended (busy ones finished their request, idle ones were closed).
        const bool idle = context_.metrics.Connections() == 0;
        if (idle || context_.clock.Now() >= drain_deadline) {
            if (!idle) {
                clean = false;
                fmt::print(stderr, "switchyard: drain timeout with {} request(s) in flight\n",
                           context_.metrics.InFlight());
            }
            for (auto& worker : workers_) worker->ioc.stop();
            return;
        }
        timer.expires_after(std::chrono::milliseconds(20));
        timer.async_wait([&](const boost::system::error_code&) { poll(); });
    };
    signals.async_wait([&](const boost::system::error_code& ec, int signal) {
        if (ec) return;
        fmt::print(stderr, "switchyard: signal {}, draining\n", signal);
        drain_deadline = context_.clock.Now() + context_.config->server.drain_timeout;
        BeginDrain();
        guards.clear();
        poll();
    });
    control.run();
    for (auto& t : threads) t.join();
    return clean;
}

}  // namespace switchyard::server
