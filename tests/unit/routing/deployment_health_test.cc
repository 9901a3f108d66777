#include "routing/deployment_health.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace switchyard::routing {
namespace {

using std::chrono::milliseconds;
using TimePoint = DeploymentHealth::TimePoint;

const TimePoint kT0 = TimePoint(std::chrono::hours(1'000));

TEST(DeploymentHealthTest, EveryDeploymentStartsAvailable) {
    const DeploymentHealth health(3, 10, 0.5);
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_TRUE(health.Available(i, kT0)) << i;
        EXPECT_TRUE(health.Available(i, TimePoint{})) << i;
        EXPECT_LE(health.AvailableAt(i), TimePoint{}) << i;
    }
}

TEST(DeploymentHealthTest, RateLimitedUntilHoldsTheDeploymentBack) {
    DeploymentHealth health(3, 10, 0.5);
    health.RateLimitedUntil(1, kT0 + milliseconds(5'000));
    EXPECT_EQ(health.AvailableAt(1), kT0 + milliseconds(5'000));
    EXPECT_FALSE(health.Available(1, kT0));
    EXPECT_FALSE(health.Available(1, kT0 + milliseconds(4'999)));
    EXPECT_TRUE(health.Available(1, kT0 + milliseconds(5'000)));
    EXPECT_TRUE(health.Available(1, kT0 + milliseconds(6'000)));
    // The others are not affected.
    EXPECT_TRUE(health.Available(0, kT0));
    EXPECT_TRUE(health.Available(2, kT0));
}

TEST(DeploymentHealthTest, ExtendsButNeverShortens) {
    DeploymentHealth health(1, 10, 0.5);
    health.RateLimitedUntil(0, kT0 + milliseconds(5'000));
    health.RateLimitedUntil(0, kT0 + milliseconds(10'000));
    EXPECT_EQ(health.AvailableAt(0), kT0 + milliseconds(10'000));
    health.RateLimitedUntil(0, kT0 + milliseconds(2'000));
    EXPECT_EQ(health.AvailableAt(0), kT0 + milliseconds(10'000));
    health.RateLimitedUntil(0, kT0);
    EXPECT_EQ(health.AvailableAt(0), kT0 + milliseconds(10'000));
    EXPECT_FALSE(health.Available(0, kT0 + milliseconds(9'999)));
}

TEST(DeploymentHealthTest, ConcurrentUpdatesKeepTheLatest) {
    DeploymentHealth health(2, 10, 0.5);
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&, t] {
            while (!go.load()) std::this_thread::yield();
            for (int i = 0; i < 5'000; ++i) {
                // Thread t writes values t, t + 8, t + 16, ... in a scrambled order.
                const int k = (i * 7'919) % 5'000;
                health.RateLimitedUntil(0, kT0 + milliseconds(k * 8 + t));
            }
        });
    }
    go.store(true);
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(health.AvailableAt(0), kT0 + milliseconds(4'999 * 8 + 7));
    EXPECT_TRUE(health.Available(1, kT0));
}

TEST(DeploymentHealthTest, EachDeploymentHasItsOwnBudget) {
    DeploymentHealth health(2, 4, 0.5);
    EXPECT_NE(&health.Budget(0), &health.Budget(1));
    EXPECT_EQ(&health.Budget(0), &health.Budget(0));
    EXPECT_DOUBLE_EQ(health.Budget(0).Tokens(), 4.0);
    health.Budget(0).OnFailure();
    health.Budget(0).OnFailure();
    EXPECT_FALSE(health.Budget(0).CanRetry());
    EXPECT_TRUE(health.Budget(1).CanRetry());
    EXPECT_DOUBLE_EQ(health.Budget(1).Tokens(), 4.0);
    health.Budget(0).OnSuccess();
    EXPECT_DOUBLE_EQ(health.Budget(0).Tokens(), 2.5);
}

}  // namespace
}  // namespace switchyard::routing
