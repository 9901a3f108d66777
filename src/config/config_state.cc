#include <yaml-cpp/yaml.h>

#include <string>

#include "config/config_sections.h"
#include "core/url.h"

// The `state` section of a config (config_sections.h): SQLite (the default), memory or Redis.

namespace switchyard::config {

void ReadState(Reader& r, const YAML::Node& node, StateConfig& state) {
    // The durable store's default place: a data directory the environment names (a container's
    // volume, a service's state directory), or the working directory.
    if (const auto dir = r.Env("SWITCHYARD_DATA_DIR"); dir && !dir->empty()) {
        state.path = *dir + (dir->back() == '/' ? "" : "/") + "switchyard-state.db";
    }
    if (!node.IsDefined() || node.IsNull()) return;
    if (!r.CheckMap(node, "state",
                    {"backend", "path", "url", "password", "tls", "ca_file", "key_prefix",
                     "timeout_ms", "connect_timeout_ms"})) {
        return;
    }
    std::string backend = "sqlite";
    r.String(node, "backend", backend);
    if (backend == "sqlite") {
        state.backend = StateConfig::Backend::kSqlite;
    } else if (backend == "memory") {
        state.backend = StateConfig::Backend::kMemory;
    } else if (backend == "redis") {
        state.backend = StateConfig::Backend::kRedis;
    } else {
        r.Fail(node["backend"], "'backend' must be 'sqlite', 'memory' or 'redis'");
    }
    if (r.String(node, "path", state.path) &&
        (state.path.empty() || state.backend != StateConfig::Backend::kSqlite)) {
        r.Fail(node["path"], state.path.empty() ? "'path' must name a file"
                                                : "'path' is read with backend 'sqlite' only");
    }
    if (r.String(node, "url", state.url)) {
        std::string error;
        if (const auto url = core::ParseRedisUrl(state.url, error)) {
            state.host = url->host;
            state.port = url->port;
            state.db = url->db;
            state.username = url->username;
            state.tls = url->tls;
            if (!url->password.empty()) state.password = Secret(url->password, "url");
            // What is shown of the URL (logs, /status) never carries the password.
            if (!url->password.empty()) {
                const std::size_t at = state.url.rfind('@');
                const std::size_t scheme = state.url.find("://") + 3;
                state.url = state.url.substr(0, scheme) +
                            (url->username.empty() ? "" : url->username + ":") + "***" +
                            state.url.substr(at);
            }
        } else {
            r.Fail(node["url"], "invalid url: " + error);
        }
    }
    r.SecretValue(node, "password", state.password);
    r.Bool(node, "tls", state.tls);
    r.String(node, "ca_file", state.ca_file);
    if (r.String(node, "key_prefix", state.key_prefix) &&
        (state.key_prefix.size() > 64 ||
         state.key_prefix.find_first_of("{} \t\r\n") != std::string::npos)) {
        r.Fail(node["key_prefix"],
               "'key_prefix' must be at most 64 characters without braces or white space");
    }
    r.Duration(node, "timeout_ms", state.timeout);
    r.Duration(node, "connect_timeout_ms", state.connect_timeout);
}

}  // namespace switchyard::config
