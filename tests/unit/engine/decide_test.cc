#include "engine/decide.h"

#include <gtest/gtest.h>

#include "engine_test_support.h"

namespace switchyard::engine {
namespace decide_test {

using namespace std::chrono_literals;
using testing::ChainBuilder;
using testing::DefaultPolicy;
using testing::kT0;
using testing::Retry;
using Kind = Action::Kind;
using Block = TargetHealth::Block;
using policy::ErrorClass;

// One request driven by hand: a fixed clock that moves only when a test says so, and health the
// test sets per deployment.
struct Request {
    // `builder` owns the chain's deployments (read after every argument was built).
    Request(EnginePolicy policy, const std::vector<Stage>& chain, const ChainBuilder& builder,
            std::chrono::milliseconds deadline = 45s)
        : state(policy, chain, kT0 + deadline), health(builder.DeploymentCount()) {}

    Action Next(Event event) {
        World world{health, client_budget, now, uniform};
        return Decide(state, std::move(event), world);
    }
    // Reports an attempt of `took` that ended with `outcome`, and returns the next action.
    Action Attempt(policy::Outcome outcome, std::chrono::milliseconds took = 10ms) {
        const TimePoint started = now;
        now += took;
        return Next(event::Attempted{outcome, started, now});
    }
    Action Wait(const Action& wait) {
        now += wait.wait;
        return Next(event::Waited{});
    }
    const config::Deployment& Of(const Action& a) const {
        return *state.targets[a.target].deployment;
    }

    AttemptState state;
    std::vector<TargetHealth> health;
    bool client_budget = true;
    TimePoint now = kT0;
    double uniform = 0.5;
};

TEST(DecideTest, ASuccessfulFirstAttemptIsDone) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 1, 0)}, b);
    const Action send = r.Next(event::Start{});
    ASSERT_EQ(send.kind, Kind::kSend);
    EXPECT_EQ(r.Of(send).name, "a1");
    EXPECT_FALSE(send.retry);
    EXPECT_EQ(r.Attempt({}).kind, Kind::kDone);
}

// The scenario of a 529 storm on the only deployment of `a`, with `b` healthy behind it: the
// first request of the outage must reach `b` within max_attempts.
TEST(DecideTest, ARetryNeverSpendsTheAttemptAHealthyFallbackNeeds) {
    for (const int max_attempts : {2, 3, 4}) {
        ChainBuilder b;
        EnginePolicy policy = DefaultPolicy();
        policy.max_attempts = max_attempts;
        Request r(policy, {b.Add("a", 1, 0), b.Add("b", 1, 1)}, b);
        Action action = r.Next(event::Start{});
        std::vector<std::string> sent;
        while (action.kind == Kind::kSend || action.kind == Kind::kWait) {
            if (action.kind == Kind::kWait) {
                action = r.Wait(action);
                continue;
            }
            sent.push_back(r.Of(action).name);
            if (r.Of(action).name == "b1") break;
            action = r.Attempt(Retry(ErrorClass::kOverloaded));
        }
        ASSERT_FALSE(sent.empty());
        EXPECT_EQ(sent.back(), "b1") << "max_attempts " << max_attempts;
        EXPECT_EQ(static_cast<int>(sent.size()), max_attempts)
            << "the retries of a used what b did not need";
    }
}

TEST(DecideTest, AnotherDeploymentOfTheGroupIsTriedAtOnceBeforeAnyWait) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 2, 0)}, b);
    ASSERT_EQ(r.Of(r.Next(event::Start{})).name, "a1");
    const Action next = r.Attempt(Retry(ErrorClass::kServerError));
    ASSERT_EQ(next.kind, Kind::kSend);
    EXPECT_EQ(r.Of(next).name, "a2");
    EXPECT_FALSE(next.retry);
}

TEST(DecideTest, ASameTargetRetryWaitsAFullJitterBackoff) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 1, 0)}, b);
    r.Next(event::Start{});
    r.uniform = 0.5;
    const Action wait = r.Attempt(Retry(ErrorClass::kServerError));
    ASSERT_EQ(wait.kind, Kind::kWait);
    EXPECT_EQ(wait.wait_for, Action::WaitFor::kBackoff);
    EXPECT_EQ(wait.wait, 250ms) << "uniform(0, base 500 ms) at 0.5";
    const Action retry = r.Wait(wait);
    ASSERT_EQ(retry.kind, Kind::kSend);
    EXPECT_TRUE(retry.retry);
    // The second retry's ceiling doubles.
    const Action second = r.Attempt(Retry(ErrorClass::kServerError));
    ASSERT_EQ(second.kind, Kind::kWait);
    EXPECT_EQ(second.wait, 500ms);
}

TEST(DecideTest, RetryAfterIsAMinimum) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 1, 0)}, b);
    r.Next(event::Start{});
    const Action wait = r.Attempt(Retry(ErrorClass::kOverloaded, 3s));
    ASSERT_EQ(wait.kind, Kind::kWait);
    EXPECT_EQ(wait.wait, 3s);
    EXPECT_EQ(wait.wait_for, Action::WaitFor::kRateLimit);
}

TEST(DecideTest, ClassCapEndsTheStage) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 1, 0)}, b);
    r.Next(event::Start{});
    // timeout: one retry.
    Action a = r.Attempt(Retry(ErrorClass::kTimeout));
    ASSERT_EQ(a.kind, Kind::kWait);
    ASSERT_EQ(r.Wait(a).kind, Kind::kSend);
    a = r.Attempt(Retry(ErrorClass::kTimeout));
    ASSERT_EQ(a.kind, Kind::kGiveUp);
    EXPECT_EQ(a.reason, GiveUpReason::kExhausted);
    EXPECT_FALSE(a.retry_after) << "nothing known will change";
    EXPECT_EQ(r.state.attempts, 2);
}

TEST(DecideTest, NumRetriesRetriesTheGroupFirstAndMayLeaveNoAttemptForTheFallback) {
    ChainBuilder b;
    EnginePolicy policy = DefaultPolicy();
    policy.max_attempts = 3;
    policy.stage_retries = 2;
    Request r(policy, {b.Add("a", 1, 0), b.Add("b", 1, 1)}, b);
    Action a = r.Next(event::Start{});
    for (int i = 0; i < 3; ++i) {
        if (a.kind == Kind::kWait) a = r.Wait(a);
        ASSERT_EQ(a.kind, Kind::kSend);
        EXPECT_EQ(r.Of(a).name, "a1");
        a = r.Attempt(Retry(ErrorClass::kOverloaded));
    }
    ASSERT_EQ(a.kind, Kind::kGiveUp);
    EXPECT_EQ(a.reason, GiveUpReason::kAttempts);
}

TEST(DecideTest, NumRetriesCapsRetriesOfAllClassesTogether) {
    ChainBuilder b;
    EnginePolicy policy = DefaultPolicy();
    policy.stage_retries = 1;
    Request r(policy, {b.Add("a", 1, 0), b.Add("b", 1, 1)}, b);
    r.Next(event::Start{});
    Action a = r.Attempt(Retry(ErrorClass::kOverloaded));
    ASSERT_EQ(a.kind, Kind::kWait);
    a = r.Wait(a);
    ASSERT_EQ(r.Of(a).name, "a1");
    a = r.Attempt(Retry(ErrorClass::kServerError));
    ASSERT_EQ(a.kind, Kind::kSend);
    EXPECT_EQ(r.Of(a).name, "b1");
}

TEST(DecideTest, ACooldownIsNeverWaitedFor) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 1, 0)}, b);
    r.Next(event::Start{});
    // The failure benched the deployment for 30 s.
    r.health[0] = {Block::kSick, r.now + 10ms + 30s};
    const Action a = r.Attempt(Retry(ErrorClass::kOverloaded));
    ASSERT_EQ(a.kind, Kind::kGiveUp);
    ASSERT_TRUE(a.retry_after);
    EXPECT_EQ(*a.retry_after, 30s) << "the true time until the bench ends";
    EXPECT_FALSE(a.rate_limited);
}

TEST(DecideTest, ASickDeploymentIsSkippedForTheFallback) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 1, 0), b.Add("b", 1, 1)}, b);
    r.health[0] = {Block::kSick, kT0 + 20s};
    const Action a = r.Next(event::Start{});
    ASSERT_EQ(a.kind, Kind::kSend);
    EXPECT_EQ(r.Of(a).name, "b1");
}

TEST(DecideTest, AnAttemptLeavesAnUnknownFallbackAnEqualShareOfTheDeadline) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 1, 0), b.Add("b", 1, 1)}, b);
    const Action first = r.Next(event::Start{});
    ASSERT_EQ(first.kind, Kind::kSend);
    EXPECT_FALSE(first.last_resort);
    EXPECT_EQ(first.budget, 22500ms);  // a hang on a1 still leaves b1 half of the 45 s
    // a1 timed out at its share: b1, the last that could serve, gets the rest.
    const Action second = r.Attempt(Retry(ErrorClass::kTimeout), 22500ms);
    ASSERT_EQ(second.kind, Kind::kSend);
    EXPECT_EQ(r.Of(second).name, "b1");
    EXPECT_TRUE(second.last_resort);
    EXPECT_EQ(second.budget, 22500ms);
}

TEST(DecideTest, AnAttemptCutByItsLimitsIsNotRetriedWhileTheChainCanServe) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 1, 0), b.Add("b", 1, 1)}, b);
    ASSERT_EQ(r.Next(event::Start{}).kind, Kind::kSend);
    // a1 cut at 2 s of a 45 s deadline: a retry would fit, but b1 goes next and a1 is done.
    r.now += 2s;
    const Action next =
        r.Next(event::Attempted{Retry(ErrorClass::kTimeout), r.now - 2s, r.now, /*cut=*/true});
    ASSERT_EQ(next.kind, Kind::kSend);
    EXPECT_EQ(r.Of(next).name, "b1");
    EXPECT_TRUE(r.state.targets[0].excluded);
    // The last resort cut by its limits may be retried: nothing else could serve.
    ChainBuilder lone;
    Request alone(DefaultPolicy(), {lone.Add("c", 1, 0)}, lone);
    ASSERT_TRUE(alone.Next(event::Start{}).last_resort);
    alone.now += 2s;
    const Action again = alone.Next(
        event::Attempted{Retry(ErrorClass::kTimeout), alone.now - 2s, alone.now, /*cut=*/true});
    EXPECT_EQ(again.kind, Kind::kWait);
    EXPECT_FALSE(alone.state.targets[0].excluded);
}

TEST(DecideTest, AnAttemptLeavesAKnownFallbackWhatItsHistoryNeeds) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 2, 0), b.Add("b", 1, 1)}, b);
    r.health[2].expected = 2s;  // b1 answers well within 2 s
    // Deployments a1, a2 and b1: a1 leaves b1 its 2 s; a2 (unknown) a third of the 45 s.
    const Action first = r.Next(event::Start{});
    ASSERT_EQ(first.kind, Kind::kSend);
    EXPECT_EQ(first.budget, 45s - 2s - 15s);
    // The only target of a chain is its last resort.
    ChainBuilder lone;
    Request alone(DefaultPolicy(), {lone.Add("a", 1, 0)}, lone);
    const Action only = alone.Next(event::Start{});
    EXPECT_TRUE(only.last_resort);
    EXPECT_EQ(only.budget, 45s);
}

TEST(DecideTest, ALoneBenchedDeploymentThatAnswersSomeCallsIsTriedInAPanic) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 1, 0)}, b);
    r.health[0] = {Block::kSick, kT0 + 30s};
    r.health[0].panic = 0.5;
    const Action a = r.Next(event::Start{});
    ASSERT_EQ(a.kind, Kind::kSend);
    EXPECT_TRUE(a.panic);
    // It failed again: retried after a backoff, in the panic still.
    const Action wait = r.Attempt(Retry(ErrorClass::kOverloaded));
    ASSERT_EQ(wait.kind, Kind::kWait);
    const Action retry = r.Wait(wait);
    ASSERT_EQ(retry.kind, Kind::kSend);
    EXPECT_TRUE(retry.retry);
    EXPECT_TRUE(retry.panic);
    // Without retry budget the panic makes one attempt, as a client alone would, and no retry.
    Request broke(DefaultPolicy(), {b.Add("c", 1, 0)}, b);
    broke.health[1] = {Block::kSick, kT0 + 30s, false, 0.5};
    const Action once = broke.Next(event::Start{});
    ASSERT_EQ(once.kind, Kind::kSend);
    EXPECT_TRUE(once.panic);
    EXPECT_EQ(broke.Attempt(Retry(ErrorClass::kOverloaded)).kind, Kind::kGiveUp);
}

TEST(DecideTest, APanicPicksTheLeastBadAndNeverOneThatIsDown) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 2, 0), b.Add("b", 1, 1)}, b);
    r.health[0] = {Block::kSick, kT0 + 30s, true, 0};  // down: every call failed
    r.health[1] = {Block::kSick, kT0 + 30s, true, 0.2};
    r.health[2] = {Block::kSick, kT0 + 30s, true, 0.6};
    const Action a = r.Next(event::Start{});
    ASSERT_EQ(a.kind, Kind::kSend);
    EXPECT_EQ(r.Of(a).name, "b1");
    EXPECT_TRUE(a.panic);
    // Something that can serve means no panic: the healthy fallback is tried.
    Request calm(DefaultPolicy(), {b.Add("c", 1, 0), b.Add("d", 1, 1)}, b);
    calm.health[3] = {Block::kSick, kT0 + 30s, true, 0.6};
    const Action c = calm.Next(event::Start{});
    ASSERT_EQ(c.kind, Kind::kSend);
    EXPECT_EQ(calm.Of(c).name, "d1");
    EXPECT_FALSE(c.panic);
    // Every target down: no panic, the honest 503.
    Request down(DefaultPolicy(), {b.Add("e", 1, 0)}, b);
    down.health[5] = {Block::kSick, kT0 + 30s, true, 0};
    EXPECT_EQ(down.Next(event::Start{}).kind, Kind::kGiveUp);
}

TEST(DecideTest, ARateLimitIsWaitedForWithinTheDeadline) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 1, 0)}, b, 10s);
    r.health[0] = {Block::kRateLimited, kT0 + 2s};
    Action a = r.Next(event::Start{});
    ASSERT_EQ(a.kind, Kind::kWait);
    EXPECT_EQ(a.wait, 2s);
    EXPECT_EQ(a.wait_for, Action::WaitFor::kRateLimit);
    r.health[0] = {};
    a = r.Wait(a);
    ASSERT_EQ(a.kind, Kind::kSend);
    EXPECT_FALSE(a.retry);
}

TEST(DecideTest, ARateLimitPastTheDeadlineGivesUpAtOnceWithTheTrueRetryAfter) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 2, 0)}, b, 10s);
    r.health[0] = {Block::kRateLimited, kT0 + 40s};
    r.health[1] = {Block::kRateLimited, kT0 + 25s};
    const Action a = r.Next(event::Start{});
    ASSERT_EQ(a.kind, Kind::kGiveUp);
    EXPECT_EQ(a.reason, GiveUpReason::kDeadline);
    EXPECT_EQ(a.retry_after, 25s);
    EXPECT_TRUE(a.rate_limited);
}

TEST(DecideTest, TheRetryAfterOfAMixedChainIsTheEarliestUnblocking) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 1, 0), b.Add("b", 1, 1)}, b, 5s);
    r.health[0] = {Block::kSick, kT0 + 30s};
    r.health[1] = {Block::kRateLimited, kT0 + 12s};
    const Action a = r.Next(event::Start{});
    ASSERT_EQ(a.kind, Kind::kGiveUp);
    EXPECT_EQ(a.retry_after, 12s);
    EXPECT_FALSE(a.rate_limited) << "one of them is sick: 503, not 429";
}

TEST(DecideTest, AClientRetryMakesOneAttemptPerTargetAndNeverWaitsForARateLimit) {
    ChainBuilder b;
    EnginePolicy policy = DefaultPolicy();
    policy.retries = false;
    Request r(policy, {b.Add("a", 1, 0), b.Add("b", 1, 1)}, b);
    r.health[1] = {Block::kRateLimited, kT0 + 1s};
    Action a = r.Next(event::Start{});
    ASSERT_EQ(r.Of(a).name, "a1");
    r.health[0] = {Block::kRateLimited, r.now + 10ms + 1s};
    a = r.Attempt(Retry(ErrorClass::kRateLimited, 1s));
    ASSERT_EQ(a.kind, Kind::kGiveUp);
    EXPECT_EQ(r.state.attempts, 1);
    ASSERT_TRUE(a.retry_after);
    EXPECT_LE(*a.retry_after, 1s);
}

TEST(DecideTest, FailOverExcludesTheTargetForTheRequest) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 1, 0)}, b);
    r.Next(event::Start{});
    const Action a = r.Attempt({policy::Action::kFailOver, ErrorClass::kConnection});
    ASSERT_EQ(a.kind, Kind::kGiveUp);
    EXPECT_TRUE(r.state.targets[0].excluded);
}

TEST(DecideTest, AClientErrorIsPassedThrough) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 2, 0), b.Add("b", 1, 1)}, b);
    r.Next(event::Start{});
    EXPECT_EQ(r.Attempt({policy::Action::kGiveUp, ErrorClass::kBadRequest}).kind,
              Kind::kPassThrough);
}

TEST(DecideTest, ASemanticOutcomeContinuesOnlyOnTheSemanticChain) {
    ChainBuilder b;
    const std::vector<Stage> chain = {b.Add("small", 2, 0), b.Add("backup", 1, 1)};
    const Stage long_context = b.Add("long", 1, 1);
    Request r(DefaultPolicy(), chain, b);
    r.Next(event::Start{});
    const Action replace =
        r.Attempt({policy::Action::kContextFallback, ErrorClass::kContextWindow});
    ASSERT_EQ(replace.kind, Kind::kReplaceChain);
    EXPECT_EQ(replace.semantic, policy::Action::kContextFallback);
    const Action send = r.Next(event::ChainReplaced{{long_context}});
    ASSERT_EQ(send.kind, Kind::kSend);
    EXPECT_EQ(r.Of(send).name, "long1") << "not small2, not backup1";
    const Action after = r.Attempt(Retry(ErrorClass::kServerError));
    ASSERT_NE(after.kind, Kind::kSend);
    if (after.kind == Kind::kWait) {
        EXPECT_EQ(r.Of(after).name, "long1");
    }
}

TEST(DecideTest, ASemanticOutcomeWithoutSemanticFallbacksIsPassedThrough) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 1, 0), b.Add("b", 1, 1)}, b);
    r.Next(event::Start{});
    ASSERT_EQ(r.Attempt({policy::Action::kContentFallback, ErrorClass::kContentPolicy}).kind,
              Kind::kReplaceChain);
    EXPECT_EQ(r.Next(event::ChainReplaced{}).kind, Kind::kPassThrough);
}

TEST(DecideTest, NoHeadroomMovesOnThenWaitsForTheSoonest) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 2, 0)}, b);
    Action a = r.Next(event::Start{});
    ASSERT_EQ(r.Of(a).name, "a1");
    a = r.Next(event::NoHeadroom{500ms});
    ASSERT_EQ(a.kind, Kind::kSend);
    ASSERT_EQ(r.Of(a).name, "a2");
    a = r.Next(event::NoHeadroom{300ms});
    ASSERT_EQ(a.kind, Kind::kWait);
    EXPECT_EQ(a.wait_for, Action::WaitFor::kHeadroom);
    EXPECT_EQ(a.wait, 300ms);
    EXPECT_EQ(r.Of(a).name, "a2");
    EXPECT_EQ(r.state.attempts, 0) << "no headroom costs no attempt";
    const Action after = r.Wait(a);
    ASSERT_EQ(after.kind, Kind::kSend);
    EXPECT_EQ(r.Of(after).name, "a2");
}

TEST(DecideTest, AFullQueueShedsWithTheHeadroomWait) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 1, 0)}, b);
    r.Next(event::Start{});
    ASSERT_EQ(r.Next(event::NoHeadroom{700ms}).kind, Kind::kWait);
    const Action a = r.Next(event::QueueFull{});
    ASSERT_EQ(a.kind, Kind::kGiveUp);
    EXPECT_EQ(a.headroom_short_for, 700ms);
    EXPECT_EQ(a.retry_after, 700ms);
    EXPECT_TRUE(a.rate_limited);
}

TEST(DecideTest, HeadroomThatNeverComesReadsAsADay) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 1, 0)}, b);
    r.Next(event::Start{});
    const Action a = r.Next(event::NoHeadroom{std::chrono::milliseconds::max()});
    ASSERT_EQ(a.kind, Kind::kGiveUp);
    EXPECT_EQ(a.reason, GiveUpReason::kDeadline);
    EXPECT_EQ(a.headroom_short_for, std::chrono::hours(24));
}

// A retry is spent when it goes upstream, not when it is chosen: one that first has to wait for
// headroom is still within a cap of one.
TEST(DecideTest, ARetryThatWaitsForHeadroomIsCountedOnce) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 1, 0)}, b);
    r.Next(event::Start{});
    Action a = r.Attempt(Retry(ErrorClass::kTimeout));  // timeout: one retry
    ASSERT_EQ(a.kind, Kind::kWait);
    a = r.Wait(a);
    ASSERT_EQ(a.kind, Kind::kSend);
    ASSERT_TRUE(a.retry);
    a = r.Next(event::NoHeadroom{200ms});
    ASSERT_EQ(a.kind, Kind::kWait);
    EXPECT_EQ(a.wait_for, Action::WaitFor::kHeadroom);
    a = r.Wait(a);
    ASSERT_EQ(a.kind, Kind::kSend) << "the retry was not spent by the send that found no headroom";
    EXPECT_TRUE(a.retry);
    EXPECT_EQ(r.Attempt(Retry(ErrorClass::kTimeout)).kind, Kind::kGiveUp) << "and now it is";
}

TEST(DecideTest, ALostProbeSlotExcludesTheTarget) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 2, 0)}, b);
    r.Next(event::Start{});
    const Action a = r.Next(event::NotAdmitted{});
    ASSERT_EQ(a.kind, Kind::kSend);
    EXPECT_EQ(r.Of(a).name, "a2");
}

TEST(DecideTest, ALongFailedAttemptLeavesTimeForTheFallback) {
    // A first-token stall of 4 s with a 10 s deadline: another 4 s on `a` would leave the
    // fallback 2 s, less than an attempt as long as the last; go to `b` now.
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 1, 0), b.Add("b", 1, 1)}, b, 10s);
    r.Next(event::Start{});
    const Action a = r.Attempt(Retry(ErrorClass::kTimeout), 4s);
    ASSERT_EQ(a.kind, Kind::kSend);
    EXPECT_EQ(r.Of(a).name, "b1");
}

TEST(DecideTest, AShortFailedAttemptIsRetriedFirstWhenTimeAllows) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 1, 0), b.Add("b", 1, 1)}, b, 10s);
    r.Next(event::Start{});
    const Action a = r.Attempt(Retry(ErrorClass::kTimeout), 1s);
    ASSERT_EQ(a.kind, Kind::kWait);
    EXPECT_EQ(r.Of(a).name, "a1");
}

TEST(DecideTest, AnExhaustedRetryBudgetMovesOn) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 1, 0), b.Add("b", 1, 1)}, b);
    r.Next(event::Start{});
    r.health[0].retry_budget = false;
    Action a = r.Attempt(Retry(ErrorClass::kServerError));
    ASSERT_EQ(a.kind, Kind::kSend);
    EXPECT_EQ(r.Of(a).name, "b1");
    r.client_budget = false;
    a = r.Attempt(Retry(ErrorClass::kServerError));
    EXPECT_EQ(a.kind, Kind::kGiveUp) << "the client's budget is spent too";
}

TEST(DecideTest, NoWaitEndsAtOrPastTheDeadline) {
    ChainBuilder b;
    Request r(DefaultPolicy(), {b.Add("a", 1, 0)}, b, 1s);
    r.Next(event::Start{});
    const Action a = r.Attempt(Retry(ErrorClass::kOverloaded, 2s));
    ASSERT_EQ(a.kind, Kind::kGiveUp);
    EXPECT_EQ(a.reason, GiveUpReason::kDeadline);
    EXPECT_EQ(a.retry_after, 2s) << "the provider's own retry-after is a known instant too";
}

}  // namespace decide_test
}  // namespace switchyard::engine
