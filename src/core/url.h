#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace switchyard::core {

// An upstream base URL such as "https://api.openai.com/v1", split into what a connection and a
// request target need.
struct BaseUrl {
    bool tls = false;
    std::string host;
    std::uint16_t port = 0;
    std::string path_prefix;  // without a trailing '/', may be empty

    // "host:port", the HTTP Host header value (port omitted when it is the scheme's default).
    std::string HostHeader() const;
    bool operator==(const BaseUrl&) const = default;
};

// Parses "http://host[:port][/prefix]" or "https://...". On failure returns nullopt and sets
// `error` to a one-line reason.
std::optional<BaseUrl> ParseBaseUrl(std::string_view url, std::string& error);

// A Redis server's address: redis://[user[:password]@]host[:port][/db], or rediss:// for TLS.
struct RedisUrl {
    bool tls = false;
    std::string host;
    std::uint16_t port = 6379;
    std::string username;
    std::string password;
    int db = 0;
};

// Parses a redis:// or rediss:// URL. On failure returns nullopt and sets `error` to a one-line
// reason that never contains the password.
std::optional<RedisUrl> ParseRedisUrl(std::string_view url, std::string& error);

// Parses "host:port" (host may be empty, meaning 0.0.0.0; port 0 means any free port).
bool ParseHostPort(std::string_view text, std::string& host, std::uint16_t& port);

}  // namespace switchyard::core
