#include "limits/client_budgets.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace switchyard::limits {
namespace client_budgets_test {

TEST(ClientBudgetsTest, SameCredentialSameBudget) {
    ClientBudgets budgets(10, 0.5);
    policy::RetryBudget& a = budgets.For("sk-alpha");
    EXPECT_EQ(&budgets.For("sk-alpha"), &a);
    EXPECT_EQ(&budgets.For(std::string("sk-") + "alpha"), &a);
    EXPECT_EQ(&budgets.For(""), &budgets.For(""));
}

TEST(ClientBudgetsTest, DifferentCredentialsDifferentBudgets) {
    ClientBudgets budgets(10, 0.5);
    policy::RetryBudget& a = budgets.For("sk-alpha");
    policy::RetryBudget& b = budgets.For("sk-beta");
    policy::RetryBudget& anonymous = budgets.For("");
    EXPECT_NE(&a, &b);
    EXPECT_NE(&a, &anonymous);
    EXPECT_NE(&b, &anonymous);
    EXPECT_NE(&budgets.For("sk-alpha "), &a);
    EXPECT_NE(&budgets.For(std::string_view("sk-alpha\0", 9)), &a);
}

TEST(ClientBudgetsTest, OneClientCannotSpendAnothersBudget) {
    ClientBudgets budgets(10, 0.5);
    for (int i = 0; i < 20; ++i) budgets.For("noisy").OnFailure();
    EXPECT_FALSE(budgets.For("noisy").CanRetry());
    EXPECT_TRUE(budgets.For("quiet").CanRetry());
    EXPECT_DOUBLE_EQ(budgets.For("quiet").Tokens(), 10.0);
}

TEST(ClientBudgetsTest, BudgetsUseTheConfiguredParameters) {
    ClientBudgets budgets(7, 0.25);
    policy::RetryBudget& b = budgets.For("k");
    EXPECT_DOUBLE_EQ(b.Tokens(), 7.0);
    b.OnFailure();
    b.OnSuccess();
    EXPECT_DOUBLE_EQ(b.Tokens(), 6.25);
}

TEST(ClientBudgetsTest, PastMaxClientsNewCredentialsShareOneBudget) {
    ClientBudgets budgets(10, 0.5, 2);
    policy::RetryBudget& a = budgets.For("a");
    policy::RetryBudget& b = budgets.For("b");
    policy::RetryBudget& c = budgets.For("c");
    policy::RetryBudget& d = budgets.For("d");
    EXPECT_NE(&a, &b);
    EXPECT_NE(&c, &a);
    EXPECT_NE(&c, &b);
    EXPECT_EQ(&c, &d);
    EXPECT_EQ(&budgets.For("e"), &c);
    // Known clients keep their own.
    EXPECT_EQ(&budgets.For("a"), &a);
    EXPECT_EQ(&budgets.For("b"), &b);
    EXPECT_DOUBLE_EQ(c.Tokens(), 10.0);
}

TEST(ClientBudgetsTest, ZeroMaxClientsSharesEverything) {
    ClientBudgets budgets(10, 0.5, 0);
    EXPECT_EQ(&budgets.For("a"), &budgets.For("b"));
}

TEST(ClientBudgetsTest, ConcurrentLookupsAgree) {
    ClientBudgets budgets(10, 0.5, 1'000);
    std::vector<std::vector<policy::RetryBudget*>> seen(8);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 500; ++i) seen[t].push_back(&budgets.For(std::to_string(i % 100)));
        });
    }
    for (auto& thread : threads) thread.join();
    for (int t = 1; t < 8; ++t) EXPECT_EQ(seen[t], seen[0]) << t;
    for (int i = 0; i < 100; ++i) EXPECT_EQ(seen[0][i], &budgets.For(std::to_string(i)));
}

}  // namespace client_budgets_test
}  // namespace switchyard::limits
