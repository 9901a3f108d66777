#include "server/gateway_ports.h"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <random>

#include "core/time_format.h"
#include "policy/spend_cap.h"
#include "server/request_trace.h"
#include "upstream/webhook.h"

namespace switchyard::server {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A spend cap disabled `deployment`: an error-level line on stderr and, when configured, a POST to
// the alert webhook. Both off the request's way.
void AlertDisabled(RequestContext& ctx, const config::Deployment& deployment) {
    const auto until = policy::SpendCapResetAfter(ctx.Context().clock.WallNow());
    const std::string event = boost::json::serialize(
        boost::json::object{{"level", "error"},
                            {"event", "deployment_disabled"},
                            {"reason", "spend_cap"},
                            {"deployment", deployment.name},
                            {"model_group", ctx.model_group},
                            {"disabled_until", core::Rfc3339(until)},
                            {"upstream_request_id", ctx.upstream_request_id}});
    fmt::print(stderr, "{}\n", event);
    const std::string& webhook = ctx.Config().alerts.webhook_url;
    if (!webhook.empty()) {
        upstream::PostWebhook(ctx.worker.pool, ctx.Context().clock, webhook, event);
    }
}

// The metrics' name for why the engine waits.
std::string_view WaitReason(engine::Action::WaitFor wait_for) {
    switch (wait_for) {
        case engine::Action::WaitFor::kBackoff:
            return "backoff";
        case engine::Action::WaitFor::kRateLimit:
            return "retry_after";
        case engine::Action::WaitFor::kHeadroom:
            return "headroom";
    }
    return "backoff";
}

// The engine's executor acting over sockets: attempts are upstream calls, waits are timers cut
// short by a client that leaves, the fleet's shared state is Redis, and what happens is counted
// in the metrics, the trace and the attempt notes.
class GatewayPorts final : public engine::Ports {
  public:
    GatewayPorts(RequestContext& ctx, Walk& walk) : ctx_(ctx), walk_(walk) {}

    double Uniform() override { return uniform_(ctx_.worker.rng); }
    bool ClientGone() const override { return walk_.client.Gone(); }

    asio::awaitable<engine::AttemptReport> Attempt(const engine::Target& target,
                                                   const routing::PlannedGroup& stage,
                                                   const engine::AttemptLimits& limits, bool panic,
                                                   engine::AttemptRole role) override {
        const config::Deployment& deployment = *target.deployment;
        const bool hedge = role == engine::AttemptRole::kHedge;
        if (!walk_.notes.empty() && !hedge) {
            // Sent because an earlier attempt of this request failed.
            const core::AttemptNote& failed = walk_.notes.back();
            ctx_.Context().metrics.CountRetry(ctx_.worker.index, failed.model_group,
                                              failed.error_class);
        }
        std::size_t span = 0;
        if (ctx_.trace) {
            span = ctx_.trace->BeginAttempt(deployment, stage, !walk_.notes.empty(), hedge);
        }
        if (hedge) {
            ctx_.record.hedged = true;
        } else {
            ctx_.record.panic = panic;
        }
        if (panic) ctx_.Context().metrics.CountPanicAttempt(deployment.name);
        AttemptRace* race = role == engine::AttemptRole::kAlone ? nullptr : &walk_.race;
        AttemptEnd end = co_await RunAttempt(ctx_, walk_.setup, deployment, stage, limits, race);
        if (ctx_.trace) ctx_.trace->EndAttempt(span, end, ctx_.upstream_request_id);
        if (hedge) {
            ctx_.Context().metrics.CountHedge(deployment.name, end.answered ? "won"
                                                               : end.lost   ? "lost"
                                                                            : "failed");
        }
        engine::AttemptReport report;
        report.outcome = end.Outcome();
        report.answered = end.answered;
        report.lost = end.lost;
        report.cut_by_deadline = end.cut_by_deadline;
        report.timed_out = end.failure && end.status == 0 &&
                           end.failure->outcome.error_class == policy::ErrorClass::kTimeout;
        report.time_to_first_byte = end.time_to_first_byte;
        report.streamed = end.streamed;
        report.longest_gap = end.longest_gap;
        if (end.streamed && end.time_to_first_token && end.time_to_first_byte) {
            report.first_token_after_head =
                std::chrono::duration_cast<milliseconds>(*end.time_to_first_token) -
                *end.time_to_first_byte;
        }
        report.input_tokens = ctx_.record.input_tokens;
        report.output_tokens = ctx_.record.output_tokens;
        end_ = std::move(end);  // until Recorded, which follows without a suspension
        co_return report;
    }

    bool CanRace() const override { return true; }
    void RaceBegins() override { walk_.race.Reset(); }
    bool RaceDecided() const override { return walk_.race.Decided(); }

    asio::awaitable<void> Sleep(milliseconds wait, engine::Action::WaitFor wait_for) override {
        const core::Clock& clock = ctx_.Context().clock;
        const Clock::time_point started = clock.Now();
        if (ctx_.trace) ctx_.trace->BeginWait(WaitReason(wait_for), wait);
        asio::steady_timer timer(ctx_.stream.get_executor());
        {
            const TrackedBy<asio::steady_timer> tracked(&walk_.client, timer);
            timer.expires_after(wait);
            // A cancelled wait (the client left) just ends early; the executor notices.
            auto [ec] = co_await timer.async_wait(kTuple);
            (void)ec;
        }
        if (ctx_.trace) ctx_.trace->EndWait();
        walk_.waited += wait;
        // What was waited: a client that left cut the wait short.
        ctx_.Context().metrics.ObserveWait(
            ctx_.worker.index, WaitReason(wait_for),
            std::chrono::duration<double>(clock.Now() - started).count());
    }

    bool SharesState() const override { return ctx_.Context().shared != nullptr; }
    asio::awaitable<std::optional<milliseconds>> ReserveShared(
        const config::Deployment& deployment, std::vector<limits::BucketDemand> demands) override {
        co_return co_await ctx_.Context().shared->ReserveHeadroom(
            ctx_.worker.index, deployment.name, std::move(demands));
    }
    void AdjustShared(const config::Deployment& deployment,
                      std::vector<limits::BucketDemand> demands) override {
        ctx_.Context().shared->AdjustHeadroom(ctx_.worker.index, deployment.name,
                                              std::move(demands));
    }
    asio::awaitable<std::optional<bool>> TakeSharedProbe(
        const config::Deployment& deployment) override {
        const config::Config& config = ctx_.Config();
        co_return co_await ctx_.Context().shared->TakeProbe(ctx_.worker.index, deployment.name,
                                                            config.health.breaker_half_open_probes,
                                                            config.health.breaker_open);
    }
    void ReleaseSharedProbe(const config::Deployment& deployment) override {
        ctx_.Context().shared->ReleaseProbe(ctx_.worker.index, deployment.name);
    }

    void NoHeadroom(const config::Deployment& deployment, milliseconds spacing) override {
        walk_.waited_for = deployment.index;
        walk_.spacing = spacing;
    }
    void Queued(const engine::Action&) override {
        ctx_.Context().metrics.CountHeadroomWait(ctx_.record.lane);
    }

    // After an attempt: the metrics, the alert of a newly disabled deployment and, when it
    // failed, the attempt notes and the failure the client may be told of.
    void Recorded(const config::Deployment& deployment, const routing::PlannedGroup& stage,
                  const engine::AttemptReport& report, bool, bool disabled) override {
        ServerContext& context = ctx_.Context();
        const policy::ErrorClass error = report.outcome.error_class;
        context.metrics.CountAttempt(ctx_.worker.index, deployment.name,
                                     report.lost ? "lost_race" : policy::Name(error));
        if (report.answered) {
            ctx_.record.cost_usd =
                CostOfTokens(deployment, ctx_.record.input_tokens, ctx_.record.output_tokens);
            if (end_.time_to_first_token) {
                context.metrics.ObserveTimeToFirstToken(
                    ctx_.worker.index, stage.group->name, deployment.name,
                    std::chrono::duration<double>(*end_.time_to_first_token).count());
            }
        }
        if (disabled) {
            context.metrics.CountSpendCapDisable(deployment.name);
            AlertDisabled(ctx_, deployment);
        }
        if (error != policy::ErrorClass::kNone && !report.lost) {
            // Every failed attempt, a stream that failed after its commit point too.
            context.metrics.Failures().Add(
                {context.clock.WallNow(), stage.group->name, deployment.name, end_.status,
                 std::string(policy::Name(error)), ctx_.upstream_request_id});
        }
        if (report.answered) {
            if (stage.depth > 0) context.metrics.CountFallback(stage.depth);
            return;
        }
        if (report.lost) return;  // cancelled: another attempt of its race answered
        walk_.notes.push_back({stage.group->name, deployment.name, end_.status,
                               std::string(policy::Name(error)), ctx_.upstream_request_id,
                               walk_.waited.count()});
        walk_.waited = milliseconds(0);
        walk_.last = std::move(end_);
    }

  private:
    RequestContext& ctx_;
    Walk& walk_;
    std::uniform_real_distribution<double> uniform_{0.0, 1.0};
    AttemptEnd end_;  // the last attempt's, until it is recorded
};

}  // namespace

asio::awaitable<engine::Action> RunEngine(RequestContext& ctx, Walk& walk,
                                          engine::AttemptState& state) {
    GatewayPorts ports(ctx, walk);
    const engine::Surroundings around{ctx.Config(), ctx.Health(), ctx.Headroom(), ctx.Lanes(),
                                      ctx.Context().clock};
    const engine::Executed executed = co_await engine::Execute(state, around, walk.facts, ports);
    if (executed.client_gone) {
        ctx.error = "client went away before the answer";
        ctx.keep_alive = false;
    }
    co_return executed.last;
}

}  // namespace switchyard::server
