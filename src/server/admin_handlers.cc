#include "server/admin_handlers.h"

#include <boost/json.hpp>

#include "server/http_io.h"

namespace switchyard::server {

asio::awaitable<void> ServeModels(RequestContext& ctx) {
    ctx.record.route = "models";
    boost::json::array data;
    for (const auto& group : ctx.Config().models) {
        data.push_back(boost::json::object{
            {"id", group.name}, {"object", "model"}, {"created", 0}, {"owned_by", "switchyard"}});
    }
    boost::json::object list{{"object", "list"}, {"data", std::move(data)}};
    std::string body = boost::json::serialize(list);
    co_await WriteBody(ctx, std::move(body), "application/json");
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

asio::awaitable<void> ServeMetrics(RequestContext& ctx) {
    ctx.record.route = "metrics";
    std::string body = ctx.Context().metrics.Render();
    co_await WriteBody(ctx, std::move(body), "text/plain; version=0.0.4");
}

}  // namespace switchyard::server
