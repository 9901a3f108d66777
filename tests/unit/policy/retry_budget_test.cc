#include "policy/retry_budget.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace switchyard::policy {
namespace retry_budget_test {

TEST(RetryBudgetTest, StartsFull) {
    const RetryBudget budget(10, 0.5);
    EXPECT_DOUBLE_EQ(budget.Tokens(), 10.0);
    EXPECT_TRUE(budget.CanRetry());
}

TEST(RetryBudgetTest, RetriesStopAtHalfTheTokens) {
    RetryBudget budget(10, 0.5);
    for (int i = 1; i <= 4; ++i) {
        budget.OnFailure();
        EXPECT_DOUBLE_EQ(budget.Tokens(), 10.0 - i);
        EXPECT_TRUE(budget.CanRetry()) << i;
    }
    budget.OnFailure();
    EXPECT_DOUBLE_EQ(budget.Tokens(), 5.0);
    EXPECT_FALSE(budget.CanRetry()) << "exactly half is not more than half";
    budget.OnSuccess();
    EXPECT_DOUBLE_EQ(budget.Tokens(), 5.5);
    EXPECT_TRUE(budget.CanRetry());
    budget.OnFailure();
    EXPECT_DOUBLE_EQ(budget.Tokens(), 4.5);
    EXPECT_FALSE(budget.CanRetry());
}

TEST(RetryBudgetTest, FractionalRatiosAreExact) {
    // gRPC A6 keeps tokens in thousandths; 0.1 must not drift the way repeated 0.1 sums do.
    RetryBudget budget(100, 0.1);
    for (int i = 0; i < 60; ++i) budget.OnFailure();
    EXPECT_DOUBLE_EQ(budget.Tokens(), 40.0);
    EXPECT_FALSE(budget.CanRetry());
    for (int i = 0; i < 100; ++i) budget.OnSuccess();
    EXPECT_DOUBLE_EQ(budget.Tokens(), 50.0);
    EXPECT_FALSE(budget.CanRetry());
    budget.OnSuccess();
    EXPECT_DOUBLE_EQ(budget.Tokens(), 50.1);
    EXPECT_TRUE(budget.CanRetry());
}

TEST(RetryBudgetTest, ClampedAtZero) {
    RetryBudget budget(3, 0.25);
    for (int i = 0; i < 10; ++i) budget.OnFailure();
    EXPECT_DOUBLE_EQ(budget.Tokens(), 0.0);
    EXPECT_FALSE(budget.CanRetry());
    budget.OnSuccess();
    EXPECT_DOUBLE_EQ(budget.Tokens(), 0.25) << "recovery starts from zero, not from a debt";
}

TEST(RetryBudgetTest, ClampedAtMax) {
    RetryBudget budget(10, 0.5);
    for (int i = 0; i < 100; ++i) budget.OnSuccess();
    EXPECT_DOUBLE_EQ(budget.Tokens(), 10.0);
    budget.OnFailure();
    EXPECT_DOUBLE_EQ(budget.Tokens(), 9.0) << "the surplus successes were not banked";
}

TEST(RetryBudgetTest, FractionalMaximum) {
    RetryBudget budget(2.5, 1);
    EXPECT_TRUE(budget.CanRetry());
    budget.OnFailure();  // 1.5 > 1.25
    EXPECT_TRUE(budget.CanRetry());
    budget.OnFailure();  // 0.5
    EXPECT_FALSE(budget.CanRetry());
    budget.OnSuccess();  // 1.5
    EXPECT_TRUE(budget.CanRetry());
}

// Runs `work(t)` on kThreads threads released together.
template <class Work>
void OnThreads(int threads, Work work) {
    std::atomic<bool> go{false};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&go, &work, t] {
            while (!go.load()) std::this_thread::yield();
            work(t);
        });
    }
    go.store(true);
    for (auto& thread : pool) thread.join();
}

TEST(RetryBudgetTest, InterleavedConcurrentUpdatesEndExactly) {
    // Each thread repeats: one failure (-1), then 1/ratio successes (+1). At any instant each
    // thread is at most one token down, so from the middle of the bucket no clamp ever applies
    // and the end value is exact whatever the interleaving.
    constexpr double kRatio = 0.25;
    RetryBudget budget(1'000, kRatio);
    for (int i = 0; i < 500; ++i) budget.OnFailure();
    ASSERT_DOUBLE_EQ(budget.Tokens(), 500.0);
    OnThreads(8, [&](int) {
        for (int i = 0; i < 20'000; ++i) {
            budget.OnFailure();
            for (int k = 0; k < 4; ++k) budget.OnSuccess();
        }
    });
    EXPECT_DOUBLE_EQ(budget.Tokens(), 500.0);
}

TEST(RetryBudgetTest, SeparatedConcurrentUpdatesEndExactly) {
    // Four threads only fail, four only succeed: N failures and N / ratio successes in total.
    // The largest possible swing (all of one kind first) is 40,000 tokens either way, inside the
    // bucket, so the result is exact.
    constexpr int kFailuresPerThread = 10'000;
    constexpr double kRatio = 0.25;
    constexpr int kSuccessesPerThread = static_cast<int>(kFailuresPerThread / kRatio);
    RetryBudget budget(100'000, kRatio);
    for (int i = 0; i < 50'000; ++i) budget.OnFailure();
    ASSERT_DOUBLE_EQ(budget.Tokens(), 50'000.0);
    OnThreads(8, [&](int t) {
        if (t % 2 == 0) {
            for (int i = 0; i < kFailuresPerThread; ++i) budget.OnFailure();
        } else {
            for (int i = 0; i < kSuccessesPerThread; ++i) budget.OnSuccess();
        }
    });
    EXPECT_DOUBLE_EQ(budget.Tokens(), 50'000.0);
}

TEST(RetryBudgetTest, ConcurrentUpdatesRespectTheClamps) {
    RetryBudget full(50, 0.5);
    OnThreads(8, [&](int) {
        for (int i = 0; i < 10'000; ++i) full.OnSuccess();
    });
    EXPECT_DOUBLE_EQ(full.Tokens(), 50.0);

    RetryBudget empty(50, 0.5);
    OnThreads(8, [&](int) {
        for (int i = 0; i < 10'000; ++i) empty.OnFailure();
    });
    EXPECT_DOUBLE_EQ(empty.Tokens(), 0.0);
    EXPECT_FALSE(empty.CanRetry());
}

// The attempt loop's rule in miniature: the first attempt of a request always goes out; each
// retry (at most three) needs budget.CanRetry(); here every attempt fails. Returns the attempts.
int RunFailingRequest(RetryBudget& budget) {
    constexpr int kMaxRetries = 3;
    int attempts = 1;
    budget.OnFailure();
    for (int retry = 0; retry < kMaxRetries && budget.CanRetry(); ++retry) {
        ++attempts;
        budget.OnFailure();
    }
    return attempts;
}

TEST(RetryBudgetTest, AnOutageCannotAmplifyTraffic) {
    constexpr int kRequests = 1'000;
    constexpr int kWarmup = 100;
    RetryBudget budget(100, 0.1);
    int total = 0;
    int after_warmup = 0;
    for (int r = 0; r < kRequests; ++r) {
        const int attempts = RunFailingRequest(budget);
        total += attempts;
        if (r >= kWarmup) after_warmup += attempts;
    }
    // Retries can only spend the half of the bucket above the threshold: 50 tokens, at most
    // 50 retries over the whole outage; afterwards each request makes exactly one attempt.
    EXPECT_LE(after_warmup, 1.1 * (kRequests - kWarmup));
    EXPECT_EQ(after_warmup, kRequests - kWarmup);
    EXPECT_LE(total, 1.1 * kRequests);
    EXPECT_LE(total, kRequests + 50);
    EXPECT_GT(total, kRequests) << "while tokens last, retries do flow";
    EXPECT_DOUBLE_EQ(budget.Tokens(), 0.0);
}

TEST(RetryBudgetTest, RetriesResumeAtTheRatioOnceTheOutageEnds) {
    RetryBudget budget(100, 0.1);
    for (int r = 0; r < 200; ++r) RunFailingRequest(budget);
    ASSERT_FALSE(budget.CanRetry());
    // 501 successes refill 50.1 tokens: the first moment retries are allowed again.
    for (int i = 0; i < 500; ++i) budget.OnSuccess();
    EXPECT_FALSE(budget.CanRetry());
    budget.OnSuccess();
    EXPECT_TRUE(budget.CanRetry());
    // The first failure takes it back to the threshold: that request gets no retry.
    EXPECT_EQ(RunFailingRequest(budget), 1);
}

}  // namespace retry_budget_test
}  // namespace switchyard::policy
