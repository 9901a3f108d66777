#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "server/server_context.h"

namespace switchyard::server {

// The listener and its workers: one io_context and one SO_REUSEPORT acceptor per worker thread,
// so a connection lives its whole life on the thread that accepted it. Run() blocks until
// SIGTERM/SIGINT, then drains: stops accepting, closes idle connections, lets in-flight requests
// finish within server.drain_timeout_ms, and returns.
// 64 random bits from the system, to seed a random source.
std::uint64_t SystemSeed();

class Server final {
  public:
    // Worker i draws from `seed` + i when a seed is given (runs that repeat, for tests), else
    // from a seed of the system's.
    explicit Server(ServerContext& context, std::optional<std::uint64_t> seed = std::nullopt);
    ~Server();

    // Binds every acceptor; throws std::system_error when the address cannot be bound.
    void Listen();
    // The bound port (useful with port 0).
    std::uint16_t Port() const { return port_; }
    // Serves until a termination signal, then drains. `ready` runs once the workers serve and
    // signals are handled (a supervisor told "listening" may send SIGTERM at once). False when
    // the drain timed out with requests still in flight: their coroutines are suspended on
    // stopped io_contexts, so the caller must end the process without destroying the Server.
    bool Run(const std::function<void()>& ready = {});

  private:
    void BeginDrain();

    ServerContext& context_;
    std::vector<std::unique_ptr<Worker>> workers_;
    std::uint16_t port_ = 0;
};

}  // namespace switchyard::server
