#include "engine/give_up.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace switchyard::engine {
namespace give_up_test {

using std::chrono::milliseconds;

core::AttemptNote Note(std::string deployment, unsigned status, std::string error_class) {
    core::AttemptNote note;
    note.model_group = "chat";
    note.deployment = std::move(deployment);
    note.status = status;
    note.error_class = std::move(error_class);
    return note;
}

TEST(GiveUpErrorTest, AfterAttemptsNamesTheLastWithItsStatus) {
    const std::vector<core::AttemptNote> notes{Note("a", 503, "overloaded"),
                                               Note("b", 529, "overloaded")};
    const core::LocalError last{core::ErrorKind::kUpstreamProtocol, "unused for an HTTP answer"};
    const core::LocalError error =
        GiveUpError(Action{}, {notes, 529, &last, policy::ErrorClass::kOverloaded, "interactive"});
    EXPECT_EQ(error.kind, core::ErrorKind::kAllAttemptsFailed);
    EXPECT_EQ(error.status, 529u);
    EXPECT_EQ(error.message, "All 2 attempt(s) failed. Last: b: HTTP 529 (overloaded)");
    ASSERT_EQ(error.attempts.size(), 2u);
    EXPECT_EQ(error.attempts[1].deployment, "b");
}

TEST(GiveUpErrorTest, ALastFailureWithoutAnswerGivesItsKindAndA504Or502) {
    const std::vector<core::AttemptNote> notes{Note("a", 0, "timeout")};
    const core::LocalError timeout{core::ErrorKind::kUpstreamTimeout,
                                   "Upstream 'a' timed out during the response header."};
    core::LocalError error =
        GiveUpError(Action{}, {notes, 0, &timeout, policy::ErrorClass::kTimeout, "interactive"});
    EXPECT_EQ(error.kind, core::ErrorKind::kUpstreamTimeout);
    EXPECT_EQ(error.status, 504u);
    EXPECT_EQ(error.message,
              "All 1 attempt(s) failed. Last: a: Upstream 'a' timed out during the response "
              "header.");
    const core::LocalError reset{core::ErrorKind::kUpstreamUnreachable, "Upstream 'a' failed."};
    error = GiveUpError(Action{}, {notes, 0, &reset, policy::ErrorClass::kConnection, "x"});
    EXPECT_EQ(error.kind, core::ErrorKind::kUpstreamUnreachable);
    EXPECT_EQ(error.status, 502u);
}

TEST(GiveUpErrorTest, NothingTriedForWantOfHeadroomIsA429NamingTheLane) {
    Action give_up;
    give_up.headroom_short_for = milliseconds(1500);
    give_up.retry_after = milliseconds(1500);
    const std::vector<core::AttemptNote> none;
    const core::LocalError error = GiveUpError(give_up, {none, 0, nullptr, {}, "batch"});
    EXPECT_EQ(error.kind, core::ErrorKind::kHeadroomExhausted);
    EXPECT_EQ(error.status, 429u);
    EXPECT_NE(error.message.find("for the 'batch' lane"), std::string::npos) << error.message;
    EXPECT_TRUE(error.attempts.empty());
}

TEST(GiveUpErrorTest, NothingTriedSaysWhenTheFirstCanServeAgain) {
    const std::vector<core::AttemptNote> none;
    Action give_up;
    give_up.retry_after = milliseconds(2250);
    give_up.rate_limited = true;
    core::LocalError error = GiveUpError(give_up, {none, 0, nullptr, {}, "interactive"});
    EXPECT_EQ(error.status, 429u);
    EXPECT_EQ(error.message,
              "Every deployment of the requested model is rate-limited; the first can serve "
              "again in 2.250 s.");
    give_up.rate_limited = false;
    error = GiveUpError(give_up, {none, 0, nullptr, {}, "interactive"});
    EXPECT_EQ(error.status, 503u);
    EXPECT_NE(error.message.find("unavailable (cooling down"), std::string::npos);
    error = GiveUpError(Action{}, {none, 0, nullptr, {}, "interactive"});
    EXPECT_EQ(error.message, "No deployment of the requested model can serve the request now.");
}

TEST(GiveUpErrorTest, NamesTheDeploymentsLeftOutForTheirRegion) {
    const std::vector<core::AttemptNote> none;
    const routing::Regions eu = std::vector<std::string>{"eu"};
    const core::LocalError error =
        GiveUpError(Action{}, {none, 0, nullptr, {}, "interactive", 2, &eu});
    EXPECT_TRUE(error.message.ends_with(
        " 2 deployment(s) outside the allowed regions (eu) were not tried."))
        << error.message;
}

}  // namespace give_up_test
}  // namespace switchyard::engine
