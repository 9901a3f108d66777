#include "limits/body_budget.h"

#include <gtest/gtest.h>

namespace switchyard::limits {
namespace body_budget_test {

TEST(BodyBudgetTest, BodiesInFlightStayWithinTheClientsAndTheTotalBound) {
    BodyBudget budget;
    BodyBudget::Reservation a1, a2, a3, b1, c1;
    EXPECT_EQ(budget.Reserve(1, 400, 1000, 600, a1), BodyBudget::Refusal::kNone);
    EXPECT_EQ(budget.Reserve(1, 300, 1000, 600, a2), BodyBudget::Refusal::kClient);
    EXPECT_EQ(budget.Reserve(2, 500, 1000, 600, b1), BodyBudget::Refusal::kNone);
    EXPECT_EQ(budget.Reserve(3, 200, 1000, 600, c1), BodyBudget::Refusal::kTotal);
    EXPECT_EQ(budget.InFlight(), 900u);
    EXPECT_EQ(budget.InFlightOf(1), 400u);
    {
        BodyBudget::Reservation moved = std::move(a1);
        EXPECT_EQ(budget.InFlightOf(1), 400u);
    }  // released with the request
    EXPECT_EQ(budget.InFlightOf(1), 0u);
    EXPECT_EQ(budget.Reserve(1, 100, 1000, 600, a3), BodyBudget::Refusal::kNone);
    EXPECT_EQ(budget.InFlight(), 600u);
}

TEST(BodyBudgetTest, AClientsFirstBodyAlwaysFits) {
    // No body within server.max_body_bytes is refused for good, whatever the bounds.
    BodyBudget budget;
    BodyBudget::Reservation big, second;
    EXPECT_EQ(budget.Reserve(1, 5000, 1000, 600, big), BodyBudget::Refusal::kNone);
    EXPECT_EQ(budget.Reserve(2, 10, 1000, 600, second), BodyBudget::Refusal::kTotal);
    big = BodyBudget::Reservation();
    EXPECT_EQ(budget.InFlight(), 0u);
    EXPECT_EQ(budget.Reserve(2, 10, 1000, 600, second), BodyBudget::Refusal::kNone);
}

}  // namespace body_budget_test
}  // namespace switchyard::limits
