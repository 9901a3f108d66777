#include "routing/strategy.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace switchyard::routing {
namespace strategy_test {

using std::chrono::milliseconds;
using TimePoint = DeploymentHealth::TimePoint;
using config::Strategy;

const TimePoint kT0 = TimePoint(std::chrono::hours(1'000));
const DeploymentHealth::WallTime kWall0{};
constexpr int kCalls = 1'000;

// A group of deployments d0, d1, ... with their index set, as the config loader would.
config::ModelGroup Group(Strategy strategy, std::size_t n) {
    config::ModelGroup group;
    group.name = "g";
    group.strategy = strategy;
    group.deployments.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        group.deployments[i].name = "d" + std::to_string(i);
        group.deployments[i].index = i;
    }
    return group;
}

// A seeded uniform [0, 1) source, as a worker's would be.
struct Uniform {
    explicit Uniform(std::uint64_t seed) : engine(seed) {}
    std::mt19937_64 engine;
    std::uniform_real_distribution<double> dist{0.0, 1.0};
    std::function<double()> Fn() {
        return [this] { return dist(engine); };
    }
};

std::vector<std::string> Names(const std::vector<const config::Deployment*>& order) {
    std::vector<std::string> names;
    for (const auto* d : order) names.push_back(d->name);
    return names;
}

// Every deployment appears exactly once, and each pointer is into the group.
void ExpectPermutation(const config::ModelGroup& group,
                       const std::vector<const config::Deployment*>& order) {
    ASSERT_EQ(order.size(), group.deployments.size());
    std::set<std::size_t> seen;
    for (const auto* d : order) {
        ASSERT_GE(d, group.deployments.data());
        ASSERT_LT(d, group.deployments.data() + group.deployments.size());
        seen.insert(d->index);
    }
    EXPECT_EQ(seen.size(), group.deployments.size());
}

// |count - n p| within three standard deviations of the binomial.
void ExpectFrequency(int count, double p, const std::string& what) {
    const double mean = kCalls * p;
    const double sigma = std::sqrt(kCalls * p * (1 - p));
    EXPECT_LE(std::abs(count - mean), 3 * sigma)
        << what << ": " << count << " of " << kCalls << ", expected " << mean;
}

// First-position counts over kCalls orders.
std::map<std::string, int> FirstCounts(const config::ModelGroup& group,
                                       const DeploymentHealth& health, std::uint64_t seed) {
    Uniform uniform(seed);
    const auto draw = uniform.Fn();
    std::map<std::string, int> counts;
    for (int i = 0; i < kCalls; ++i) {
        const auto order = OrderDeployments(group, health, draw);
        ExpectPermutation(group, order);
        counts[order.front()->name]++;
    }
    return counts;
}

void MeasureTtft(DeploymentHealth& health, std::size_t index, int ms) {
    health.OnOutcome(index, kT0, kWall0, policy::ErrorClass::kNone, std::nullopt, milliseconds(ms));
}

TEST(StrategyTest, EveryStrategyOrdersEveryDeploymentOnce) {
    for (const Strategy strategy :
         {Strategy::kWeighted, Strategy::kPriority, Strategy::kLeastInFlight,
          Strategy::kLowestLatency, Strategy::kCheapest, Strategy::kPowerOfTwo}) {
        SCOPED_TRACE(static_cast<int>(strategy));
        for (std::size_t n = 1; n <= 6; ++n) {
            const config::ModelGroup group = Group(strategy, n);
            DeploymentHealth health(n, HealthOptions{});
            for (std::size_t i = 0; i < n; ++i) health.AddInFlight(i, static_cast<int>(i % 3));
            Uniform uniform(n);
            const auto draw = uniform.Fn();
            for (int call = 0; call < 200; ++call) {
                ExpectPermutation(group, OrderDeployments(group, health, draw));
            }
        }
    }
}

TEST(StrategyTest, WeightedFirstPositionFollowsTheWeights) {
    config::ModelGroup group = Group(Strategy::kWeighted, 4);
    const double weights[] = {1, 2, 3, 4};
    for (std::size_t i = 0; i < 4; ++i) group.deployments[i].weight = weights[i];
    const DeploymentHealth health(4, HealthOptions{});
    const auto counts = FirstCounts(group, health, 42);
    for (std::size_t i = 0; i < 4; ++i) {
        const std::string name = "d" + std::to_string(i);
        ExpectFrequency(counts.contains(name) ? counts.at(name) : 0, weights[i] / 10, name);
    }
}

TEST(StrategyTest, WeightedWithZeroWeightNeverFirst) {
    config::ModelGroup group = Group(Strategy::kWeighted, 3);
    group.deployments[0].weight = 1;
    group.deployments[1].weight = 0;
    group.deployments[2].weight = 1;
    const DeploymentHealth health(3, HealthOptions{});
    const auto counts = FirstCounts(group, health, 7);
    EXPECT_FALSE(counts.contains("d1"));
    ExpectFrequency(counts.at("d0"), 0.5, "d0");
}

TEST(StrategyTest, PriorityIsListOrder) {
    const config::ModelGroup group = Group(Strategy::kPriority, 4);
    DeploymentHealth health(4, HealthOptions{});
    // Neither load nor latency moves it.
    health.AddInFlight(0, 50);
    MeasureTtft(health, 0, 5'000);
    MeasureTtft(health, 3, 1);
    Uniform uniform(1);
    const auto draw = uniform.Fn();
    const std::vector<std::string> expected = {"d0", "d1", "d2", "d3"};
    for (int i = 0; i < kCalls; ++i) {
        ASSERT_EQ(Names(OrderDeployments(group, health, draw)), expected) << i;
    }
}

TEST(StrategyTest, LeastInFlightFirstAndTiesSplitEvenly) {
    const config::ModelGroup group = Group(Strategy::kLeastInFlight, 4);
    DeploymentHealth health(4, HealthOptions{});
    const int loads[] = {3, 1, 5, 1};
    for (std::size_t i = 0; i < 4; ++i) health.AddInFlight(i, loads[i]);
    Uniform uniform(2);
    const auto draw = uniform.Fn();
    std::map<std::string, int> first;
    for (int i = 0; i < kCalls; ++i) {
        const auto order = OrderDeployments(group, health, draw);
        ExpectPermutation(group, order);
        first[order[0]->name]++;
        ASSERT_EQ(order[2]->name, "d0") << i;
        ASSERT_EQ(order[3]->name, "d2") << i;
    }
    EXPECT_EQ(first.size(), 2u) << "only the two with one in flight go first";
    ExpectFrequency(first["d1"], 0.5, "d1");
    ExpectFrequency(first["d3"], 0.5, "d3");
}

TEST(StrategyTest, LeastInFlightFollowsTheLoadAsItChanges) {
    const config::ModelGroup group = Group(Strategy::kLeastInFlight, 3);
    DeploymentHealth health(3, HealthOptions{});
    Uniform uniform(3);
    const auto draw = uniform.Fn();
    health.AddInFlight(0, 2);
    health.AddInFlight(1, 1);
    EXPECT_EQ(Names(OrderDeployments(group, health, draw)),
              (std::vector<std::string>{"d2", "d1", "d0"}));
    health.AddInFlight(2, 5);
    health.AddInFlight(0, -2);
    EXPECT_EQ(Names(OrderDeployments(group, health, draw)),
              (std::vector<std::string>{"d0", "d1", "d2"}));
}

TEST(StrategyTest, LowestLatencySortsByAverageWithUnmeasuredFirst) {
    const config::ModelGroup group = Group(Strategy::kLowestLatency, 5);
    DeploymentHealth health(5, HealthOptions{});
    MeasureTtft(health, 0, 200);
    MeasureTtft(health, 2, 50);
    MeasureTtft(health, 3, 120);
    // d1 and d4 have no measurement yet.
    Uniform uniform(4);
    const auto draw = uniform.Fn();
    std::map<std::string, int> first;
    for (int i = 0; i < kCalls; ++i) {
        const auto names = Names(OrderDeployments(group, health, draw));
        ASSERT_EQ(names.size(), 5u);
        ASSERT_TRUE((names[0] == "d1" && names[1] == "d4") ||
                    (names[0] == "d4" && names[1] == "d1"))
            << names[0] << " " << names[1];
        ASSERT_EQ((std::vector<std::string>(names.begin() + 2, names.end())),
                  (std::vector<std::string>{"d2", "d3", "d0"}));
        first[names[0]]++;
    }
    ExpectFrequency(first["d1"], 0.5, "d1");
    ExpectFrequency(first["d4"], 0.5, "d4");
}

TEST(StrategyTest, LowestLatencyUsesTheMovingAverage) {
    const config::ModelGroup group = Group(Strategy::kLowestLatency, 2);
    DeploymentHealth health(2, HealthOptions{});
    MeasureTtft(health, 0, 100);
    MeasureTtft(health, 1, 150);
    Uniform uniform(5);
    const auto draw = uniform.Fn();
    EXPECT_EQ(Names(OrderDeployments(group, health, draw)), (std::vector<std::string>{"d0", "d1"}));
    // One slow answer: 0.3 * 400 + 0.7 * 100 = 190 > 150.
    MeasureTtft(health, 0, 400);
    EXPECT_EQ(Names(OrderDeployments(group, health, draw)), (std::vector<std::string>{"d1", "d0"}));
}

TEST(StrategyTest, LowestLatencyPutsUnmeasuredBeforeAZeroMillisecondAverage) {
    // A local deployment can answer within the millisecond; one never measured still goes first.
    const config::ModelGroup group = Group(Strategy::kLowestLatency, 2);
    DeploymentHealth health(2, HealthOptions{});
    MeasureTtft(health, 0, 0);
    ASSERT_EQ(health.EwmaTtftMs(0), 0.0);
    Uniform uniform(6);
    const auto draw = uniform.Fn();
    for (int i = 0; i < kCalls; ++i) {
        ASSERT_EQ(OrderDeployments(group, health, draw).front()->name, "d1") << i;
    }
}

TEST(StrategyTest, CheapestByTotalPriceTiesInListOrder) {
    config::ModelGroup group = Group(Strategy::kCheapest, 5);
    const double input[] = {3, 0.15, 1, 0.5, 2.5};
    const double output[] = {15, 0.6, 17, 0.25, 10};
    // Totals: 18, 0.75, 18, 0.75, 12.5.
    for (std::size_t i = 0; i < 5; ++i) {
        group.deployments[i].input_price = input[i];
        group.deployments[i].output_price = output[i];
    }
    DeploymentHealth health(5, HealthOptions{});
    health.AddInFlight(1, 100);  // load does not matter
    MeasureTtft(health, 3, 9'000);
    Uniform uniform(7);
    const auto draw = uniform.Fn();
    const std::vector<std::string> expected = {"d1", "d3", "d4", "d0", "d2"};
    for (int i = 0; i < kCalls; ++i) {
        ASSERT_EQ(Names(OrderDeployments(group, health, draw)), expected) << i;
    }
}

TEST(StrategyTest, CheapestWithoutPricesIsListOrder) {
    const config::ModelGroup group = Group(Strategy::kCheapest, 3);
    const DeploymentHealth health(3, HealthOptions{});
    Uniform uniform(8);
    const auto draw = uniform.Fn();
    for (int i = 0; i < kCalls; ++i) {
        ASSERT_EQ(Names(OrderDeployments(group, health, draw)),
                  (std::vector<std::string>{"d0", "d1", "d2"}));
    }
}

TEST(StrategyTest, PowerOfTwoNeverPutsTheMostLoadedFirst) {
    const config::ModelGroup group = Group(Strategy::kPowerOfTwo, 3);
    DeploymentHealth health(3, HealthOptions{});
    health.AddInFlight(1, 2);
    health.AddInFlight(2, 5);
    Uniform uniform(9);
    const auto draw = uniform.Fn();
    std::map<std::string, int> first;
    for (int i = 0; i < kCalls; ++i) {
        const auto order = OrderDeployments(group, health, draw);
        ExpectPermutation(group, order);
        ASSERT_NE(order[0]->name, "d2") << i;
        // The rest follow by load.
        for (std::size_t k = 2; k < order.size(); ++k) {
            ASSERT_LE(health.InFlight(order[k - 1]->index), health.InFlight(order[k]->index));
        }
        first[order[0]->name]++;
    }
    // The less loaded of a uniformly random pair: d0 wins both pairs it is in, d1 one of three.
    ExpectFrequency(first["d0"], 2.0 / 3, "d0");
    ExpectFrequency(first["d1"], 1.0 / 3, "d1");
}

TEST(StrategyTest, PowerOfTwoWithFourDistinctLoads) {
    const config::ModelGroup group = Group(Strategy::kPowerOfTwo, 4);
    DeploymentHealth health(4, HealthOptions{});
    const int loads[] = {1, 4, 2, 7};
    for (std::size_t i = 0; i < 4; ++i) health.AddInFlight(i, loads[i]);
    const auto counts = FirstCounts(group, health, 10);
    EXPECT_FALSE(counts.contains("d3"));
    // Of the six pairs d0 wins 3, d2 wins 2 and d1 wins 1.
    ExpectFrequency(counts.at("d0"), 3.0 / 6, "d0");
    ExpectFrequency(counts.at("d2"), 2.0 / 6, "d2");
    ExpectFrequency(counts.at("d1"), 1.0 / 6, "d1");
}

TEST(StrategyTest, PowerOfTwoSplitsTwoEquallyLoaded) {
    {
        const config::ModelGroup group = Group(Strategy::kPowerOfTwo, 2);
        DeploymentHealth health(2, HealthOptions{});
        health.AddInFlight(0, 3);
        health.AddInFlight(1, 3);
        const auto counts = FirstCounts(group, health, 11);
        ExpectFrequency(counts.at("d0"), 0.5, "d0 of two");
        ExpectFrequency(counts.at("d1"), 0.5, "d1 of two");
    }
    {
        const config::ModelGroup group = Group(Strategy::kPowerOfTwo, 3);
        DeploymentHealth health(3, HealthOptions{});
        health.AddInFlight(0, 2);
        health.AddInFlight(1, 2);
        health.AddInFlight(2, 9);
        const auto counts = FirstCounts(group, health, 12);
        EXPECT_FALSE(counts.contains("d2"));
        ExpectFrequency(counts.at("d0"), 0.5, "d0 of three");
        ExpectFrequency(counts.at("d1"), 0.5, "d1 of three");
    }
}

TEST(StrategyTest, SingleDeploymentGroups) {
    for (const Strategy strategy :
         {Strategy::kWeighted, Strategy::kPriority, Strategy::kLeastInFlight,
          Strategy::kLowestLatency, Strategy::kCheapest, Strategy::kPowerOfTwo}) {
        const config::ModelGroup group = Group(strategy, 1);
        const DeploymentHealth health(1, HealthOptions{});
        Uniform uniform(13);
        EXPECT_EQ(Names(OrderDeployments(group, health, uniform.Fn())),
                  (std::vector<std::string>{"d0"}));
    }
}

TEST(StrategyTest, ConcurrentOrderingWhileHealthChanges) {
    // Workers order requests while others record outcomes and move load: no data race, and every
    // order stays a permutation.
    constexpr std::size_t kDeployments = 4;
    DeploymentHealth health(kDeployments, HealthOptions{});
    std::atomic<bool> go{false};
    std::atomic<int> bad_orders{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            const Strategy strategy = t % 2 == 0 ? Strategy::kLowestLatency : Strategy::kPowerOfTwo;
            const config::ModelGroup group = Group(strategy, kDeployments);
            Uniform uniform(100 + t);
            const auto draw = uniform.Fn();
            while (!go.load()) std::this_thread::yield();
            for (int i = 0; i < 5'000; ++i) {
                const auto order = OrderDeployments(group, health, draw);
                std::set<std::size_t> seen;
                for (const auto* d : order) seen.insert(d->index);
                if (seen.size() != kDeployments) bad_orders.fetch_add(1);
            }
        });
        threads.emplace_back([&, t] {
            std::mt19937_64 rng(200 + t);
            while (!go.load()) std::this_thread::yield();
            for (int i = 0; i < 5'000; ++i) {
                const std::size_t index = rng() % kDeployments;
                health.AddInFlight(index, 1);
                MeasureTtft(health, index, static_cast<int>(rng() % 300));
                health.AddInFlight(index, -1);
            }
        });
    }
    go.store(true);
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(bad_orders.load(), 0);
    for (std::size_t i = 0; i < kDeployments; ++i) EXPECT_EQ(health.InFlight(i), 0);
}

}  // namespace strategy_test
}  // namespace switchyard::routing
