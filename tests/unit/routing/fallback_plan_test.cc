#include "routing/fallback_plan.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace switchyard::routing {
namespace fallback_plan_test {

using Names = std::vector<std::string>;

config::ModelGroup Group(std::string name, Names fallbacks = {}, Names context = {},
                         Names content = {}) {
    config::ModelGroup g;
    g.name = std::move(name);
    g.deployments.resize(1);
    g.deployments[0].name = g.name + "-d";
    g.fallbacks = std::move(fallbacks);
    g.context_window_fallbacks = std::move(context);
    g.content_policy_fallbacks = std::move(content);
    return g;
}

// "name@depth" for each planned group, in order.
std::vector<std::string> Render(const std::vector<PlannedGroup>& plan) {
    std::vector<std::string> out;
    for (const PlannedGroup& p : plan) out.push_back(p.group->name + "@" + std::to_string(p.depth));
    return out;
}

std::vector<PlannedGroup> Plan(const config::Config& c, Names requested,
                               std::optional<Names> override = std::nullopt, bool enabled = true) {
    return PlanGroups(c, requested, override, enabled);
}

TEST(PlanGroupsTest, RequestedGroupThenItsFallbacksInOrder) {
    config::Config c;
    c.models = {Group("a", {"c", "b"}), Group("b"), Group("c")};
    const auto plan = Plan(c, {"a"});
    EXPECT_EQ(Render(plan), (Names{"a@0", "c@1", "b@2"}));
    // The plan points into the config.
    EXPECT_EQ(plan[0].group, c.FindGroup("a"));
    EXPECT_EQ(plan[1].group, c.FindGroup("c"));
}

TEST(PlanGroupsTest, NoFallbacksIsJustTheGroup) {
    config::Config c;
    c.models = {Group("a"), Group("b", {"a"})};
    EXPECT_EQ(Render(Plan(c, {"a"})), (Names{"a@0"}));
}

TEST(PlanGroupsTest, FallbacksOfFallbacksBreadthFirst) {
    config::Config c;
    c.models = {Group("a", {"b", "c"}), Group("b", {"d"}), Group("c", {"e"}),
                Group("d", {"f"}),      Group("e"),        Group("f")};
    EXPECT_EQ(Render(Plan(c, {"a"})), (Names{"a@0", "b@1", "c@2", "d@3", "e@4", "f@5"}));
}

TEST(PlanGroupsTest, DuplicatesAndCyclesAreDropped) {
    config::Config c;
    c.models = {Group("a", {"b", "c", "b"}), Group("b", {"a", "c", "d"}), Group("c", {"b", "d"}),
                Group("d", {"a"})};
    EXPECT_EQ(Render(Plan(c, {"a"})), (Names{"a@0", "b@1", "c@2", "d@3"}));
}

TEST(PlanGroupsTest, DepthIsThePositionInTheChain) {
    config::Config c;
    c.models = {Group("a", {"b", "c"}), Group("b", {"c", "d"}), Group("c", {"e"}), Group("d"),
                Group("e", {"a"})};
    const auto plan = Plan(c, {"a"});
    ASSERT_EQ(plan.size(), 5u);
    for (std::size_t i = 0; i < plan.size(); ++i) EXPECT_EQ(plan[i].depth, static_cast<int>(i));
}

TEST(PlanGroupsTest, RequestOverrideReplacesTheConfiguredFallbacks) {
    config::Config c;
    c.models = {Group("a", {"b", "c"}), Group("b"), Group("c"), Group("d", {"e"}), Group("e")};
    // The override's entries in its order, and nothing from their own configured fallbacks.
    EXPECT_EQ(Render(Plan(c, {"a"}, Names{"d", "c"})), (Names{"a@0", "d@1", "c@2"}));
    EXPECT_EQ(Render(Plan(c, {"a"}, Names{"c", "a", "c"})), (Names{"a@0", "c@1"}));
    // An empty override means: no fallbacks for this request.
    EXPECT_EQ(Render(Plan(c, {"a"}, Names{})), (Names{"a@0"}));
}

TEST(PlanGroupsTest, ModelsListIsTriedInPriorityOrderBeforeFallbacks) {
    config::Config c;
    c.models = {Group("x", {"z"}), Group("y", {"w", "x"}), Group("z"), Group("w")};
    EXPECT_EQ(Render(Plan(c, {"x", "y"})), (Names{"x@0", "y@1", "z@2", "w@3"}));
    EXPECT_EQ(Render(Plan(c, {"y", "x"})), (Names{"y@0", "x@1", "w@2", "z@3"}));
    EXPECT_EQ(Render(Plan(c, {"x", "x", "z"})), (Names{"x@0", "z@1"}));
    EXPECT_EQ(Render(Plan(c, {"x", "y"}, Names{"w"})), (Names{"x@0", "y@1", "w@2"}));
}

TEST(PlanGroupsTest, FallbacksDisabledLeavesOnlyTheRequestedGroups) {
    config::Config c;
    c.models = {Group("a", {"b"}), Group("b"), Group("c")};
    EXPECT_EQ(Render(Plan(c, {"a"}, std::nullopt, false)), (Names{"a@0"}));
    EXPECT_EQ(Render(Plan(c, {"a"}, Names{"c"}, false)), (Names{"a@0"}));
    EXPECT_EQ(Render(Plan(c, {"a", "c"}, std::nullopt, false)), (Names{"a@0", "c@1"}));
}

TEST(PlanGroupsTest, UnknownNamesAreSkipped) {
    // Config validation and the handler reject unknown names first; the planner stays safe anyway.
    config::Config c;
    c.models = {Group("a", {"ghost", "b"}), Group("b")};
    EXPECT_EQ(Render(Plan(c, {"nope", "a"})), (Names{"a@0", "b@1"}));
    EXPECT_EQ(Render(Plan(c, {"a"}, Names{"ghost"})), (Names{"a@0"}));
    EXPECT_TRUE(Plan(c, {"nope"}).empty());
}

TEST(SemanticFallbacksTest, ContextWindowList) {
    config::Config c;
    c.models = {Group("a", {"f"}, {"big", "bigger"}, {"safe"}), Group("big"), Group("bigger"),
                Group("safe"), Group("f")};
    const auto plan = SemanticFallbacks(c, *c.FindGroup("a"), policy::Action::kContextFallback, 1);
    EXPECT_EQ(Render(plan), (Names{"big@1", "bigger@2"}));
    EXPECT_EQ(plan[0].group, c.FindGroup("big"));
}

TEST(SemanticFallbacksTest, ContentPolicyList) {
    config::Config c;
    c.models = {Group("a", {"f"}, {"big"}, {"safe", "safer"}), Group("big"), Group("safe"),
                Group("safer"), Group("f")};
    EXPECT_EQ(Render(SemanticFallbacks(c, *c.FindGroup("a"), policy::Action::kContentFallback, 3)),
              (Names{"safe@3", "safer@4"}));
}

TEST(SemanticFallbacksTest, DepthsStartWhereTheCallerSays) {
    config::Config c;
    c.models = {Group("a", {}, {"b", "c", "b"}), Group("b", {}, {"c"}), Group("c")};
    const config::ModelGroup& a = *c.FindGroup("a");
    EXPECT_EQ(Render(SemanticFallbacks(c, a, policy::Action::kContextFallback, 0)),
              (Names{"b@0", "c@1"}));
    EXPECT_EQ(Render(SemanticFallbacks(c, a, policy::Action::kContextFallback, 7)),
              (Names{"b@7", "c@8"}));
}

TEST(SemanticFallbacksTest, NoListNoFallbacks) {
    config::Config c;
    c.models = {Group("a", {"b"}), Group("b")};
    const config::ModelGroup& a = *c.FindGroup("a");
    EXPECT_TRUE(SemanticFallbacks(c, a, policy::Action::kContextFallback, 1).empty());
    EXPECT_TRUE(SemanticFallbacks(c, a, policy::Action::kContentFallback, 1).empty());
}

}  // namespace fallback_plan_test
}  // namespace switchyard::routing
