#include "config/key_request.h"

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "config/client_key.h"
#include "core/json.h"
#include "core/names.h"
#include "core/sha256.h"

namespace switchyard::config {
namespace {

core::LocalError Invalid(std::string message, std::string_view field) {
    return {core::ErrorKind::kInvalidRequest, std::move(message), std::string(field)};
}

// A whole number from `o[name]` (absent or null: `out` unchanged). One beyond the 64-bit range
// saturates, so its bound is what refuses it.
std::optional<core::LocalError> ReadWhole(const boost::json::object& o, std::string_view name,
                                          std::int64_t& out) {
    const boost::json::value* v = o.if_contains(name);
    if (v == nullptr || v->is_null()) return std::nullopt;
    if (v->is_int64()) {
        out = v->get_int64();
        return std::nullopt;
    }
    if (v->is_uint64()) {
        out = std::numeric_limits<std::int64_t>::max();  // a uint64 is always above INT64_MAX
        return std::nullopt;
    }
    if (v->is_double() && std::isfinite(v->get_double()) &&
        std::floor(v->get_double()) == v->get_double()) {
        const double d = v->get_double();
        constexpr double kLimit = 9.2e18;  // within the int64 range
        out = d >= kLimit    ? std::numeric_limits<std::int64_t>::max()
              : d <= -kLimit ? std::numeric_limits<std::int64_t>::min()
                             : static_cast<std::int64_t>(d);
        return std::nullopt;
    }
    // Appended, not `"'" + std::string(name)`: g++ 12 at -O3 warns falsely on that form.
    std::string message = "'";
    message.append(name).append("' must be a whole number.");
    return Invalid(std::move(message), name);
}

}  // namespace

std::variant<KeyRequest, core::LocalError> ParseKeyRequest(std::string_view body,
                                                           const config::Config& config) {
    boost::system::error_code ec;
    const boost::json::value parsed = core::ParseJson(body, ec);
    if (ec || !parsed.is_object()) {
        return core::LocalError{core::ErrorKind::kMalformedJson, "The body must be a JSON object."};
    }
    const boost::json::object& o = parsed.get_object();
    static constexpr std::string_view kKnown[] = {
        "name",   "key",  "key_sha256", "rpm",         "tpm",           "monthly_budget",
        "models", "lane", "fallbacks",  "stream_mode", "slow_start_ms", "residency"};
    for (const auto& entry : o) {
        if (std::find(std::begin(kKnown), std::end(kKnown), entry.key()) == std::end(kKnown)) {
            return Invalid("Unknown field '" + std::string(entry.key()) + "'.", entry.key());
        }
    }
    KeyRequest request;
    config::ClientKey& key = request.key;
    key.lane_name = config.limits.lanes.empty() ? "" : config.limits.lanes[0].name;
    // A missing or non-string name stays empty: ValidateClientKey refuses it.
    if (const boost::json::value* name = o.if_contains("name"); name && name->is_string()) {
        key.name = name->get_string();
    }
    if (const boost::json::value* h = o.if_contains("key_sha256")) {
        if (o.contains("key")) {
            return Invalid("Give either 'key' or 'key_sha256', not both.", "key_sha256");
        }
        const boost::json::string* hash = h->if_string();
        bool hex = hash != nullptr && hash->size() == 64;
        for (std::size_t i = 0; hex && i < hash->size(); ++i) {
            hex = std::isxdigit(static_cast<unsigned char>((*hash)[i])) != 0;
        }
        if (!hex) return Invalid("'key_sha256' must be 64 hexadecimal digits.", "key_sha256");
        key.sha256.clear();
        for (const char c : *hash) {
            key.sha256.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
        }
    } else if (const boost::json::value* k = o.if_contains("key")) {
        if (!k->is_string()) {
            return Invalid("'key' must be a string (or omit it to have one generated).", "key");
        }
        if (const auto problem = config::ValidateKeyText(k->get_string())) {
            return Invalid(problem->message + " (or omit it to have one generated).", "key");
        }
        key.sha256 = core::Sha256Hex(k->get_string());  // chosen by the caller: never echoed
    } else {
        request.plaintext = core::NewClientKey();
        key.sha256 = core::Sha256Hex(request.plaintext);
    }
    std::int64_t slow_start_ms = 0;
    if (auto error = ReadWhole(o, "rpm", key.rpm)) return std::move(*error);
    if (auto error = ReadWhole(o, "tpm", key.tpm)) return std::move(*error);
    if (auto error = ReadWhole(o, "slow_start_ms", slow_start_ms)) return std::move(*error);
    key.slow_start = config::Millis(slow_start_ms);
    if (const boost::json::value* b = o.if_contains("monthly_budget"); b && !b->is_null()) {
        if (!b->is_number()) return Invalid("'monthly_budget' must be a number.", "monthly_budget");
        key.monthly_budget = b->to_number<double>();
    }
    if (const boost::json::value* m = o.if_contains("models"); m && !m->is_null()) {
        if (!m->is_array()) {
            return Invalid("'models' must be a list of model group names.", "models");
        }
        for (const auto& group : m->get_array()) {
            if (!group.is_string()) {
                return Invalid("'models' must be a list of model group names.", "models");
            }
            key.models.emplace_back(group.get_string());
        }
    }
    if (const boost::json::value* l = o.if_contains("lane"); l && !l->is_null()) {
        if (!l->is_string())
            return Invalid("'lane' must be the name of a configured lane.", "lane");
        key.lane_name = l->get_string();
    }
    if (const boost::json::value* f = o.if_contains("fallbacks"); f && !f->is_null()) {
        if (!f->is_bool()) return Invalid("'fallbacks' must be true or false.", "fallbacks");
        key.fallbacks = f->get_bool();
    }
    if (const boost::json::value* g = o.if_contains("residency"); g && !g->is_null()) {
        static const std::string kShape =
            "'residency' must be a list of regions (1 to 32 lowercase letters, digits or '-').";
        if (!g->is_array()) return Invalid(kShape, "residency");
        for (const boost::json::value& region : g->get_array()) {
            if (!region.is_string() || !core::IsRegionName(region.get_string())) {
                return Invalid(kShape, "residency");
            }
            key.residency.emplace_back(region.get_string());
        }
    }
    if (const boost::json::value* s = o.if_contains("stream_mode"); s && !s->is_null()) {
        key.stream_mode = s->is_string() ? config::ParseStreamMode(s->get_string()) : std::nullopt;
        if (!key.stream_mode) {
            return Invalid("'stream_mode' must be " + std::string(config::kStreamModeChoices) + ".",
                           "stream_mode");
        }
    }
    const std::vector<config::ClientKeyProblem> problems = config::ValidateClientKey(key, config);
    if (!problems.empty()) return Invalid(problems.front().message + ".", problems.front().field);
    key.lane = config.limits.FindLane(key.lane_name).value_or(0);
    return request;
}

boost::json::object KeyRequestBody(const config::ClientKey& key) {
    boost::json::array models;
    for (const std::string& group : key.models) models.emplace_back(group);
    boost::json::object body{{"name", key.name},
                             {"key_sha256", key.sha256},
                             {"rpm", key.rpm},
                             {"tpm", key.tpm},
                             {"monthly_budget", key.monthly_budget},
                             {"models", std::move(models)},
                             {"lane", key.lane_name},
                             {"fallbacks", key.fallbacks},
                             {"slow_start_ms", key.slow_start.count()}};
    if (key.stream_mode) body["stream_mode"] = config::Name(*key.stream_mode);
    if (!key.residency.empty()) {
        boost::json::array residency;
        for (const std::string& region : key.residency) residency.emplace_back(region);
        body["residency"] = std::move(residency);
    }
    return body;
}

}  // namespace switchyard::config
