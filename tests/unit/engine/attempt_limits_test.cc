#include "engine/attempt_limits.h"

#include <gtest/gtest.h>

namespace switchyard::engine {
namespace {

using namespace std::chrono;

AttemptShape Shape(bool stream, std::int64_t max_tokens = 0) {
    AttemptShape shape;
    shape.ceilings.first_byte = seconds(120);
    shape.ceilings.first_token = seconds(60);
    shape.ceilings.chunk = seconds(30);
    shape.ceilings.connect = seconds(5);
    shape.ceilings.adaptive_multiplier = 3;
    shape.ceilings.adaptive_floor = seconds(2);
    shape.stream = stream;
    shape.max_tokens = max_tokens;
    return shape;
}

policy::LatencyQuantiles WholeHistory(int p99_ms, double tokens) {
    policy::LatencyQuantiles q;
    q.whole = milliseconds(p99_ms);
    q.whole_tokens = tokens;
    return q;
}

TEST(AttemptLimitsTest, WithoutHistoryTheCeilingsHold) {
    const AttemptLimits limits = AdaptedLimits(Shape(true), {}, true);
    EXPECT_FALSE(limits.adapted);
    EXPECT_EQ(limits.first_byte, seconds(120));
    EXPECT_EQ(limits.first_token, seconds(60));
    EXPECT_EQ(limits.chunk, seconds(30));
    EXPECT_EQ(limits.first_content, seconds(180));
    EXPECT_FALSE(ExpectedFirstContent(Shape(true), {}));
}

TEST(AttemptLimitsTest, AWholeAnswerGetsThreeTimesItsPercentileNeverUnderTheFloor) {
    EXPECT_EQ(AdaptedLimits(Shape(false), WholeHistory(1500, 40), true).first_byte,
              milliseconds(4500));
    const AttemptLimits fast = AdaptedLimits(Shape(false), WholeHistory(150, 40), true);
    EXPECT_TRUE(fast.adapted);
    EXPECT_EQ(fast.first_byte, seconds(2));  // 450 ms is under the floor
    EXPECT_EQ(fast.first_content, seconds(2));
    EXPECT_EQ(ExpectedFirstContent(Shape(false), WholeHistory(150, 40)), seconds(2));
    // Never over the ceiling.
    EXPECT_EQ(AdaptedLimits(Shape(false), WholeHistory(100'000, 40), true).first_byte,
              seconds(120));
    // Not asked to adapt (a last resort), or adaptation off: the ceiling.
    EXPECT_EQ(AdaptedLimits(Shape(false), WholeHistory(150, 40), false).first_byte, seconds(120));
    AttemptShape off = Shape(false);
    off.ceilings.adaptive = false;
    EXPECT_EQ(AdaptedLimits(off, WholeHistory(150, 40), true).first_byte, seconds(120));
}

TEST(AttemptLimitsTest, ALongerAnswerThanTheHistorysIsGivenLonger) {
    // The history's answers are 40 tokens and take 1.5 s; this one may be 400.
    EXPECT_EQ(AdaptedLimits(Shape(false, 400), WholeHistory(1500, 40), true).first_byte,
              seconds(45));
    // A smaller cap than the usual answer changes nothing.
    EXPECT_EQ(AdaptedLimits(Shape(false, 10), WholeHistory(1500, 40), true).first_byte,
              milliseconds(4500));
}

TEST(AttemptLimitsTest, AStreamAdaptsItsHeadFirstTokenAndGapEachFromItsOwnHistory) {
    policy::LatencyQuantiles q;
    q.stream_first_byte = milliseconds(1000);
    q.first_token = milliseconds(3000);
    q.gap = milliseconds(200);
    const AttemptLimits limits = AdaptedLimits(Shape(true), q, true);
    EXPECT_EQ(limits.first_byte, seconds(3));
    EXPECT_EQ(limits.first_token, seconds(9));
    EXPECT_EQ(limits.chunk, seconds(2));
    EXPECT_EQ(limits.first_content, seconds(12));
    // A whole answer's history says nothing about a stream.
    EXPECT_FALSE(AdaptedLimits(Shape(true), WholeHistory(150, 40), true).adapted);
}

TEST(AttemptLimitsTest, TheBudgetBoundsTheWaitForContent) {
    const AttemptLimits ceilings = AdaptedLimits(Shape(false), {}, true);
    const AttemptLimits share = WithinBudget(ceilings, seconds(22), false);
    EXPECT_EQ(share.first_content, seconds(22));
    EXPECT_EQ(share.first_byte, seconds(22));
    EXPECT_EQ(share.connect, seconds(5));
    EXPECT_FALSE(share.deadline_bound);  // a share: a cut is the deployment's timeout
    const AttemptLimits last = WithinBudget(ceilings, seconds(3), true);
    EXPECT_EQ(last.first_byte, seconds(3));
    EXPECT_EQ(last.connect, seconds(3));
    EXPECT_TRUE(last.deadline_bound);  // the rest of the deadline: the request's cut
    // A budget over the limits changes nothing.
    const AttemptLimits roomy = WithinBudget(ceilings, seconds(500), true);
    EXPECT_EQ(roomy.first_byte, seconds(120));
    EXPECT_FALSE(roomy.deadline_bound);
}

}  // namespace
}  // namespace switchyard::engine
