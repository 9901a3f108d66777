#include "core/url.h"

#include <charconv>

namespace switchyard::core {
namespace {

bool ParsePort(std::string_view text, std::uint16_t& port) {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value > 65535) return false;
    port = static_cast<std::uint16_t>(value);
    return true;
}

}  // namespace

std::string BaseUrl::HostHeader() const {
    if ((tls && port == 443) || (!tls && port == 80)) return host;
    return host + ":" + std::to_string(port);
}

std::optional<BaseUrl> ParseBaseUrl(std::string_view url, std::string& error) {
    BaseUrl out;
    if (url.starts_with("https://")) {
        out.tls = true;
        url.remove_prefix(8);
        out.port = 443;
    } else if (url.starts_with("http://")) {
        url.remove_prefix(7);
        out.port = 80;
    } else {
        error = "must start with http:// or https://";
        return std::nullopt;
    }
    const std::size_t slash = url.find('/');
    std::string_view authority = url.substr(0, slash);
    std::string_view path = slash == std::string_view::npos ? "" : url.substr(slash);
    if (path.find_first_of("?#") != std::string_view::npos) {
        error = "must not contain a query or fragment";
        return std::nullopt;
    }
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    if (authority.find('@') != std::string_view::npos) {
        error = "must not contain credentials; use api_key";
        return std::nullopt;
    }
    std::string_view host = authority;
    if (authority.starts_with('[')) {
        const std::size_t close = authority.find(']');
        if (close == std::string_view::npos) {
            error = "unterminated IPv6 address";
            return std::nullopt;
        }
        host = authority.substr(1, close - 1);
        std::string_view rest = authority.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':' || !ParsePort(rest.substr(1), out.port)) {
                error = "invalid port";
                return std::nullopt;
            }
        }
    } else if (const std::size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
        host = authority.substr(0, colon);
        if (!ParsePort(authority.substr(colon + 1), out.port) || out.port == 0) {
            error = "invalid port";
            return std::nullopt;
        }
    }
    if (host.empty()) {
        error = "missing host";
        return std::nullopt;
    }
    out.host = std::string(host);
    out.path_prefix = std::string(path);
    return out;
}

std::optional<RedisUrl> ParseRedisUrl(std::string_view url, std::string& error) {
    RedisUrl out;
    if (url.starts_with("rediss://")) {
        out.tls = true;
        url.remove_prefix(9);
    } else if (url.starts_with("redis://")) {
        url.remove_prefix(8);
    } else {
        error = "the URL must start with redis:// or rediss://";
        return std::nullopt;
    }
    const std::size_t slash = url.find('/');
    std::string_view authority = url.substr(0, slash);
    if (slash != std::string_view::npos) {
        const std::string_view db = url.substr(slash + 1);
        if (!db.empty()) {
            int value = 0;
            const auto [ptr, ec] = std::from_chars(db.data(), db.data() + db.size(), value);
            if (ec != std::errc() || ptr != db.data() + db.size() || value < 0 || value > 15) {
                error = "the database after the host must be a number from 0 to 15";
                return std::nullopt;
            }
            out.db = value;
        }
    }
    if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
        const std::string_view user_info = authority.substr(0, at);
        authority.remove_prefix(at + 1);
        const std::size_t colon = user_info.find(':');
        out.username = std::string(user_info.substr(0, colon));
        if (colon != std::string_view::npos)
            out.password = std::string(user_info.substr(colon + 1));
    }
    std::string_view host = authority;
    if (host.starts_with('[')) {
        const std::size_t close = host.find(']');
        if (close == std::string_view::npos) {
            error = "unclosed '[' in the host";
            return std::nullopt;
        }
        if (close + 1 < host.size()) {
            if (host[close + 1] != ':' || !ParsePort(host.substr(close + 2), out.port)) {
                error = "invalid port";
                return std::nullopt;
            }
        }
        host = host.substr(1, close - 1);
    } else if (const std::size_t colon = host.rfind(':'); colon != std::string_view::npos) {
        if (!ParsePort(host.substr(colon + 1), out.port) || out.port == 0) {
            error = "invalid port";
            return std::nullopt;
        }
        host = host.substr(0, colon);
    }
    if (host.empty()) {
        error = "the URL has no host";
        return std::nullopt;
    }
    out.host = std::string(host);
    return out;
}

bool ParseHostPort(std::string_view text, std::string& host, std::uint16_t& port) {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return false;
    std::string_view h = text.substr(0, colon);
    if (h.starts_with('[') && h.ends_with(']')) h = h.substr(1, h.size() - 2);
    host = h.empty() ? "0.0.0.0" : std::string(h);
    return ParsePort(text.substr(colon + 1), port);
}

}  // namespace switchyard::core
