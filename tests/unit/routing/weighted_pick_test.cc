#include "routing/weighted_pick.h"

#include <gtest/gtest.h>

namespace switchyard::routing {
namespace {

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
    EXPECT_EQ(PickWeighted(group, 0.0).name, "a");
    EXPECT_EQ(PickWeighted(group, 0.124).name, "a");
    EXPECT_EQ(PickWeighted(group, 0.126).name, "b");
    EXPECT_EQ(PickWeighted(group, 0.49).name, "b");
    EXPECT_EQ(PickWeighted(group, 0.51).name, "c");
    EXPECT_EQ(PickWeighted(group, 0.999999).name, "c");

    int counts[3] = {0, 0, 0};
    for (int i = 0; i < 8000; ++i) {
        const auto& d = PickWeighted(group, (i + 0.5) / 8000.0);
        counts[d.name[0] - 'a']++;
    }
    EXPECT_EQ(counts[0], 1000);
    EXPECT_EQ(counts[1], 3000);
    EXPECT_EQ(counts[2], 4000);
}

}  // namespace
}  // namespace switchyard::routing
