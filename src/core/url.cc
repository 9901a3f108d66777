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

bool ParseHostPort(std::string_view text, std::string& host, std::uint16_t& port) {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return false;
    std::string_view h = text.substr(0, colon);
    if (h.starts_with('[') && h.ends_with(']')) h = h.substr(1, h.size() - 2);
    host = h.empty() ? "0.0.0.0" : std::string(h);
    return ParsePort(text.substr(colon + 1), port);
}

}  // namespace switchyard::core
