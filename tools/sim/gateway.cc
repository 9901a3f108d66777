#include "gateway.h"

#include <algorithm>
#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <string_view>
#include <utility>
#include <variant>

#include "engine/chain.h"
#include "engine/executor.h"
#include "engine/give_up.h"
#include "engine/request_options.h"
#include "engine/world.h"
#include "policy/classify.h"
#include "policy/rate_limit_headers.h"
#include "routing/fallback_plan.h"
#include "routing/strategy.h"

namespace switchyard::sim {

namespace asio = boost::asio;

namespace {

using Kind = engine::Action::Kind;

void AddRetryAfter(std::string& head, milliseconds wait) {
    const long long ms = std::max<long long>(1, wait.count());
    head += "retry-after: " + std::to_string((ms + 999) / 1000) + "\r\n";
    head += "retry-after-ms: " + std::to_string(ms) + "\r\n";
}

}  // namespace

// One request's walk: the engine's state and what the simulated gateway keeps besides it.
struct SimGateway::Walk {
    Walk(GatewayRequest r, std::function<void(GatewayAnswer)> d, engine::RequestOptions o,
         std::vector<engine::Stage> chain, TimePoint deadline)
        : request(std::move(r)),
          done(std::move(d)),
          options(std::move(o)),
          state(options.policy, chain, deadline) {}

    GatewayRequest request;
    std::function<void(GatewayAnswer)> done;
    engine::RequestOptions options;
    engine::AttemptState state;
    engine::RequestFacts facts;
    int attempts = 0;
    unsigned last_status = 0;
    policy::ErrorClass last_class = policy::ErrorClass::kNone;
    std::string last_head;  // of the last upstream answer, passed through with a client error
    GatewayAnswer answer;   // of the attempt that answered
    // The race of a hedged attempt and its hedge: who answered first, and each runner's wait.
    struct Race {
        std::optional<int> winner;
        int joined = 0;
        std::array<std::shared_ptr<asio::steady_timer>, 2> waits;
    } race;
};

// The engine's executor (src/engine/executor.cc) acting on a virtual clock: an attempt is a call
// to a SimProvider that ends later in virtual time, a wait an event later in time.
class SimGateway::Ports final : public engine::Ports {
  public:
    Ports(SimGateway& gateway, Walk& walk) : gateway_(gateway), walk_(walk) {}

    double Uniform() override { return gateway_.Draw(); }

    asio::awaitable<engine::AttemptReport> Attempt(const engine::Target& target,
                                                   const routing::PlannedGroup&,
                                                   const engine::AttemptLimits& limits, bool,
                                                   engine::AttemptRole role) override {
        co_return co_await gateway_.Attempt(walk_, *target.deployment, limits, role);
    }

    bool CanRace() const override { return true; }
    void RaceBegins() override { walk_.race = {}; }
    bool RaceDecided() const override { return walk_.race.winner.has_value(); }
    void After(milliseconds wait, asio::any_io_executor, std::function<void()> then) override {
        gateway_.Then(wait, std::move(then));
    }

    asio::awaitable<void> Sleep(milliseconds wait, engine::Action::WaitFor) override {
        co_await gateway_.After(wait);
    }

  private:
    SimGateway& gateway_;
    Walk& walk_;
};

SimGateway::SimGateway(const config::Config& config, EventLoop& loop, VirtualClock& clock,
                       std::vector<SimProvider*> providers, std::uint64_t seed)
    : config_(config),
      loop_(loop),
      clock_(clock),
      providers_(std::move(providers)),
      health_(config.deployment_count, routing::HealthOptionsOf(config)),
      headroom_(config, clock.Now()),
      lanes_(config.limits.lanes),
      rng_(seed) {}

SimGateway::~SimGateway() = default;

void SimGateway::Handle(GatewayRequest request, std::function<void(GatewayAnswer)> done) {
    const int retry_count = request.sdk_retry_count;
    const std::optional<milliseconds> deadline = request.deadline;
    const std::string retry_text = std::to_string(retry_count);
    const std::string deadline_text = deadline ? std::to_string(deadline->count()) : "";
    const engine::HeaderLookup header =
        [&](std::string_view name) -> std::optional<std::string_view> {
        if (name == "x-stainless-retry-count" && retry_count >= 0) return retry_text;
        if (name == "x-switchyard-deadline-ms" && deadline) return deadline_text;
        return std::nullopt;
    };
    auto read =
        engine::ReadRequestOptions(config_, header, nullptr, request.stream, request.max_tokens);
    engine::RequestOptions options = std::get<engine::RequestOptions>(std::move(read));
    const std::function<double()> draw = [this] { return Draw(); };
    // The request's facts as the server reads them.
    engine::RequestFacts facts;
    facts.lane = request.lane;
    facts.input_estimate = request.input_tokens;
    facts.max_tokens = request.max_tokens;
    facts.fallbacks = options.fallbacks;
    facts.client_budget = request.client_budget;
    facts.shape = {options.timeouts, request.stream, request.max_tokens};
    std::vector<engine::Stage> chain =
        engine::PlanChain(config_, {request.model}, std::nullopt, options, health_, draw, facts);
    const bool refused = engine::NoDeploymentAllowed(chain, facts);
    const TimePoint deadline_at = clock_.Now() + options.deadline;
    auto walk = std::make_shared<Walk>(std::move(request), std::move(done), std::move(options),
                                       std::move(chain), deadline_at);
    walk->facts = std::move(facts);
    if (refused) {
        GatewayAnswer refusal;  // nothing of the chain is in an allowed region
        refusal.status = 403;
        Finish(walk, std::move(refusal));
        return;
    }
    asio::co_spawn(io_, Serve(walk), asio::detached);
    Poll();
}

void SimGateway::Poll() {
    if (polling_) return;  // the poll under way runs what was just posted
    polling_ = true;
    io_.poll();
    polling_ = false;
}

asio::awaitable<void> SimGateway::After(milliseconds delay) {
    co_await asio::async_initiate<const asio::use_awaitable_t<>&, void()>(
        [this, delay](auto handler) {
            auto held = std::make_shared<decltype(handler)>(std::move(handler));
            loop_.After(delay, [this, held] {
                asio::post(io_, std::move(*held));
                Poll();
            });
        },
        asio::use_awaitable);
}

void SimGateway::Then(milliseconds delay, std::function<void()> then) {
    loop_.After(delay, [this, then = std::move(then)] {
        asio::post(io_, then);
        Poll();
    });
}

asio::awaitable<void> SimGateway::AfterUnlessWoken(milliseconds delay,
                                                   std::shared_ptr<asio::steady_timer> wake) {
    Then(delay, [wake] { wake->cancel(); });
    co_await wake->async_wait(asio::as_tuple(asio::use_awaitable));
}

asio::awaitable<void> SimGateway::Serve(std::shared_ptr<Walk> walk) {
    Ports ports(*this, *walk);
    const engine::Surroundings around{config_, health_, headroom_, lanes_, clock_};
    const engine::Executed executed =
        co_await engine::Execute(walk->state, around, walk->facts, ports);
    const engine::Action& action = executed.last;
    switch (action.kind) {
        case Kind::kDone:  // answered by the attempt that ended
            Finish(walk, std::move(walk->answer));
            co_return;
        case Kind::kPassThrough: {
            GatewayAnswer answer;
            answer.status = walk->last_status;
            answer.head = walk->last_head;
            Finish(walk, std::move(answer));
            co_return;
        }
        default: {
            GatewayAnswer answer;
            if (config_.degradation.mode == config::DegradationConfig::Mode::kStatic) {
                answer.degraded = true;
                Finish(walk, std::move(answer));
                co_return;
            }
            answer.status = engine::GiveUpStatus(action, walk->attempts > 0, walk->last_status,
                                                 walk->last_class);
            answer.shed = walk->attempts == 0 && action.headroom_short_for.has_value();
            if (action.retry_after) AddRetryAfter(answer.head, *action.retry_after);
            answer.head += "x-should-retry: false\r\n";
            Finish(walk, std::move(answer));
            co_return;
        }
    }
}

asio::awaitable<engine::AttemptReport> SimGateway::Attempt(Walk& walk,
                                                           const config::Deployment& deployment,
                                                           const engine::AttemptLimits& limits,
                                                           engine::AttemptRole role) {
    engine::AttemptReport report;
    std::optional<int> place;  // in the request's race, when it runs in one
    if (role != engine::AttemptRole::kAlone) {
        if (walk.race.winner) {  // another attempt answered already: nothing is sent
            report.lost = true;
            report.outcome = {policy::Action::kFailOver, policy::ErrorClass::kLocal};
            co_return report;
        }
        place = walk.race.joined++;
    }
    ++walk.attempts;
    SimProvider& provider = *providers_[deployment.index];
    Reply reply =
        provider.Call(walk.request.stream, walk.request.input_tokens, walk.request.max_tokens);
    // The attempt's limits, as the gateway arms them (src/server/attempt.cc): a reply's duration
    // is its time to content, which must come within the attempt's first-content limit.
    const milliseconds first_byte = limits.first_content;
    const milliseconds chunk = std::min(limits.chunk, limits.first_token);
    bool timed_out = false;
    milliseconds duration = reply.duration;
    if (reply.stalls && !reply.cut_mid_stream) {
        timed_out = true;
        duration = first_byte;
    } else if (reply.stalls_before_content) {
        // The head came; the first token never does: the first-token limit runs from the head.
        timed_out = true;
        duration = std::min(first_byte, reply.duration + limits.first_token);
    } else if (reply.duration > first_byte) {
        timed_out = true;
        duration = first_byte;
    } else if (reply.stalls) {
        duration = reply.duration + chunk;  // content flowed, then nothing: the chunk timeout
    }
    if (place) {
        auto wait =
            std::make_shared<asio::steady_timer>(io_, asio::steady_timer::time_point::max());
        walk.race.waits[*place] = wait;
        co_await AfterUnlessWoken(duration, wait);
        if (walk.race.winner && *walk.race.winner != *place) {
            provider.Ended();  // the gateway closed its connection: the provider stops
            report.lost = true;
            report.outcome = {policy::Action::kFailOver, policy::ErrorClass::kLocal};
            co_return report;
        }
    } else {
        co_await After(duration);
    }

    const auto wall = clock_.WallNow();
    provider.Ended();
    report.cut_by_deadline = timed_out && limits.deadline_bound;
    report.timed_out = timed_out;
    report.streamed = walk.request.stream;
    if (!timed_out) {
        report.time_to_first_byte = duration;
        if (report.streamed) report.first_token_after_head = milliseconds(0);
    }
    report.input_tokens = walk.request.input_tokens;
    policy::Outcome& outcome = report.outcome;
    if (timed_out) {
        outcome = policy::Classify({policy::Transport::kTimeout}, wall);
    } else {
        const std::vector<policy::HeaderField> fields = reply.Fields();
        const policy::RateLimitHeaders reported = policy::ParseRateLimitHeaders(fields, wall);
        health_.NoteHeadroom(deployment.index, reported);
        headroom_.Correct(deployment.index, reported, clock_.Now());
        if (reply.transport != policy::Transport::kOk) {
            outcome = policy::Classify({reply.transport}, wall);
        } else if (reply.cut_mid_stream) {
            // After the commit point in interactive mode: the client has the stream, and an
            // error ends it. In background mode the gateway holds it and may try again.
            report.answered = !walk.options.background;
            if (!reply.stream_error.empty()) {
                policy::AttemptResult result;
                result.status = policy::StatusOfStreamError(reply.stream_error);
                result.body = reply.stream_error;
                outcome = policy::Classify(result, wall);
            } else {
                outcome = policy::Classify(
                    {reply.stalls ? policy::Transport::kTimeout : policy::Transport::kTruncated},
                    wall);
            }
        } else {
            policy::AttemptResult result;
            result.status = reply.status;
            result.body = reply.body;
            result.retry_after = reply.Header("retry-after");
            result.retry_after_ms = reply.Header("retry-after-ms");
            result.should_retry = reply.Header("x-should-retry");
            outcome = policy::Classify(result, wall);
            report.answered = reply.status >= 200 && reply.status < 300;
        }
    }
    if (report.answered && place) {
        // It claims the client: the other runner of the race ends now.
        walk.race.winner = *place;
        for (const auto& other : walk.race.waits) {
            if (other && other != walk.race.waits[*place]) other->cancel();
        }
    }
    if (report.answered) {
        report.output_tokens = reply.output_tokens;
        walk.answer = GatewayAnswer{};
        walk.answer.interrupted = outcome.error_class != policy::ErrorClass::kNone;
        walk.answer.served_by = deployment.name;
        co_return report;
    }
    walk.last_status = timed_out || reply.transport != policy::Transport::kOk
                           ? 0
                           : (reply.cut_mid_stream && !reply.stream_error.empty()
                                  ? policy::StatusOfStreamError(reply.stream_error)
                                  : reply.status);
    walk.last_class = outcome.error_class;
    walk.last_head = std::move(reply.head);
    co_return report;
}

void SimGateway::Finish(const std::shared_ptr<Walk>& walk, GatewayAnswer answer) {
    answer.attempts = walk->attempts;
    walk->done(std::move(answer));
}

}  // namespace switchyard::sim
