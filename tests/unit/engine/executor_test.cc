// The executor (src/engine/executor.cc) against real health, headroom and lanes, on a clock the
// test moves: the ports stand for the network only — each attempt answers with a scripted HTTP
// status, classified by the real classifier, and a wait moves the clock.

#include "engine/executor.h"

#include <gtest/gtest.h>

#include <boost/asio/use_awaitable.hpp>
#include <deque>
#include <map>
#include <string>

#include "config/config_loader.h"
#include "executor_test_support.h"
#include "policy/classify.h"

namespace switchyard::engine {
namespace executor_test {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using std::chrono::milliseconds;

class TestClock final : public core::Clock {
  public:
    TimePoint Now() const override { return now_; }
    std::chrono::system_clock::time_point WallNow() const override {
        return std::chrono::system_clock::time_point(std::chrono::seconds(1'767'225'600)) +
               std::chrono::duration_cast<std::chrono::system_clock::duration>(now_ - TimePoint{});
    }
    void Advance(std::chrono::steady_clock::duration d) { now_ += d; }

  private:
    TimePoint now_ = TimePoint{} + std::chrono::hours(1);
};

// One scripted upstream answer.
struct Reply {
    unsigned status = 200;
    std::string retry_after;  // seconds, "" for none
    bool cut_by_deadline = false;
};

class ScriptedPorts final : public Ports {
  public:
    ScriptedPorts(TestClock& clock, std::map<std::string, std::deque<Reply>> script)
        : clock_(clock), script_(std::move(script)) {}

    double Uniform() override { return 0.5; }
    bool ClientGone() const override { return gone_after_ >= 0 && int(sent.size()) >= gone_after_; }

    asio::awaitable<AttemptReport> Attempt(const Target& target, const routing::PlannedGroup&,
                                           const AttemptLimits& attempt_limits, bool panic,
                                           AttemptRole) override {
        const std::string& name = target.deployment->name;
        sent.push_back(name);
        limits.push_back(attempt_limits);
        panics.push_back(panic);
        std::deque<Reply>& replies = script_[name];
        const Reply reply = replies.empty() ? Reply{} : replies.front();
        if (!replies.empty()) replies.pop_front();
        clock_.Advance(10ms);
        AttemptReport report;
        policy::AttemptResult result;
        result.status = reply.status;
        result.body = R"({"error":{"message":"x","type":"server_error"}})";
        if (!reply.retry_after.empty()) result.retry_after = reply.retry_after;
        if (reply.cut_by_deadline) result.transport = policy::Transport::kTimeout;
        report.outcome = policy::Classify(result, clock_.WallNow());
        report.answered = !reply.cut_by_deadline && reply.status == 200;
        report.cut_by_deadline = reply.cut_by_deadline;
        report.time_to_first_byte = 10ms;
        co_return report;
    }
    asio::awaitable<void> Sleep(milliseconds wait, Action::WaitFor) override {
        waits.push_back(wait);
        clock_.Advance(wait);
        co_return;
    }
    void Recorded(const config::Deployment&, const routing::PlannedGroup&,
                  const AttemptReport& report, bool reported, bool) override {
        recorded.push_back(reported ? std::string(policy::Name(report.outcome.error_class))
                                    : "abandoned");
    }

    std::vector<std::string> sent;
    std::vector<milliseconds> waits;
    std::vector<AttemptLimits> limits;  // of each attempt sent
    std::vector<bool> panics;
    std::vector<std::string> recorded;
    int gone_after_ = -1;  // the client leaves once this many attempts were sent

  private:
    TestClock& clock_;
    std::map<std::string, std::deque<Reply>> script_;
};

constexpr std::string_view kConfig = R"(
retry: {max_attempts: 4}
health: {allowed_fails: 0, cooldown_ms: 60000}
models:
  - name: chat
    strategy: priority
    deployments:
      - {name: first, provider: openai, model: m, api_base: "http://127.0.0.1:1/v1"}
      - {name: second, provider: openai, model: m, api_base: "http://127.0.0.1:1/v1"}
)";

class ExecutorTest : public ::testing::Test {
  protected:
    void SetUp() override {
        const config::LoadResult loaded = config::LoadConfigText(
            kConfig, "test.yaml", [](std::string_view) { return std::nullopt; });
        ASSERT_TRUE(loaded.problems.empty()) << loaded.problems.front().ToString();
        config_ = loaded.config;
        health_.emplace(config_->deployment_count, routing::HealthOptionsOf(*config_));
        headroom_.emplace(*config_, clock_.Now());
        lanes_.emplace(config_->limits.lanes);
    }

    // Runs one request for the group `chat` to its end.
    Executed Run(ScriptedPorts& ports, milliseconds deadline = 30s) {
        facts_.client_budget = &client_budget_;
        const Surroundings around{*config_, *health_, *headroom_, *lanes_, clock_};
        return testing::RunChatRequest(around, facts_, ports, deadline);
    }

    bool Available(std::size_t index) { return health_->Available(index, clock_.Now()); }

    TestClock clock_;
    std::shared_ptr<const config::Config> config_;
    std::optional<routing::DeploymentHealth> health_;
    std::optional<limits::Headroom> headroom_;
    std::optional<limits::Lanes> lanes_;
    policy::RetryBudget client_budget_{100, 0.1};
    RequestFacts facts_;
};

TEST_F(ExecutorTest, AFailureMovesToTheNextDeploymentAndIsRecordedInHealth) {
    ScriptedPorts ports(clock_, {{"first", {{.status = 500}}}, {"second", {{.status = 200}}}});
    const Executed executed = Run(ports);
    EXPECT_EQ(executed.last.kind, Action::Kind::kDone);
    EXPECT_FALSE(executed.client_gone);
    EXPECT_EQ(ports.sent, (std::vector<std::string>{"first", "second"}));
    EXPECT_EQ(ports.recorded, (std::vector<std::string>{"server_error", "none"}));
    // allowed_fails: 0 — the one failure cooled `first` down; `second` serves on.
    EXPECT_FALSE(Available(0));
    EXPECT_TRUE(Available(1));
}

TEST_F(ExecutorTest, ARateLimitWithRetryAfterIsWaitedOutWhenNothingElseCanServe) {
    ScriptedPorts ports(clock_,
                        {{"first", {{.status = 429, .retry_after = "2"}, {.status = 200}}},
                         {"second", {{.status = 429, .retry_after = "1"}, {.status = 200}}}});
    const Executed executed = Run(ports);
    EXPECT_EQ(executed.last.kind, Action::Kind::kDone);
    ASSERT_EQ(ports.sent.size(), 3U);
    ASSERT_EQ(ports.waits.size(), 1U);
    // The provider's retry-after is a minimum: the wait ends no earlier than `second`'s mark.
    EXPECT_GE(ports.waits[0], 1000ms - 20ms);
    EXPECT_EQ(ports.sent[2], "second");
}

TEST_F(ExecutorTest, AnAttemptCutByTheRequestsDeadlineSaysNothingAboutTheDeployment) {
    ScriptedPorts ports(
        clock_, {{"first", {{.cut_by_deadline = true}}}, {"second", {{.cut_by_deadline = true}}}});
    const Executed executed = Run(ports, 5ms);
    EXPECT_EQ(executed.last.kind, Action::Kind::kGiveUp);
    EXPECT_EQ(ports.recorded, (std::vector<std::string>{"abandoned"}));
    EXPECT_TRUE(Available(0));
    EXPECT_TRUE(Available(1));
    EXPECT_EQ(health_->InFlight(0), 0);
}

TEST_F(ExecutorTest, WhenEverythingIsBenchedTheLeastBadIsTriedAndRetriedInAPanic) {
    // `first` answered one call of six, `second` one of eleven; both benched, their breakers open.
    const auto now = clock_.Now();
    const auto wall = clock_.WallNow();
    for (std::size_t d = 0; d < 2; ++d) {
        health_->OnOutcome(d, now, wall, policy::ErrorClass::kNone, std::nullopt, 10ms);
        for (std::size_t i = 0; i < (d == 0 ? 5u : 9u); ++i) {
            health_->OnOutcome(d, now, wall, policy::ErrorClass::kOverloaded, std::nullopt,
                               std::nullopt);
        }
    }
    ASSERT_EQ(health_->Snapshot(0, now).breaker, policy::CircuitBreaker::State::kOpen);
    ASSERT_FALSE(Available(1));
    ScriptedPorts ports(clock_, {{"first", {{.status = 529}, {.status = 529}, {.status = 200}}}});
    const Executed executed = Run(ports);
    EXPECT_EQ(executed.last.kind, Action::Kind::kDone);
    EXPECT_EQ(ports.sent, (std::vector<std::string>{"first", "first", "first"}));
    EXPECT_EQ(ports.panics, (std::vector<bool>{true, true, true}));
}

TEST_F(ExecutorTest, AClientThatLeftStopsTheWalkWithNothingRecorded) {
    ScriptedPorts ports(clock_, {{"first", {{.status = 500}}}});
    ports.gone_after_ = 1;
    const Executed executed = Run(ports);
    EXPECT_TRUE(executed.client_gone);
    EXPECT_EQ(ports.sent.size(), 1U);
    EXPECT_TRUE(ports.recorded.empty());
    EXPECT_TRUE(Available(0));  // abandoned, not reported
    EXPECT_EQ(health_->InFlight(0), 0);
}

}  // namespace executor_test
}  // namespace switchyard::engine
