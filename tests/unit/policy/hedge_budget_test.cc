#include "policy/hedge_budget.h"

#include <gtest/gtest.h>

namespace switchyard::policy {
namespace {

TEST(HedgeBudgetTest, StartsEmptyAndHedgesOneRequestInTenAtARatioOfATenth) {
    HedgeBudget budget;
    EXPECT_FALSE(budget.TryHedge());
    int hedged = 0;
    for (int i = 0; i < 1000; ++i) {
        budget.OnRequest(0.1);
        if (budget.TryHedge()) ++hedged;  // every request would like a hedge
    }
    EXPECT_EQ(hedged, 100);
}

TEST(HedgeBudgetTest, ACalmStretchSavesAtMostTheBurst) {
    HedgeBudget budget;
    for (int i = 0; i < 10'000; ++i) budget.OnRequest(0.1);
    EXPECT_DOUBLE_EQ(budget.Tokens(), 0.1 * HedgeBudget::kBurstRequests);
    int hedged = 0;
    while (budget.TryHedge()) ++hedged;
    EXPECT_EQ(hedged, 10);
    EXPECT_LT(budget.Tokens(), 1.0);
}

TEST(HedgeBudgetTest, AFractionOfATokenIsNoHedge) {
    HedgeBudget budget;
    for (int i = 0; i < 9; ++i) budget.OnRequest(0.1);
    EXPECT_FALSE(budget.TryHedge());
    budget.OnRequest(0.1);
    EXPECT_TRUE(budget.TryHedge());
    EXPECT_FALSE(budget.TryHedge());
}

}  // namespace
}  // namespace switchyard::policy
