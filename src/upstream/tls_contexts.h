#pragma once

#include <map>
#include <memory>
#include <string>

#include "config/config.h"
#include "core/asio.h"

namespace switchyard::upstream {

// Client TLS contexts for upstream connections: one per distinct `ca_file` (the system trust
// store is always loaded; a deployment's ca_file adds anchors). Peer verification is on.
// Built once at start-up, read-only afterwards, so shared by all workers.
class TlsContexts final {
  public:
    // Throws std::runtime_error naming the file when a CA file cannot be loaded.
    explicit TlsContexts(const config::Config& config);

    asio::ssl::context& For(const std::string& ca_file);

  private:
    std::map<std::string, std::unique_ptr<asio::ssl::context>> contexts_;
};

}  // namespace switchyard::upstream
