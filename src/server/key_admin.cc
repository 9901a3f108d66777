#include "server/key_admin.h"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <cmath>

#include "core/json.h"
#include "core/names.h"
#include "core/sha256.h"
#include "server/admin_handlers.h"
#include "server/http_io.h"

namespace switchyard::server {
namespace {

boost::json::object Describe(const limits::ClientKeyState& key, const core::Clock& clock) {
    const config::ClientKey& p = key.Policy();
    const limits::ClientKeyState::Usage usage = key.Snapshot(clock.Now(), clock.WallNow());
    boost::json::array models;
    for (const auto& m : p.models) models.emplace_back(m);
    boost::json::object o{{"name", p.name},
                          {"source", key.FromConfig() ? "config" : "admin"},
                          {"rpm", p.rpm},
                          {"tpm", p.tpm},
                          {"monthly_budget", p.monthly_budget},
                          {"models", std::move(models)},
                          {"lane", p.lane_name},
                          {"fallbacks", p.fallbacks},
                          {"slow_start_ms", p.slow_start.count()},
                          {"usage",
                           {{"requests_last_minute", usage.requests_last_minute},
                            {"tokens_last_minute", usage.tokens_last_minute},
                            {"spent_this_month", usage.spent_this_month}}}};
    o["stream_mode"] = !p.stream_mode ? boost::json::value(nullptr)
                       : *p.stream_mode == config::StreamMode::kBackground
                           ? boost::json::value("background")
                           : boost::json::value("interactive");
    return o;
}

// A whole number in [0, max] from `o[name]`; false with `error` set when it is something else.
bool ReadCount(const boost::json::object& o, std::string_view name, std::int64_t& out,
               std::int64_t max, core::LocalError& error) {
    const boost::json::value* v = o.if_contains(name);
    if (v == nullptr || v->is_null()) return true;
    const auto number = v->is_int64() ? std::optional<double>(static_cast<double>(v->get_int64()))
                        : v->is_uint64()
                            ? std::optional<double>(static_cast<double>(v->get_uint64()))
                        : v->is_double() ? std::optional<double>(v->get_double())
                                         : std::nullopt;
    if (!number || *number < 0 || *number > static_cast<double>(max) ||
        std::floor(*number) != *number) {
        error = {core::ErrorKind::kInvalidRequest,
                 fmt::format("'{}' must be a whole number from 0 to {}.", name, max),
                 std::string(name)};
        return false;
    }
    out = static_cast<std::int64_t>(*number);
    return true;
}

// The key described by an admin request body; `plaintext` is the key to hand out.
std::optional<config::ClientKey> ParseKey(const RequestContext& ctx, std::string& plaintext,
                                          core::LocalError& error) {
    boost::system::error_code ec;
    const boost::json::value body = core::ParseJson(ctx.request.body(), ec);
    if (ec || !body.is_object()) {
        error = {core::ErrorKind::kMalformedJson, "The body must be a JSON object."};
        return std::nullopt;
    }
    const boost::json::object& o = body.get_object();
    static constexpr std::string_view kKnown[] = {
        "name",   "key",  "rpm",       "tpm",         "monthly_budget",
        "models", "lane", "fallbacks", "stream_mode", "slow_start_ms"};
    for (const auto& entry : o) {
        if (std::find(std::begin(kKnown), std::end(kKnown), entry.key()) == std::end(kKnown)) {
            error = {core::ErrorKind::kInvalidRequest,
                     "Unknown field '" + std::string(entry.key()) + "'.", std::string(entry.key())};
            return std::nullopt;
        }
    }
    const config::Config& config = ctx.Config();
    config::ClientKey key;
    key.lane_name = config.limits.lanes.empty() ? "" : config.limits.lanes[0].name;
    const boost::json::value* name = o.if_contains("name");
    if (name == nullptr || !name->is_string() || !core::IsSafeName(name->get_string())) {
        error = {core::ErrorKind::kInvalidRequest,
                 "'name' must be 1 to 256 visible ASCII characters without spaces, quotes or "
                 "backslashes.",
                 "name"};
        return std::nullopt;
    }
    key.name = name->get_string();
    if (const boost::json::value* k = o.if_contains("key")) {
        if (!k->is_string() || k->get_string().size() < 16) {
            error = {core::ErrorKind::kInvalidRequest,
                     "'key' must be a string of at least 16 characters (or omit it to have one "
                     "generated).",
                     "key"};
            return std::nullopt;
        }
        plaintext.clear();  // chosen by the caller: never echoed
        key.sha256 = core::Sha256Hex(k->get_string());
        const config::Secret& master = config.server.master_key;
        if (!master.Empty() && key.sha256 == core::Sha256Hex(master.Reveal())) {
            error = {core::ErrorKind::kInvalidRequest,
                     "'key' is the master key, which is never limited: it cannot be a client key.",
                     "key"};
            return std::nullopt;
        }
    } else {
        plaintext = core::NewClientKey();
        key.sha256 = core::Sha256Hex(plaintext);
    }
    std::int64_t slow_start_ms = 0;
    if (!ReadCount(o, "rpm", key.rpm, 1'000'000'000, error) ||
        !ReadCount(o, "tpm", key.tpm, 1'000'000'000'000LL, error) ||
        !ReadCount(o, "slow_start_ms", slow_start_ms, 24LL * 3600 * 1000, error)) {
        return std::nullopt;
    }
    key.slow_start = config::Millis(slow_start_ms);
    if (const boost::json::value* b = o.if_contains("monthly_budget"); b && !b->is_null()) {
        const auto budget =
            b->is_number() ? std::optional<double>(b->to_number<double>()) : std::nullopt;
        if (!budget || !(*budget >= 0)) {
            error = {core::ErrorKind::kInvalidRequest, "'monthly_budget' must be a number >= 0.",
                     "monthly_budget"};
            return std::nullopt;
        }
        key.monthly_budget = *budget;
    }
    if (const boost::json::value* m = o.if_contains("models"); m && !m->is_null()) {
        if (!m->is_array()) {
            error = {core::ErrorKind::kInvalidRequest, "'models' must be a list of model groups.",
                     "models"};
            return std::nullopt;
        }
        for (const auto& group : m->get_array()) {
            if (!group.is_string() || config.FindGroup(group.get_string()) == nullptr) {
                error = {core::ErrorKind::kInvalidRequest,
                         "'models' names a model group that does not exist: " +
                             boost::json::serialize(group) + ".",
                         "models"};
                return std::nullopt;
            }
            key.models.emplace_back(group.get_string());
        }
    }
    if (const boost::json::value* l = o.if_contains("lane"); l && !l->is_null()) {
        const auto lane = l->is_string() ? config.limits.FindLane(l->get_string()) : std::nullopt;
        if (!lane) {
            error = {core::ErrorKind::kInvalidRequest, "'lane' must name a configured lane.",
                     "lane"};
            return std::nullopt;
        }
        key.lane = *lane;
        key.lane_name = std::string(l->get_string());
    }
    if (const boost::json::value* f = o.if_contains("fallbacks"); f && !f->is_null()) {
        if (!f->is_bool()) {
            error = {core::ErrorKind::kInvalidRequest, "'fallbacks' must be true or false.",
                     "fallbacks"};
            return std::nullopt;
        }
        key.fallbacks = f->get_bool();
    }
    if (const boost::json::value* s = o.if_contains("stream_mode"); s && !s->is_null()) {
        if (s->is_string() && s->get_string() == "interactive") {
            key.stream_mode = config::StreamMode::kInteractive;
        } else if (s->is_string() && s->get_string() == "background") {
            key.stream_mode = config::StreamMode::kBackground;
        } else {
            error = {core::ErrorKind::kInvalidRequest,
                     "'stream_mode' must be 'interactive' or 'background'.", "stream_mode"};
            return std::nullopt;
        }
    }
    return key;
}

}  // namespace

asio::awaitable<void> ServeListKeys(RequestContext& ctx) {
    ctx.record.route = "admin";
    if (const auto denied = CheckMasterKey(ctx)) {
        co_await WriteLocalError(ctx, *denied);
        co_return;
    }
    boost::json::array keys;
    for (const auto& key : ctx.Context().keys.List()) {
        keys.push_back(Describe(*key, ctx.Context().clock));
    }
    std::string body = boost::json::serialize(boost::json::object{{"keys", std::move(keys)}});
    co_await WriteBody(ctx, std::move(body), "application/json");
}

asio::awaitable<void> ServeAddKey(RequestContext& ctx) {
    ctx.record.route = "admin";
    if (const auto denied = CheckMasterKey(ctx)) {
        co_await WriteLocalError(ctx, *denied);
        co_return;
    }
    std::string plaintext;
    core::LocalError error;
    std::optional<config::ClientKey> key = ParseKey(ctx, plaintext, error);
    if (!key) {
        co_await WriteLocalError(ctx, error);
        co_return;
    }
    std::string why;
    const std::shared_ptr<limits::ClientKeyState> added =
        ctx.Context().keys.Add(std::move(*key), why);
    if (!added) {
        error = {core::ErrorKind::kInvalidRequest, "Cannot add the key: " + why + ".", "name"};
        error.status = 409;
        co_await WriteLocalError(ctx, error);
        co_return;
    }
    boost::json::object answer = Describe(*added, ctx.Context().clock);
    // A generated key is shown this once; only its hash is kept.
    if (!plaintext.empty()) answer["key"] = plaintext;
    Response response{http::status::created, 11};
    response.set(http::field::content_type, "application/json");
    response.set(http::field::cache_control, "no-store");
    response.body() = boost::json::serialize(answer);
    co_await WriteResponse(ctx, response);
}

asio::awaitable<void> ServeDeleteKey(RequestContext& ctx, std::string_view path_segment) {
    ctx.record.route = "admin";
    if (const auto denied = CheckMasterKey(ctx)) {
        co_await WriteLocalError(ctx, *denied);
        co_return;
    }
    bool decoded = false;
    const std::string name = core::PercentDecode(path_segment, decoded);
    if (!decoded || !ctx.Context().keys.Remove(name)) {
        const core::LocalError error{
            core::ErrorKind::kRouteNotFound,
            "No client key named '" + core::Printable(decoded ? name : path_segment) + "'."};
        co_await WriteLocalError(ctx, error);
        co_return;
    }
    std::string body = boost::json::serialize(boost::json::object{{"deleted", name}});
    co_await WriteBody(ctx, std::move(body), "application/json");
}

}  // namespace switchyard::server
