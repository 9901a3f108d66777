// Hedged attempts in the executor (src/engine/executor.cc, SendRacing) against real health and
// budgets: the ports answer after real (short) delays and decide the race as the gateway does —
// the first racing attempt to answer claims the client and the other one ends at once, lost.

#include <gtest/gtest.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <map>
#include <string>

#include "config/config_loader.h"
#include "engine/executor.h"
#include "executor_test_support.h"
#include "policy/classify.h"

namespace switchyard::engine {
namespace executor_race_test {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using std::chrono::milliseconds;

struct Reply {
    milliseconds after;
    unsigned status = 200;
};

class RacingPorts final : public Ports {
  public:
    explicit RacingPorts(std::map<std::string, Reply> replies) : replies_(std::move(replies)) {}

    double Uniform() override { return 0.5; }

    asio::awaitable<AttemptReport> Attempt(const Target& target, const routing::PlannedGroup&,
                                           const AttemptLimits&, bool, AttemptRole role) override {
        const std::string& name = target.deployment->name;
        sent.push_back(name);
        roles.push_back(role);
        AttemptReport report;
        const Reply reply = replies_.at(name);
        const auto timer =
            std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor, reply.after);
        std::optional<int> place;
        if (role != AttemptRole::kAlone) {
            place = joined_++;
            timers_[*place] = timer;
        }
        co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
        if (place && winner_ && *winner_ != *place) {  // cancelled: the other one answered
            report.lost = true;
            report.outcome = {policy::Action::kFailOver, policy::ErrorClass::kLocal};
            co_return report;
        }
        policy::AttemptResult result;
        result.status = reply.status;
        result.body = R"({"error":{"message":"x","type":"server_error"}})";
        report.outcome = policy::Classify(result, std::chrono::system_clock::now());
        report.answered = reply.status == 200;
        if (report.answered && place) {
            winner_ = *place;
            for (const auto& other : timers_) {
                const auto running = other.lock();
                if (running && running != timer) running->cancel();
            }
        }
        co_return report;
    }
    asio::awaitable<void> Sleep(milliseconds, Action::WaitFor) override { co_return; }

    bool CanRace() const override { return true; }
    void RaceBegins() override {
        winner_.reset();
        joined_ = 0;
        timers_ = {};
    }
    bool RaceDecided() const override { return winner_.has_value(); }

    void Recorded(const config::Deployment& deployment, const routing::PlannedGroup&,
                  const AttemptReport& report, bool reported, bool) override {
        recorded.push_back(
            deployment.name + ":" +
            (reported ? std::string(policy::Name(report.outcome.error_class)) : "abandoned"));
    }

    std::vector<std::string> sent;
    std::vector<AttemptRole> roles;
    std::vector<std::string> recorded;

  private:
    std::map<std::string, Reply> replies_;
    std::optional<int> winner_;
    int joined_ = 0;
    std::array<std::weak_ptr<asio::steady_timer>, 2> timers_;  // never outlive the io_context
};

class ExecutorRaceTest : public ::testing::Test {
  protected:
    // A group of three deployments tried in order, hedged after 200 ms.
    void Load(std::string_view max_ratio) {
        const std::string yaml = std::string(R"(
health: {allowed_fails: 5}
models:
  - name: chat
    strategy: priority
    hedge: {delay: 200, max_ratio: )") +
                                 std::string(max_ratio) + R"(}
    deployments:
      - {name: first, provider: openai, model: m, api_base: "http://127.0.0.1:1/v1"}
      - {name: second, provider: openai, model: m, api_base: "http://127.0.0.1:1/v1"}
      - {name: third, provider: openai, model: m, api_base: "http://127.0.0.1:1/v1"}
)";
        const config::LoadResult loaded = config::LoadConfigText(
            yaml, "test.yaml", [](std::string_view) { return std::nullopt; });
        ASSERT_TRUE(loaded.problems.empty()) << loaded.problems.front().ToString();
        config_ = loaded.config;
        health_.emplace(config_->deployment_count, routing::HealthOptionsOf(*config_));
        headroom_.emplace(*config_, clock_.Now());
        lanes_.emplace(config_->limits.lanes);
    }

    Executed Run(RacingPorts& ports) {
        RequestFacts facts;
        const Surroundings around{*config_, *health_, *headroom_, *lanes_, clock_};
        return testing::RunChatRequest(around, facts, ports, 30s);
    }

    core::RealClock clock_;
    std::shared_ptr<const config::Config> config_;
    std::optional<routing::DeploymentHealth> health_;
    std::optional<limits::Headroom> headroom_;
    std::optional<limits::Lanes> lanes_;
};

TEST_F(ExecutorRaceTest, ASlowAttemptIsHedgedAndTheFirstAnswerWins) {
    Load("1");
    RacingPorts ports({{"first", {5000ms}}, {"second", {10ms}}, {"third", {10ms}}});
    const auto started = std::chrono::steady_clock::now();
    const Executed executed = Run(ports);
    EXPECT_EQ(executed.last.kind, Action::Kind::kDone);
    EXPECT_EQ(ports.sent, (std::vector<std::string>{"first", "second"}));
    EXPECT_EQ(ports.roles, (std::vector<AttemptRole>{AttemptRole::kRacing, AttemptRole::kHedge}));
    // The hedge's success counts; the loser is abandoned, not a failure of `first`.
    EXPECT_EQ(ports.recorded, (std::vector<std::string>{"second:none", "first:abandoned"}));
    EXPECT_EQ(health_->InFlight(0), 0);
    EXPECT_TRUE(health_->Available(0, clock_.Now()));
    // The loser ended with the winner's answer, not after its own 5 s.
    EXPECT_LT(std::chrono::steady_clock::now() - started, 4000ms);
}

TEST_F(ExecutorRaceTest, AnAnswerBeforeTheDelayIsNeverHedged) {
    Load("1");
    RacingPorts ports({{"first", {5ms}}, {"second", {5ms}}, {"third", {5ms}}});
    EXPECT_EQ(Run(ports).last.kind, Action::Kind::kDone);
    EXPECT_EQ(ports.sent, (std::vector<std::string>{"first"}));
    EXPECT_EQ(ports.recorded, (std::vector<std::string>{"first:none"}));
}

TEST_F(ExecutorRaceTest, WhenNeitherAnswersBothCountAndTheWalkGoesOn) {
    Load("1");
    RacingPorts ports({{"first", {400ms, 500}}, {"second", {60ms, 500}}, {"third", {5ms}}});
    EXPECT_EQ(Run(ports).last.kind, Action::Kind::kDone);
    EXPECT_EQ(ports.sent, (std::vector<std::string>{"first", "second", "third"}));
    EXPECT_EQ(ports.recorded, (std::vector<std::string>{"second:server_error", "first:server_error",
                                                        "third:none"}));
}

TEST_F(ExecutorRaceTest, TheBudgetBoundsTheShareOfRequestsHedged) {
    Load("0.5");  // half a token per request: the first request cannot hedge, the second can
    RacingPorts ports({{"first", {400ms}}, {"second", {5ms}}, {"third", {5ms}}});
    EXPECT_EQ(Run(ports).last.kind, Action::Kind::kDone);
    EXPECT_EQ(ports.sent, (std::vector<std::string>{"first"}));
    EXPECT_EQ(Run(ports).last.kind, Action::Kind::kDone);
    EXPECT_EQ(ports.sent, (std::vector<std::string>{"first", "first", "second"}));
}

}  // namespace executor_race_test
}  // namespace switchyard::engine
