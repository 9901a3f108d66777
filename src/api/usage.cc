#include "api/usage.h"

#include <boost/json.hpp>

#include "core/json.h"

namespace switchyard::api {

std::optional<Usage> FindUsage(std::string_view json) {
    const std::size_t key = json.rfind("\"usage\"");
    if (key == std::string_view::npos) return std::nullopt;
    std::size_t pos = key + 7;
    while (pos < json.size() && (json[pos] == ' ' || json[pos] == ':' || json[pos] == '\n' ||
                                 json[pos] == '\r' || json[pos] == '\t')) {
        ++pos;
    }
    if (pos >= json.size() || json[pos] != '{') return std::nullopt;
    // The usage object holds numbers and nested objects only, so braces balance without a
    // string-aware scan.
    int depth = 0;
    std::size_t end = pos;
    for (; end < json.size(); ++end) {
        if (json[end] == '{') ++depth;
        if (json[end] == '}' && --depth == 0) break;
    }
    if (depth != 0) return std::nullopt;
    boost::system::error_code ec;
    const boost::json::value value = core::ParseJson(json.substr(pos, end - pos + 1), ec);
    if (ec || !value.is_object()) return std::nullopt;
    const auto& o = value.get_object();
    Usage usage;
    for (const char* key : {"prompt_tokens", "input_tokens"}) {
        if (const auto* v = o.if_contains(key); v && v->is_int64())
            usage.input_tokens = v->get_int64();
    }
    for (const char* key : {"completion_tokens", "output_tokens"}) {
        if (const auto* v = o.if_contains(key); v && v->is_int64()) {
            usage.output_tokens = v->get_int64();
        }
    }
    return usage;
}

}  // namespace switchyard::api
