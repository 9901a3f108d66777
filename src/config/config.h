#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/url.h"

namespace switchyard::config {

using Millis = std::chrono::milliseconds;

// A secret read from the environment (`os.environ/NAME`) or given inline. It has no stream
// operator and no formatter on purpose: the only way to read it is `Reveal()`, used where the
// value goes on the wire.
class Secret final {
  public:
    Secret() = default;
    Secret(std::string value, std::string origin)
        : value_(std::move(value)), origin_(std::move(origin)) {}

    bool Empty() const { return value_.empty(); }
    const std::string& Reveal() const { return value_; }
    // Where it came from, safe to print: "env SWITCHYARD_MASTER_KEY" or "inline".
    const std::string& Origin() const { return origin_; }

  private:
    std::string value_;
    std::string origin_;
};

enum class Provider { kOpenAi };

// One concrete upstream target: provider + model + endpoint + key.
struct Deployment {
    std::string name;  // unique across the config; used in logs, metrics and headers
    Provider provider = Provider::kOpenAi;
    std::string model;  // the model name sent upstream
    core::BaseUrl base_url;
    std::string api_base;  // as written, for display
    Secret api_key;
    double weight = 1.0;
    std::string ca_file;  // extra trust anchors for TLS; the system store is always used too
    int line = 0;
};

// What a client names in `model`.
struct ModelGroup {
    std::string name;
    std::vector<Deployment> deployments;
};

struct ServerConfig {
    std::string listen_host = "127.0.0.1";
    std::uint16_t listen_port = 4000;
    unsigned workers = 0;  // 0: one per core
    std::size_t max_body_bytes = 8 * 1024 * 1024;
    Millis header_timeout{10'000};  // to receive a whole request once its first byte arrived
    Millis idle_timeout{60'000};    // keep-alive connection with no request
    Millis drain_timeout{15'000};   // grace period for in-flight requests on SIGTERM
    Secret master_key;
};

struct Timeouts {
    Millis connect{5'000};
    Millis first_byte{120'000};  // request sent -> response headers
    Millis total{600'000};       // whole upstream exchange, body included
};

struct LogConfig {
    std::string access = "stdout";  // stdout | stderr | off | a file path
};

// The loaded configuration: an immutable snapshot shared by all workers.
struct Config {
    ServerConfig server;
    Timeouts timeouts;
    LogConfig log;
    std::vector<ModelGroup> models;

    const ModelGroup* FindGroup(std::string_view name) const;
};

}  // namespace switchyard::config
