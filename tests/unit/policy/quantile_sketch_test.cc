#include "policy/quantile_sketch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace switchyard::policy {
namespace {

// The exact value at quantile q of sorted `values`: the one of rank ceil(q * n).
double Exact(std::vector<double> values, double q) {
    std::sort(values.begin(), values.end());
    const auto rank = static_cast<std::size_t>(std::max(1.0, std::ceil(q * values.size())));
    return values[rank - 1];
}

TEST(QuantileSketchTest, EmptyAnswersZero) {
    const QuantileSketch sketch;
    EXPECT_EQ(sketch.Count(), 0u);
    EXPECT_EQ(sketch.Quantile(0.99), 0);
}

TEST(QuantileSketchTest, EveryQuantileOfALongTailIsWithinTheRelativeError) {
    std::mt19937_64 rng(7);
    std::lognormal_distribution<double> latency(std::log(800.0), 1.0);  // ms, a long right tail
    QuantileSketch sketch;
    std::vector<double> values;
    for (int i = 0; i < 20'000; ++i) {
        const double v = latency(rng) + 1;
        values.push_back(v);
        sketch.Add(v);
    }
    for (const double q : {0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0}) {
        const double exact = Exact(values, q);
        EXPECT_NEAR(sketch.Quantile(q), exact, exact * QuantileSketch::kRelativeError) << "q=" << q;
    }
}

TEST(QuantileSketchTest, MergingEqualsAddingEverythingToOne) {
    QuantileSketch a, b, both;
    for (int i = 1; i <= 500; ++i) {
        a.Add(i);
        both.Add(i);
    }
    for (int i = 0; i < 100; ++i) {
        b.Add(10'000 + i);
        both.Add(10'000 + i);
    }
    for (const double q : {0.5, 0.8, 0.9, 0.99}) {
        EXPECT_EQ(QuantileSketch::Quantile(a, b, q), both.Quantile(q)) << q;
    }
    a.Merge(b);
    EXPECT_EQ(a.Count(), 600u);
    EXPECT_EQ(a.Quantile(0.99), both.Quantile(0.99));
    EXPECT_NEAR(a.Quantile(0.99), 10'093, 10'093 * QuantileSketch::kRelativeError);
}

TEST(QuantileSketchTest, ValuesOutsideTheRangeAreClamped) {
    QuantileSketch sketch;
    sketch.Add(0);
    sketch.Add(-5);
    sketch.Add(1e12);
    EXPECT_NEAR(sketch.Quantile(0), 1, 0.0201);
    EXPECT_NEAR(sketch.Quantile(1), QuantileSketch::kMax, QuantileSketch::kMax * 0.02);
    sketch.Clear();
    EXPECT_EQ(sketch.Count(), 0u);
    EXPECT_EQ(sketch.Quantile(0.5), 0);
}

}  // namespace
}  // namespace switchyard::policy
