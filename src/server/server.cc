#include "server/server.h"

#include <fmt/format.h>
#include <sys/socket.h>

#include <boost/json.hpp>
#include <exception>
#include <random>
#include <thread>

#include "server/session.h"

namespace switchyard::server {
namespace {

// A session's requests catch what their handlers throw; whatever escapes the session itself (its
// gauges and list entry are given back by RAII) is at least logged, never swallowed.
void LogEscaped(std::exception_ptr error) {
    if (!error) return;
    try {
        std::rethrow_exception(error);
    } catch (const std::exception& e) {
        fmt::print(stderr, "{{\"level\":\"error\",\"event\":\"session_failed\",\"error\":{}}}\n",
                   boost::json::serialize(boost::json::string(e.what())));
    } catch (...) {
        fmt::print(stderr, "{{\"level\":\"error\",\"event\":\"session_failed\"}}\n");
    }
}

// How long accepting pauses when the process is out of descriptors or memory: the pending
// connection stays in the kernel's backlog, and retrying at once would only spin.
constexpr std::chrono::milliseconds kAcceptPause{100};

asio::awaitable<void> AcceptLoop(Worker* worker) {
    asio::steady_timer pause(worker->ioc);
    bool starved = false;
    for (;;) {
        auto [ec, socket] = co_await worker->acceptor->async_accept(kTuple);
        if (ec) {
            if (ec == asio::error::operation_aborted || !worker->acceptor->is_open()) co_return;
            // EMFILE, ENFILE, ENOBUFS, ENOMEM: keep serving what we have, and try again shortly.
            if (!starved) {
                fmt::print(stderr,
                           "{{\"level\":\"error\",\"event\":\"accept_failed\",\"error\":\"{}\","
                           "\"worker\":{}}}\n",
                           ec.message(), worker->index);
            }
            starved = true;
            pause.expires_after(kAcceptPause);
            auto [wait_ec] = co_await pause.async_wait(kTuple);
            (void)wait_ec;
            continue;
        }
        if (starved) {
            fmt::print(stderr,
                       "{{\"level\":\"info\",\"event\":\"accept_recovered\",\"worker\":{}}}\n",
                       worker->index);
            starved = false;
        }
        asio::co_spawn(worker->ioc, RunSession(std::move(socket), worker), LogEscaped);
    }
}

unsigned WorkerCount(const config::ServerConfig& server) {
    if (server.workers > 0) return server.workers;
    return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

void ReportReload(std::string_view trigger, const ReloadResult& result) {
    if (result.problems.empty()) {
        fmt::print(stderr,
                   "{{\"level\":\"info\",\"event\":\"config_reloaded\",\"trigger\":\"{}\","
                   "\"model_groups\":{},\"deployments\":{}}}\n",
                   trigger, result.models, result.deployments);
        return;
    }
    boost::json::array problems;
    for (const std::string& p : result.problems) problems.emplace_back(p);
    fmt::print(stderr,
               "{{\"level\":\"error\",\"event\":\"config_reload_refused\",\"trigger\":\"{}\","
               "\"problems\":{}}}\n",
               trigger, boost::json::serialize(problems));
}

std::uint64_t SystemSeed() {
    std::random_device source;
    return (std::uint64_t{source()} << 32) | source();
}

Server::Server(ServerContext& context, std::optional<std::uint64_t> seed) : context_(context) {
    const unsigned n = WorkerCount(context.Config()->server);
    for (unsigned i = 0; i < n; ++i) {
        workers_.push_back(std::make_unique<Worker>(i, context, seed ? *seed + i : SystemSeed()));
    }
}

Server::~Server() = default;

void Server::Listen() {
    const std::shared_ptr<const config::Config> config = context_.Config();
    const config::ServerConfig& server = config->server;
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

bool Server::Run(const std::function<void()>& ready) {
    std::vector<asio::any_io_executor> executors;
    for (auto& worker : workers_) {
        asio::co_spawn(worker->ioc, AcceptLoop(worker.get()), asio::detached);
        worker->watchdog.Start();
        executors.push_back(worker->ioc.get_executor());
    }
    // The shared state's connections live on the workers' loops, one per worker.
    if (context_.shared != nullptr) context_.shared->Start(executors);
    std::vector<std::thread> threads;
    std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards;
    for (auto& worker : workers_) {
        guards.push_back(asio::make_work_guard(worker->ioc));
        threads.emplace_back([w = worker.get()] { w->ioc.run(); });
    }

    asio::io_context control(1);
    asio::signal_set signals(control, SIGTERM, SIGINT);
    asio::steady_timer timer(control);
    asio::steady_timer delay(control);
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
            signals.cancel();  // no second signal to wait for: control.run() returns
            return;
        }
        timer.expires_after(std::chrono::milliseconds(20));
        timer.async_wait([&](const boost::system::error_code&) { poll(); });
    };
    // SIGHUP reloads the config; SIGTERM and SIGINT drain.
    asio::signal_set hangups(control, SIGHUP);
    std::function<void()> on_hangup = [&] {
        hangups.async_wait([&](const boost::system::error_code& ec, int) {
            if (ec) return;
            ReportReload("SIGHUP", context_.reload());
            on_hangup();
        });
    };
    on_hangup();
    signals.async_wait([&](const boost::system::error_code& ec, int signal) {
        if (ec) return;
        hangups.cancel();
        const std::shared_ptr<const config::Config> config = context_.Config();
        // Readiness fails and answers close their connections at once; the listener stays open
        // for the drain delay, so load balancers see a failing health check, not refusals.
        context_.draining.store(true);
        const auto wait =
            signal == SIGINT ? std::chrono::milliseconds(0) : config->server.drain_delay;
        const auto timeout = config->server.drain_timeout;
        fmt::print(stderr, "switchyard: signal {}, draining (listener closes in {} ms)\n", signal,
                   wait.count());
        delay.expires_after(wait);
        delay.async_wait([&, timeout](const boost::system::error_code&) {
            drain_deadline = context_.clock.Now() + timeout;
            BeginDrain();
            guards.clear();
            poll();
        });
        // A second signal: the operator will not wait for the drain.
        signals.async_wait([&](const boost::system::error_code& again, int second) {
            if (again) return;
            fmt::print(stderr, "switchyard: signal {} during the drain, stopping now\n", second);
            clean = false;
            for (auto& worker : workers_) worker->ioc.stop();
            control.stop();
        });
    });
    // Signals are handled from here on: only now may anyone be told to send one.
    if (ready) ready();
    control.run();
    for (auto& t : threads) t.join();
    // Its connections go before the loops they were made on.
    if (context_.shared != nullptr) context_.shared->Release();
    return clean;
}

}  // namespace switchyard::server
