#include "server/key_admin.h"

#include <boost/json.hpp>

#include "config/client_key.h"
#include "config/key_request.h"
#include "core/names.h"
#include "server/admin_handlers.h"
#include "server/durable_state.h"
#include "server/http_io.h"

namespace switchyard::server {

core::LocalError StoreRefusal(const RequestContext& ctx, std::string_view outcome) {
    core::LocalError error{core::ErrorKind::kUnavailable,
                           "The state store (" + ctx.Context().durable->Path() +
                               ") cannot write: " + std::string(outcome) +
                               ". Its disk may be full or read-only; see "
                               "switchyard_state_store_up."};
    error.status = 503;
    return error;
}
boost::json::object DescribeKey(const limits::ClientKeyState& key, const core::Clock& clock) {
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
                            {"spent_this_month", usage.spent_this_month},
                            {"tokens_this_month", usage.tokens_this_month},
                            {"requests_this_month", usage.requests_this_month}}}};
    o["stream_mode"] =
        p.stream_mode ? boost::json::value(config::Name(*p.stream_mode)) : boost::json::value();
    if (!p.residency.empty()) {
        boost::json::array residency;
        for (const auto& region : p.residency) residency.emplace_back(region);
        o["residency"] = std::move(residency);
    }
    return o;
}

asio::awaitable<void> ServeListKeys(RequestContext& ctx) {
    ctx.record.route = "admin";
    if (const auto denied = CheckMasterKey(ctx)) {
        co_await WriteLocalError(ctx, *denied);
        co_return;
    }
    boost::json::array keys;
    for (const auto& key : ctx.Context().keys.List()) {
        keys.push_back(DescribeKey(*key, ctx.Context().clock));
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
    auto parsed = config::ParseKeyRequest(ctx.request.body(), ctx.Config());
    if (const auto* refusal = std::get_if<core::LocalError>(&parsed)) {
        co_await WriteLocalError(ctx, *refusal);
        co_return;
    }
    config::KeyRequest& request = std::get<config::KeyRequest>(parsed);
    std::string why;
    const std::shared_ptr<limits::ClientKeyState> added =
        ctx.Context().keys.Add(std::move(request.key), why);
    if (!added) {
        core::LocalError error{core::ErrorKind::kInvalidRequest, "Cannot add the key: " + why + ".",
                               "name"};
        error.status = 409;
        co_await WriteLocalError(ctx, error);
        co_return;
    }
    // On disk before it is acknowledged (docs/state.md#the-durable-store).
    if (ctx.Context().durable != nullptr &&
        !co_await ctx.Context().durable->KeyAdded(added->Policy())) {
        ctx.Context().keys.Remove(added->Policy().name);
        const core::LocalError refusal = StoreRefusal(ctx, "nothing was changed");
        co_await WriteLocalError(ctx, refusal);
        co_return;
    }
    // The other replicas of a fleet get it too (docs/state.md).
    if (ctx.Context().shared != nullptr) {
        ctx.Context().shared->ShareKeyAdded(config::KeyRequestBody(added->Policy()));
    }
    boost::json::object answer = DescribeKey(*added, ctx.Context().clock);
    // A generated key is shown this once; only its hash is kept.
    if (!request.plaintext.empty()) answer["key"] = request.plaintext;
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
    bool known = false;
    for (const auto& key : ctx.Context().keys.List()) known = known || key->Policy().name == name;
    // Off the disk before it is acknowledged: a key that stays in the store would come back.
    if (decoded && known && ctx.Context().durable != nullptr &&
        !co_await ctx.Context().durable->KeyRemoved(name)) {
        const core::LocalError refusal = StoreRefusal(ctx, "nothing was changed");
        co_await WriteLocalError(ctx, refusal);
        co_return;
    }
    if (!decoded || !ctx.Context().keys.Remove(name)) {
        const core::LocalError error{
            core::ErrorKind::kRouteNotFound,
            "No client key named '" + core::Printable(decoded ? name : path_segment) + "'."};
        co_await WriteLocalError(ctx, error);
        co_return;
    }
    if (ctx.Context().shared != nullptr) ctx.Context().shared->ShareKeyRemoved(name);
    std::string body = boost::json::serialize(boost::json::object{{"deleted", name}});
    co_await WriteBody(ctx, std::move(body), "application/json");
}

}  // namespace switchyard::server
