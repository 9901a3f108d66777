#pragma once

#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/asio.h"

namespace switchyard::upstream {

// Client TLS contexts for upstream connections: one per distinct `ca_file` (the system trust
// store is always loaded; a deployment's ca_file adds anchors). Peer verification is on. Shared
// by all workers; thread-safe. A context is never destroyed before the process ends, so a
// connection made with it may outlive a reload.
class TlsContexts final {
  public:
    // Throws std::runtime_error naming the file when a CA file cannot be loaded.
    explicit TlsContexts(const config::Config& config);

    // A reloaded config: every CA file is read again (a changed file takes effect for new
    // connections). Throws like the constructor, and then changes nothing.
    void Load(const config::Config& config);

    asio::ssl::context& For(const std::string& ca_file);

  private:
    using Contexts = std::map<std::string, std::unique_ptr<asio::ssl::context>>;
    static Contexts Make(const config::Config& config);

    std::shared_mutex mutex_;
    Contexts contexts_;
    std::vector<std::unique_ptr<asio::ssl::context>> retired_;  // replaced by a reload
};

}  // namespace switchyard::upstream
