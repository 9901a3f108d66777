// Hedged attempts as the engine decides them (src/engine/decide.h, Hedge) and their delay
// (src/engine/attempt_limits.h, HedgeDelay); the race itself runs in integration.hedging.

#include <gtest/gtest.h>

#include "config/config_loader.h"
#include "engine/attempt_limits.h"
#include "engine/decide.h"
#include "engine_test_support.h"

namespace switchyard::engine {
namespace hedge_test {

using namespace std::chrono_literals;
using testing::ChainBuilder;
using testing::DefaultPolicy;
using testing::kT0;
using testing::Retry;
using Kind = Action::Kind;
using Block = TargetHealth::Block;
using policy::ErrorClass;

struct Request {
    Request(EnginePolicy policy, const std::vector<Stage>& chain, const ChainBuilder& builder)
        : state(policy, chain, kT0 + 45s), health(builder.DeploymentCount()) {}

    World At() const { return World{health, true, now, 0.5}; }
    Action Next(Event event) { return Decide(state, std::move(event), At()); }
    std::string Name(const Action& a) const { return state.targets[a.target].deployment->name; }

    AttemptState state;
    std::vector<TargetHealth> health;
    TimePoint now = kT0;
};

TEST(HedgeTest, AHedgeGoesToTheNextTargetThatCanServeNow) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 3, 0), b.Add("b", 1, 1)}, b);
    const Action send = r.Next(event::Start{});
    ASSERT_EQ(r.Name(send), "a1");
    r.health[1].block = Block::kSick;  // a2 is benched: a hedge never goes to a benched target
    r.now += 300ms;
    const std::optional<Action> hedge = Hedge(r.state, r.At());
    ASSERT_TRUE(hedge);
    EXPECT_EQ(hedge->kind, Kind::kSend);
    EXPECT_EQ(r.Name(*hedge), "a3");
    EXPECT_FALSE(hedge->last_resort);
    EXPECT_FALSE(Hedge(r.state, r.At())) << "one hedge per send";
}

TEST(HedgeTest, AHedgeWithNothingAfterItIsTheLastResort) {
    // In a provider-wide slowdown the hedge may be the one that answers: cut early by its own
    // history it would leave the request nothing (docs/resilience.md#adaptive-timeouts).
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 1, 0), b.Add("b", 1, 1)}, b);
    const Action send = r.Next(event::Start{});
    EXPECT_FALSE(send.last_resort);
    r.now += 2s;
    const std::optional<Action> hedge = Hedge(r.state, r.At());
    ASSERT_TRUE(hedge);
    EXPECT_EQ(r.Name(*hedge), "b1");
    EXPECT_TRUE(hedge->last_resort);
    EXPECT_EQ(hedge->budget,
              std::chrono::ceil<std::chrono::milliseconds>(r.state.deadline - r.now));
    // Cut by the deadline's rest, it is not excluded: nothing else could serve.
    const TimePoint started = r.now;
    r.now += 1s;
    event::Attempted both{Retry(ErrorClass::kTimeout), started, r.now, true};
    both.hedge = event::Hedged{Retry(ErrorClass::kTimeout), true};
    r.Next(both);
    EXPECT_TRUE(r.state.targets[send.target].excluded);
    EXPECT_FALSE(r.state.targets[hedge->target].excluded);
}

TEST(HedgeTest, NoHedgeWithoutAnotherTargetOrAnAttemptLeftAfterBoth) {
    {
        ChainBuilder b;
        Request r(DefaultPolicy(), {b.Add("a", 1, 0)}, b);
        r.Next(event::Start{});
        EXPECT_FALSE(Hedge(r.state, r.At()));
    }
    {
        ChainBuilder b;
        EnginePolicy policy = DefaultPolicy();
        policy.max_attempts = 2;
        Request r(policy, {b.Add("a", 2, 0)}, b);
        r.Next(event::Start{});
        EXPECT_FALSE(Hedge(r.state, r.At()));
    }
    {
        ChainBuilder b;
        Request r(DefaultPolicy(), {b.Add("a", 2, 0)}, b);
        r.Next(event::Start{});
        r.now = r.state.deadline;
        EXPECT_FALSE(Hedge(r.state, r.At())) << "past the deadline";
    }
}

TEST(HedgeTest, WhenNeitherAnswersBothOutcomesCountAndTheWalkGoesOn) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 2, 0), b.Add("b", 1, 1)}, b);
    const Action send = r.Next(event::Start{});
    const std::optional<Action> hedge = Hedge(r.state, r.At());
    ASSERT_TRUE(hedge);
    ASSERT_EQ(r.Name(*hedge), "a2");
    const TimePoint started = r.now;
    r.now += 2s;
    event::Attempted both{{policy::Action::kFailOver, ErrorClass::kServerError}, started, r.now};
    both.hedge = event::Hedged{{policy::Action::kFailOver, ErrorClass::kServerError}, false};
    const Action next = r.Next(both);
    EXPECT_EQ(r.state.attempts, 2);
    EXPECT_TRUE(r.state.targets[send.target].excluded);
    EXPECT_TRUE(r.state.targets[hedge->target].excluded);
    ASSERT_EQ(next.kind, Kind::kSend);
    EXPECT_EQ(r.Name(next), "b1");
}

TEST(HedgeTest, AHedgeThatWasNotSentIsForgotten) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 2, 0)}, b);
    r.Next(event::Start{});
    ASSERT_TRUE(Hedge(r.state, r.At()));  // a2 found no headroom: no Hedged in the event
    const TimePoint started = r.now;
    r.now += 1s;
    const Action next = r.Next(event::Attempted{Retry(ErrorClass::kServerError), started, r.now});
    EXPECT_EQ(r.state.attempts, 1);
    ASSERT_EQ(next.kind, Kind::kSend);
    EXPECT_EQ(r.Name(next), "a2") << "a2 is still untried";
    EXPECT_FALSE(next.retry);
}

TEST(HedgeTest, TheDelayIsTheConfiguredOneOrTwiceTheMedianOnceTheHistorySaysIt) {
    AttemptShape whole;
    AttemptShape stream;
    stream.stream = true;
    config::HedgeConfig fixed;
    fixed.delay = 700ms;
    EXPECT_EQ(HedgeDelay(fixed, whole, {}), 700ms);
    const config::HedgeConfig automatic;
    EXPECT_FALSE(HedgeDelay(automatic, whole, {})) << "no history, no hedge";
    policy::LatencyQuantiles median;
    median.whole = 150ms;
    median.stream_first_byte = 100ms;
    median.first_token = 200ms;
    EXPECT_EQ(HedgeDelay(automatic, whole, median), 300ms);
    EXPECT_EQ(HedgeDelay(automatic, stream, median), 600ms);
    median.whole = 5ms;
    EXPECT_EQ(HedgeDelay(automatic, whole, median), 50ms) << "never under 50 ms";
}

TEST(HedgeTest, TheConfigSaysHedgePerModelGroup) {
    const auto load = [](std::string_view hedge) {
        const std::string yaml = std::string(R"(
models:
  - name: chat
    hedge: )") + std::string(hedge) +
                                 R"(
    deployments: [{name: a, provider: openai, model: m, api_base: "http://127.0.0.1:1/v1"}]
)";
        return config::LoadConfigText(yaml, "test.yaml",
                                      [](std::string_view) { return std::nullopt; });
    };
    const config::LoadResult automatic = load("{delay: auto, max_ratio: 0.2}");
    ASSERT_TRUE(automatic.problems.empty()) << automatic.problems.front().ToString();
    const std::optional<config::HedgeConfig>& hedge = automatic.config->models[0].hedge;
    ASSERT_TRUE(hedge);
    EXPECT_FALSE(hedge->delay);
    EXPECT_DOUBLE_EQ(hedge->max_ratio, 0.2);
    const config::LoadResult fixed = load("{delay: 400}");
    ASSERT_TRUE(fixed.problems.empty());
    EXPECT_EQ(fixed.config->models[0].hedge->delay, std::chrono::milliseconds(400));
    EXPECT_DOUBLE_EQ(fixed.config->models[0].hedge->max_ratio, 0.1);
    EXPECT_FALSE(load("{max_ratio: 1.5}").problems.empty());
    EXPECT_FALSE(load("{delay: soon}").problems.empty());
    EXPECT_FALSE(load("{after: 3}").problems.empty());
}

}  // namespace hedge_test
}  // namespace switchyard::engine
