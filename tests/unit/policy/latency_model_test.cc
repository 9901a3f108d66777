#include "policy/latency_model.h"

#include <gtest/gtest.h>

namespace switchyard::policy {
namespace {

using namespace std::chrono;
using TimePoint = LatencyModel::TimePoint;
const TimePoint kT0 = TimePoint(hours(1'000));

LatencySample Whole(int ms, std::int64_t tokens = 20) {
    return {false, milliseconds(ms), std::nullopt, std::nullopt, tokens};
}
LatencySample Stream(int head, int first_token, int gap) {
    return {true, milliseconds(head), milliseconds(first_token), milliseconds(gap), -1};
}

TEST(LatencyModelTest, NoPercentileBeforeTheMinimumHistory) {
    LatencyModel model({seconds(300), 5, 0.99});
    for (int i = 0; i < 4; ++i) model.Record(kT0, Whole(150));
    EXPECT_FALSE(model.Quantiles(kT0).whole);
    model.Record(kT0, Whole(150));
    const LatencyQuantiles q = model.Quantiles(kT0);
    ASSERT_TRUE(q.whole);
    EXPECT_NEAR(static_cast<double>(q.whole->count()), 150, 150 * 0.02 + 1);
    EXPECT_EQ(q.whole_samples, 5u);
    EXPECT_NEAR(*q.whole_tokens, 20, 20 * 0.02);
}

TEST(LatencyModelTest, StreamsAndWholeAnswersAreKeptApart) {
    LatencyModel model({seconds(300), 3, 0.99});
    for (int i = 0; i < 3; ++i) model.Record(kT0, Stream(80, 400, 50));
    const LatencyQuantiles q = model.Quantiles(kT0);
    EXPECT_FALSE(q.whole);
    ASSERT_TRUE(q.stream_first_byte && q.first_token && q.gap);
    EXPECT_NEAR(static_cast<double>(q.stream_first_byte->count()), 80, 3);
    EXPECT_NEAR(static_cast<double>(q.first_token->count()), 400, 9);
    EXPECT_NEAR(static_cast<double>(q.gap->count()), 50, 2);
}

TEST(LatencyModelTest, OldHistoryAgesOutWithinTwoWindows) {
    LatencyModel model({seconds(60), 3, 0.99});
    for (int i = 0; i < 3; ++i) model.Record(kT0, Whole(150));
    // The next window still sees the last one's history ...
    EXPECT_TRUE(model.Quantiles(kT0 + seconds(90)).whole);
    for (int i = 0; i < 3; ++i) model.Record(kT0 + seconds(90), Whole(2500));
    EXPECT_NEAR(static_cast<double>(model.Quantiles(kT0 + seconds(90)).whole->count()), 2500, 51);
    // ... and two windows on, only the new normal is left.
    const LatencyQuantiles later = model.Quantiles(kT0 + seconds(170));
    ASSERT_TRUE(later.whole);
    EXPECT_EQ(later.whole_samples, 3u);
    EXPECT_FALSE(model.Quantiles(kT0 + seconds(400)).whole);
}

}  // namespace
}  // namespace switchyard::policy
