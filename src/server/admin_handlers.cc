#include "server/admin_handlers.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <boost/json.hpp>

#include "core/names.h"
#include "core/time_format.h"
#include "observe/dashboard_page.h"
#include "server/drill_schedule.h"
#include "server/durable_state.h"
#include "server/http_io.h"
#include "server/key_admin.h"
#include "server/state_gauges.h"

namespace switchyard::server {

namespace {

// A model group as the models endpoints show it.
boost::json::object ModelObject(const std::string& name, bool anthropic) {
    if (anthropic) {
        return {{"type", "model"},
                {"id", name},
                {"display_name", name},
                {"created_at", "1970-01-01T00:00:00Z"}};
    }
    return {{"id", name}, {"object", "model"}, {"created", 0}, {"owned_by", "switchyard"}};
}

}  // namespace

asio::awaitable<void> ServeModels(RequestContext& ctx, std::optional<std::string> id) {
    ctx.record.route = "models";
    const bool anthropic = ctx.request.find("anthropic-version") != ctx.request.end();
    if (anthropic) ctx.wire = api::Wire::kAnthropic;
    // With client keys, the list is for their holders: a key sees the groups it may use.
    const std::vector<std::string>* allowed = nullptr;
    std::shared_ptr<limits::ClientKeyState> key;  // keeps `allowed` alive
    if (!ctx.Context().keys.Empty() && !PresentsMasterKey(ctx)) {
        key = ctx.Context().keys.Find(PresentedKey(ctx.request));
        if (!key) {
            const core::LocalError error{core::ErrorKind::kUnauthorized,
                                         "Incorrect or missing API key."};
            co_await WriteLocalError(ctx, error);
            co_return;
        }
        ctx.key_name = key->Policy().name;
        if (!key->Policy().models.empty()) allowed = &key->Policy().models;
    }
    auto visible = [&](const std::string& name) {
        return allowed == nullptr ||
               std::find(allowed->begin(), allowed->end(), name) != allowed->end();
    };
    if (id) {
        const config::ModelGroup* group = ctx.Config().FindGroup(*id);
        if (group == nullptr || !visible(group->name)) {
            // Whether it exists for another key is not this caller's to learn.
            const core::LocalError error{core::ErrorKind::kModelNotFound,
                                         "The model `" + core::Printable(*id) +
                                             "` does not exist or you do not have "
                                             "access to it.",
                                         "model"};
            co_await WriteLocalError(ctx, error);
            co_return;
        }
        co_await WriteBody(ctx, boost::json::serialize(ModelObject(group->name, anthropic)),
                           "application/json");
        co_return;
    }
    boost::json::array data;
    for (const auto& group : ctx.Config().models) {
        if (visible(group.name)) data.push_back(ModelObject(group.name, anthropic));
    }
    boost::json::object list;
    if (anthropic) {
        const bool empty = data.empty();
        list = {{"data", std::move(data)}, {"has_more", false}};
        list["first_id"] = empty ? boost::json::value(nullptr)
                                 : boost::json::value(list["data"].as_array().front().at("id"));
        list["last_id"] = empty ? boost::json::value(nullptr)
                                : boost::json::value(list["data"].as_array().back().at("id"));
    } else {
        list = {{"object", "list"}, {"data", std::move(data)}};
    }
    co_await WriteBody(ctx, boost::json::serialize(list), "application/json");
}

asio::awaitable<void> ServeHealth(RequestContext& ctx, bool readiness) {
    ctx.record.route = "health";
    if (readiness && ctx.Context().draining.load()) {
        const core::LocalError error{core::ErrorKind::kUnavailable, "Switchyard is draining."};
        co_await WriteLocalError(ctx, error);
        co_return;
    }
    std::string body = R"({"status":"ok"})";
    co_await WriteBody(ctx, std::move(body), "application/json");
}

bool PresentsMasterKey(const RequestContext& ctx) {
    const config::Secret& master = ctx.Config().server.master_key;
    if (master.Empty()) return false;
    const std::string_view presented = PresentedKey(ctx.request);
    const std::string& expected = master.Reveal();
    return presented.size() == expected.size() &&
           CRYPTO_memcmp(presented.data(), expected.data(), expected.size()) == 0;
}

std::optional<core::LocalError> CheckMasterKey(const RequestContext& ctx) {
    const config::Secret& master = ctx.Config().server.master_key;
    if (master.Empty()) {
        return core::LocalError{core::ErrorKind::kForbidden,
                                "Admin endpoints are disabled: set server.master_key."};
    }
    if (!PresentsMasterKey(ctx)) {
        return core::LocalError{core::ErrorKind::kUnauthorized,
                                "Admin endpoints need the master key."};
    }
    return std::nullopt;
}

namespace {

// A deployment's latency model: p50 and p99 of each measure, null where nothing was measured
// (docs/resilience.md#latency-model).
boost::json::object Latency(const routing::DeploymentSnapshot& s) {
    const auto ms = [](std::optional<std::chrono::milliseconds> v) {
        return v ? boost::json::value(v->count()) : boost::json::value(nullptr);
    };
    const auto measure = [&](std::optional<std::chrono::milliseconds> p50,
                             std::optional<std::chrono::milliseconds> p99) {
        return boost::json::object{{"p50", ms(p50)}, {"p99", ms(p99)}};
    };
    const policy::LatencyQuantiles& a = s.latency_p50;
    const policy::LatencyQuantiles& b = s.latency_p99;
    return boost::json::object{
        {"stream_first_byte", measure(a.stream_first_byte, b.stream_first_byte)},
        {"first_token", measure(a.first_token, b.first_token)},
        {"chunk_gap", measure(a.gap, b.gap)},
        {"whole_answer", measure(a.whole, b.whole)},
        {"samples", boost::json::object{{"stream", b.stream_samples}, {"whole", b.whole_samples}}}};
}

boost::json::value TimeOrNull(const std::optional<std::chrono::steady_clock::time_point>& at,
                              std::chrono::steady_clock::time_point now,
                              std::chrono::system_clock::time_point wall_now) {
    if (!at) return nullptr;
    const auto wall =
        wall_now + std::chrono::duration_cast<std::chrono::system_clock::duration>(*at - now);
    return boost::json::string(core::Rfc3339(wall));
}

boost::json::value Window(const policy::RateLimitWindow& w) {
    if (!w.Known()) return nullptr;
    boost::json::object o;
    o["limit"] = w.limit ? boost::json::value(*w.limit) : boost::json::value(nullptr);
    o["remaining"] = w.remaining ? boost::json::value(*w.remaining) : boost::json::value(nullptr);
    o["reset"] = w.reset ? boost::json::value(boost::json::string(core::Rfc3339(*w.reset)))
                         : boost::json::value(nullptr);
    return o;
}

boost::json::value Headroom(const std::optional<policy::RateLimitHeaders>& h) {
    if (!h) return nullptr;
    return boost::json::object{{"requests", Window(h->requests)},
                               {"tokens", Window(h->tokens)},
                               {"input_tokens", Window(h->input_tokens)},
                               {"output_tokens", Window(h->output_tokens)}};
}

// The self-throttling buckets as they stand: capacity and level per limited dimension.
boost::json::value Buckets(const limits::Headroom::View& view) {
    const auto bucket = [](const limits::Headroom::BucketView& b) -> boost::json::value {
        if (!b.limited) return nullptr;
        return boost::json::object{{"capacity", b.capacity}, {"level", b.level}};
    };
    return boost::json::object{{"requests", bucket(view.requests)},
                               {"tokens", bucket(view.tokens)},
                               {"input_tokens", bucket(view.input_tokens)},
                               {"output_tokens", bucket(view.output_tokens)}};
}

}  // namespace

asio::awaitable<void> ServeStatus(RequestContext& ctx) {
    ctx.record.route = "status";
    if (const auto denied = CheckMasterKey(ctx)) {
        co_await WriteLocalError(ctx, *denied);
        co_return;
    }
    const auto now = ctx.Context().clock.Now();
    const auto wall_now = ctx.Context().clock.WallNow();
    boost::json::array deployments;
    for (const auto& group : ctx.Config().models) {
        for (const auto& d : group.deployments) {
            const routing::DeploymentSnapshot s = ctx.Health().Snapshot(d.index, now);
            boost::json::object o{
                {"name", d.name},
                {"model_group", group.name},
                {"model", d.model},
                {"region", d.region},
                {"state", routing::Name(s.state)},
                {"available", s.available},
                {"rate_limited_until", TimeOrNull(s.rate_limited_until, now, wall_now)},
                {"cooling_until", TimeOrNull(s.cooling_until, now, wall_now)},
                {"breaker", policy::Name(s.breaker)},
                {"breaker_open_until", TimeOrNull(s.breaker_open_until, now, wall_now)},
                {"disabled_until", TimeOrNull(s.disabled_until, now, wall_now)},
                {"disabled_reason", s.disabled_reason},
                {"in_flight", s.in_flight},
                {"retry_budget_tokens", s.retry_budget_tokens},
                {"last_error_class", s.last_error_class}};
            o["ewma_ttft_ms"] = s.ewma_ttft_ms < 0 ? boost::json::value(nullptr)
                                                   : boost::json::value(s.ewma_ttft_ms);
            o["latency_ms"] = Latency(s);
            o["success_share"] = s.success_share;
            o["headroom"] = Headroom(s.headroom);
            o["buckets"] = Buckets(ctx.Headroom().Snapshot(d.index, now));
            o["last_error_at"] =
                s.last_error_at
                    ? boost::json::value(boost::json::string(core::Rfc3339(*s.last_error_at)))
                    : boost::json::value(nullptr);
            deployments.push_back(std::move(o));
        }
    }
    boost::json::array lanes;
    const limits::Lanes& running = ctx.Lanes();
    for (std::size_t i = 0; i < running.Size(); ++i) {
        const config::Lane& lane = running.Config(i);
        lanes.push_back(boost::json::object{{"name", lane.name},
                                            {"share", lane.share},
                                            {"max_queue", lane.max_queue},
                                            {"waiting", running.Waiting(i)}});
    }
    boost::json::array failures;
    for (const observe::FailedAttempt& f : ctx.Context().metrics.Failures().Newest()) {
        failures.push_back(boost::json::object{{"at", core::Rfc3339(f.at)},
                                               {"model_group", f.model_group},
                                               {"deployment", f.deployment},
                                               {"status", f.status},
                                               {"error_class", f.error_class},
                                               {"upstream_request_id", f.upstream_request_id}});
    }
    boost::json::array keys;
    for (const auto& key : ctx.Context().keys.List()) {
        keys.push_back(DescribeKey(*key, ctx.Context().clock));
    }
    // Where the state lives and whether it is being kept (docs/state.md).
    const config::StateConfig& state = ctx.Config().state;
    const observe::Metrics& metrics = ctx.Context().metrics;
    boost::json::object where;
    switch (state.backend) {
        case config::StateConfig::Backend::kMemory:
            where = {{"backend", "memory"}};
            break;
        case config::StateConfig::Backend::kSqlite:
            where = {
                {"backend", "sqlite"}, {"path", state.path}, {"writing", metrics.StoreUp() != 0}};
            break;
        case config::StateConfig::Backend::kRedis:
            where = {{"backend", "redis"}, {"url", state.url}, {"up", metrics.StateUp() == 1}};
            break;
    }
    std::string body = boost::json::serialize(
        boost::json::object{{"time", core::Rfc3339(wall_now)},
                            {"state", std::move(where)},
                            {"self_throttle", ctx.Config().limits.self_throttle},
                            {"lanes", std::move(lanes)},
                            {"deployments", std::move(deployments)},
                            {"keys", std::move(keys)},
                            {"recent_failures", std::move(failures)}});
    co_await WriteBody(ctx, std::move(body), "application/json");
}

asio::awaitable<void> ServeStateExport(RequestContext& ctx) {
    ctx.record.route = "admin";
    if (const auto denied = CheckMasterKey(ctx)) {
        co_await WriteLocalError(ctx, *denied);
        co_return;
    }
    if (ctx.Context().durable == nullptr) {
        const core::LocalError error{core::ErrorKind::kRouteNotFound,
                                     "This gateway has no durable store (state.backend is not "
                                     "sqlite)."};
        co_await WriteLocalError(ctx, error);
        co_return;
    }
    std::optional<std::string> exported = co_await ctx.Context().durable->Export();
    if (!exported) {
        const core::LocalError refusal = StoreRefusal(ctx, "nothing could be read");
        co_await WriteLocalError(ctx, refusal);
        co_return;
    }
    co_await WriteBody(ctx, std::move(*exported), "application/json");
}

asio::awaitable<void> ServeDrills(RequestContext& ctx) {
    ctx.record.route = "admin";
    if (const auto denied = CheckMasterKey(ctx)) {
        co_await WriteLocalError(ctx, *denied);
        co_return;
    }
    DrillSchedule* drills = ctx.Context().drills;
    // Named: g++ 12 may mishandle a temporary argument of a coroutine.
    std::string reports = drills != nullptr ? drills->LastReports() : "{\"drills\":[]}";
    co_await WriteBody(ctx, std::move(reports), "application/json");
}

asio::awaitable<void> ServeEnable(RequestContext& ctx, std::string_view name) {
    ctx.record.route = "admin";
    if (const auto denied = CheckMasterKey(ctx)) {
        co_await WriteLocalError(ctx, *denied);
        co_return;
    }
    for (const auto& group : ctx.Config().models) {
        for (const auto& d : group.deployments) {
            if (d.name != name) continue;
            ctx.Health().Enable(d.index);
            // On disk before it is acknowledged: a restart must not bring the disable back.
            if (ctx.Context().durable != nullptr && !co_await ctx.Context().durable->Flush()) {
                const core::LocalError refusal =
                    StoreRefusal(ctx,
                                 "it serves again until this process ends, but a restart "
                                 "would find it disabled");
                co_await WriteLocalError(ctx, refusal);
                co_return;
            }
            std::string body = boost::json::serialize(boost::json::object{{"enabled", d.name}});
            co_await WriteBody(ctx, std::move(body), "application/json");
            co_return;
        }
    }
    const core::LocalError error{core::ErrorKind::kRouteNotFound,
                                 "No deployment named '" + std::string(name) + "'."};
    co_await WriteLocalError(ctx, error);
}

asio::awaitable<void> ServeDashboard(RequestContext& ctx) {
    ctx.record.route = "dashboard";
    // The page holds no data: it asks for the master key and reads /status and /metrics with it.
    // It loads nothing from elsewhere, and nothing may frame it.
    ctx.reply_headers.emplace_back("content-security-policy",
                                   "default-src 'none'; script-src 'unsafe-inline'; "
                                   "style-src 'unsafe-inline'; connect-src 'self'; img-src data:; "
                                   "frame-ancestors 'none'");
    ctx.reply_headers.emplace_back("x-content-type-options", "nosniff");
    ctx.reply_headers.emplace_back("cache-control", "no-store");
    std::string page(observe::DashboardPage());  // named: see WriteBody
    co_await WriteBody(ctx, std::move(page), "text/html; charset=utf-8");
}

asio::awaitable<void> ServeMetrics(RequestContext& ctx) {
    ctx.record.route = "metrics";
    // The metrics name client keys: once there are any, only the master key may read them.
    if (!ctx.Context().keys.Empty()) {
        if (const auto denied = CheckMasterKey(ctx)) {
            co_await WriteLocalError(ctx, *denied);
            co_return;
        }
    }
    std::string body = ctx.Context().metrics.Render();
    body += RenderStateGauges(*ctx.runtime, ctx.Context().clock.Now());
    co_await WriteBody(ctx, std::move(body), "text/plain; version=0.0.4");
}

asio::awaitable<void> ServeReload(RequestContext& ctx) {
    ctx.record.route = "admin";
    if (const auto denied = CheckMasterKey(ctx)) {
        co_await WriteLocalError(ctx, *denied);
        co_return;
    }
    const ReloadResult result = ctx.Context().reload();
    ReportReload("admin", result);
    if (!result.problems.empty()) {
        core::LocalError error{core::ErrorKind::kInvalidRequest,
                               "The config was not reloaded; the running one keeps serving. " +
                                   std::to_string(result.problems.size()) +
                                   " problem(s): " + result.problems.front()};
        co_await WriteLocalError(ctx, error);
        co_return;
    }
    std::string body = boost::json::serialize(boost::json::object{
        {"reloaded", true}, {"model_groups", result.models}, {"deployments", result.deployments}});
    co_await WriteBody(ctx, std::move(body), "application/json");
}

}  // namespace switchyard::server
