#include "routing/weighted_pick.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace switchyard::routing {
namespace weighted_pick_test {

// The deployment WeightedOrder puts first for a first draw of `u`.
const config::Deployment& First(const config::ModelGroup& group, double u) {
    return *WeightedOrder(group, [u] { return u; }).front();
}

TEST(WeightedPickTest, SplitsTheUnitIntervalByWeight) {
    config::ModelGroup group;
    group.deployments.resize(3);
    group.deployments[0].name = "a";
    group.deployments[0].weight = 1;
    group.deployments[1].name = "b";
    group.deployments[1].weight = 3;
    group.deployments[2].name = "c";
    group.deployments[2].weight = 4;
    // Cumulative shares: a [0, 1/8), b [1/8, 4/8), c [4/8, 1).
    EXPECT_EQ(First(group, 0.0).name, "a");
    EXPECT_EQ(First(group, 0.124).name, "a");
    EXPECT_EQ(First(group, 0.126).name, "b");
    EXPECT_EQ(First(group, 0.49).name, "b");
    EXPECT_EQ(First(group, 0.51).name, "c");
    EXPECT_EQ(First(group, 0.999999).name, "c");

    int counts[3] = {0, 0, 0};
    for (int i = 0; i < 8000; ++i) {
        const auto& d = First(group, (i + 0.5) / 8000.0);
        counts[d.name[0] - 'a']++;
    }
    EXPECT_EQ(counts[0], 1000);
    EXPECT_EQ(counts[1], 3000);
    EXPECT_EQ(counts[2], 4000);
}

config::ModelGroup ThreeDeployments() {
    config::ModelGroup group;
    group.deployments.resize(3);
    const char* names[] = {"a", "b", "c"};
    const double weights[] = {1, 3, 4};
    for (std::size_t i = 0; i < 3; ++i) {
        group.deployments[i].name = names[i];
        group.deployments[i].index = i;
        group.deployments[i].weight = weights[i];
    }
    return group;
}

// Returns the scripted draws in order; fails the test if asked for more.
struct Script {
    std::vector<double> draws;
    std::size_t next = 0;
    double operator()() {
        EXPECT_LT(next, draws.size()) << "more draws than scripted";
        return next < draws.size() ? draws[next++] : 0.0;
    }
};

std::string Names(const std::vector<const config::Deployment*>& order) {
    std::string out;
    for (const auto* d : order) out += d->name;
    return out;
}

std::string Order(const config::ModelGroup& group, std::vector<double> draws) {
    Script script{std::move(draws)};
    return Names(WeightedOrder(group, script));
}

TEST(WeightedOrderTest, ScriptedDrawsGiveAnExactOrder) {
    const config::ModelGroup group = ThreeDeployments();
    // Weights 1, 3, 4 (total 8). 0.6 -> 4.8 -> c; then a, b (total 4): 0.5 -> 2 -> b; then a.
    EXPECT_EQ(Order(group, {0.6, 0.5, 0.0}), "cba");
    // 0.0 -> a; then b, c (total 7): 3/7 is the boundary, just below -> b, at or above -> c.
    EXPECT_EQ(Order(group, {0.0, 0.42, 0.9}), "abc");
    EXPECT_EQ(Order(group, {0.0, 0.43, 0.9}), "acb");
    // 0.2 -> 1.6 -> b; then a, c (total 5): 0.19 -> 0.95 -> a; 0.21 -> 1.05 -> c.
    EXPECT_EQ(Order(group, {0.2, 0.19, 0.5}), "bac");
    EXPECT_EQ(Order(group, {0.2, 0.21, 0.5}), "bca");
    // The top end of [0, 1) never runs past the last deployment.
    const double top = std::nextafter(1.0, 0.0);
    EXPECT_EQ(Order(group, {top, top, top}), "cba");
}

TEST(WeightedOrderTest, ContainsEachDeploymentExactlyOnce) {
    const config::ModelGroup group = ThreeDeployments();
    std::mt19937_64 rng(12345);
    auto uniform = [&rng] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
    for (int i = 0; i < 1'000; ++i) {
        const auto order = WeightedOrder(group, uniform);
        ASSERT_EQ(order.size(), 3u);
        std::set<const config::Deployment*> distinct(order.begin(), order.end());
        EXPECT_EQ(distinct.size(), 3u);
        for (const auto* d : order) {
            EXPECT_GE(d, &group.deployments.front());
            EXPECT_LE(d, &group.deployments.back());
        }
    }
}

TEST(WeightedOrderTest, SingleDeployment) {
    config::ModelGroup group;
    group.deployments.resize(1);
    group.deployments[0].name = "only";
    Script script{{0.99}};
    const auto order = WeightedOrder(group, script);
    ASSERT_EQ(order.size(), 1u);
    EXPECT_EQ(order[0], &group.deployments[0]);
}

TEST(WeightedOrderTest, FirstPositionFollowsTheWeights) {
    const config::ModelGroup group = ThreeDeployments();
    // An even sweep of first draws: exactly the weight shares, as a single weighted pick.
    std::map<std::string, int> first;
    for (int i = 0; i < 8'000; ++i) {
        Script script{{(i + 0.5) / 8'000.0, 0.5, 0.5}};
        first[Names(WeightedOrder(group, script)).substr(0, 1)]++;
    }
    EXPECT_EQ(first["a"], 1'000);
    EXPECT_EQ(first["b"], 3'000);
    EXPECT_EQ(first["c"], 4'000);
}

TEST(WeightedOrderTest, PositionsFollowTheWeightsOverManyRandomDraws) {
    const config::ModelGroup group = ThreeDeployments();
    std::mt19937_64 rng(2024);  // fixed seed: the same draws on every run
    auto uniform = [&rng] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
    constexpr int kRuns = 80'000;
    std::map<std::string, int> first;
    std::map<std::string, int> second;
    for (int i = 0; i < kRuns; ++i) {
        const std::string order = Names(WeightedOrder(group, uniform));
        first[order.substr(0, 1)]++;
        second[order.substr(1, 1)]++;
    }
    EXPECT_NEAR(first["a"] / double(kRuns), 1.0 / 8, 0.01);
    EXPECT_NEAR(first["b"] / double(kRuns), 3.0 / 8, 0.01);
    EXPECT_NEAR(first["c"] / double(kRuns), 4.0 / 8, 0.01);
    // Second place b: a first then b (1/8 * 3/7) or c first then b (4/8 * 3/4) = 24/56.
    EXPECT_NEAR(second["b"] / double(kRuns), 24.0 / 56, 0.01);
    // Second place a: b first then a (3/8 * 1/5) or c first then a (4/8 * 1/4) = 0.2.
    EXPECT_NEAR(second["a"] / double(kRuns), 0.2, 0.01);
}

}  // namespace weighted_pick_test
}  // namespace switchyard::routing
