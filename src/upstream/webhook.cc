#include "upstream/webhook.h"

#include <fmt/format.h>

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

#include "core/version.h"
#include "upstream/upstream_call.h"

namespace switchyard::upstream {
namespace {

constexpr std::chrono::seconds kTimeout{10};
constexpr std::size_t kMaxAnswerBytes = 64 * 1024;

asio::awaitable<void> Post(ConnectionPool* pool, const core::Clock* clock,
                           config::Deployment target, std::string json) {
    providers::UpstreamRequest request;
    request.target = target.base_url.path_prefix.empty() ? "/" : target.base_url.path_prefix;
    const std::string user_agent = std::string("switchyard/") + kVersion;
    request.headers = {{"content-type", "application/json"}, {"user-agent", user_agent}};
    request.rendered = std::move(json);

    UpstreamCall call(*pool, *clock);
    const bool started =
        co_await call.Start(target, request, {kTimeout, kTimeout, clock->Now() + kTimeout});
    unsigned status = 0;
    std::string answer;  // read whole, so that the connection can serve again
    if (started) {
        status = call.Header().result_int();
        co_await call.ReadAll(answer, kMaxAnswerBytes);
    }
    if (call.Failed() || status < 200 || status >= 300) {
        fmt::print(
            stderr,
            "{{\"level\":\"error\",\"event\":\"webhook_failed\",\"host\":\"{}\",\"status\":{},"
            "\"error\":{}}}\n",
            target.base_url.host, status,
            boost::json::serialize(boost::json::string(call.Error().message)));
    }
}

}  // namespace

void PostWebhook(ConnectionPool& pool, const core::Clock& clock, const std::string& url,
                 std::string json) {
    config::Deployment target;
    target.name = "alert webhook";
    std::string error;
    std::optional<core::BaseUrl> parsed = core::ParseBaseUrl(url, error);
    if (!parsed) return;  // validated when the config was loaded
    target.base_url = std::move(*parsed);
    asio::co_spawn(pool.Executor(), Post(&pool, &clock, std::move(target), std::move(json)),
                   asio::detached);
}

}  // namespace switchyard::upstream
