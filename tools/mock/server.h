#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "batch_wire.h"
#include "rate_limits.h"
#include "scenario.h"

namespace switchyard::mock {

struct ServerOptions final {
    std::string host = "127.0.0.1";
    std::uint16_t port = 0;
    int threads = 1;
    std::string tls_cert;  // PEM paths; both set means HTTPS only.
    std::string tls_key;
    std::optional<std::string> require_key;
    std::optional<std::uint64_t> seed;  // For `probability=`; random when absent.
    RateLimitConfig limits;             // Enforced from the start; unlimited by default.
    // A batch's processing time, unless a batch_ms fault sets its own.
    std::chrono::milliseconds batch_ms = batches::kDefaultBatchTime;
};

// The mock provider: an HTTP/1.1 server with one io_context per thread. Connections are accepted
// on the first thread and handed round-robin to all threads; each connection stays on its thread.
class Server final {
  public:
    // Loads the TLS certificate and key if set; throws std::runtime_error on failure.
    Server(ServerOptions options, std::shared_ptr<const Scenario> scenario);
    ~Server();

    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // Binds and listens. Returns the bound address as "HOST:PORT" with the real port.
    // Throws std::runtime_error.
    std::string Bind();

    // Serves on the calling thread plus threads - 1 more until SIGINT or SIGTERM. Call after Bind.
    void Run();

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace switchyard::mock
