#include "routing/residency.h"

#include <gtest/gtest.h>

namespace switchyard::routing {
namespace residency_test {

config::Deployment In(std::string region) {
    config::Deployment d;
    d.name = "d";
    d.region = std::move(region);
    return d;
}

TEST(ResidencyTest, NoConstraintAdmitsEveryDeploymentWithOrWithoutARegion) {
    const Regions any;
    EXPECT_TRUE(Admits(any, In("eu")));
    EXPECT_TRUE(Admits(any, In("")));
}

TEST(ResidencyTest, AConstraintAdmitsOnlyItsRegionsAndNeverAnUnplacedDeployment) {
    const Regions eu = Narrow(std::nullopt, {"eu"});
    EXPECT_TRUE(Admits(eu, In("eu")));
    EXPECT_FALSE(Admits(eu, In("us")));
    EXPECT_FALSE(Admits(eu, In("")));
}

TEST(ResidencyTest, EveryConstraintNarrowsAndAnEmptyOneChangesNothing) {
    Regions allowed = Narrow(std::nullopt, {"eu", "us"});
    allowed = Narrow(allowed, {});
    ASSERT_TRUE(allowed);
    EXPECT_EQ(*allowed, (std::vector<std::string>{"eu", "us"}));
    allowed = Narrow(allowed, {"us", "apac"});
    EXPECT_EQ(*allowed, (std::vector<std::string>{"us"}));
    allowed = Narrow(allowed, {"eu"});
    ASSERT_TRUE(allowed);
    EXPECT_TRUE(allowed->empty()) << "disjoint constraints allow nothing";
    EXPECT_FALSE(Admits(allowed, In("eu")));
    EXPECT_EQ(Describe(*allowed), "none");
}

TEST(ResidencyTest, ParsesAHeaderOfRegions) {
    EXPECT_EQ(ParseRegions("eu"), (std::vector<std::string>{"eu"}));
    EXPECT_EQ(ParseRegions(" EU , us-east ,eu"), (std::vector<std::string>{"eu", "us-east"}));
    EXPECT_FALSE(ParseRegions(""));
    EXPECT_FALSE(ParseRegions("eu,"));
    EXPECT_FALSE(ParseRegions("eu;us"));
    EXPECT_FALSE(ParseRegions("eu west"));
    EXPECT_FALSE(ParseRegions(std::string(33, 'a')));
    EXPECT_EQ(Describe({"eu", "us"}), "eu, us");
}

}  // namespace residency_test
}  // namespace switchyard::routing
