#pragma once

#include <array>
#include <optional>

#include "config/config.h"
#include "routing/fallback_plan.h"
#include "server/request_context.h"
#include "upstream/upstream_call.h"

namespace switchyard::server {

// The attempts of one request that race for its client, a hedged attempt and the one it hedges
// (docs/resilience.md#hedged-attempts): the first to claim the client answers it; the others'
// upstream calls are aborted at once, so their providers stop generating, and they are lost.
// One per request, on the request's executor (no locks).
class AttemptRace final {
  public:
    static constexpr int kRunners = 2;

    // A new race (no attempt of the last one runs any more).
    void Reset() { *this = AttemptRace{}; }

    // An attempt on `deployment` as a member of `stage` joins with its upstream call: its place,
    // or nullopt when the race is decided (it must not be sent).
    std::optional<int> Join(upstream::UpstreamCall& call, const config::Deployment& deployment,
                            const routing::PlannedGroup& stage);
    // The attempt at `place` has ended: its call is gone.
    void Leave(int place) { runners_[place].call = nullptr; }
    // The attempt at `place` is about to answer the client: true when it is the first. The
    // others are aborted, and the served-by fields of `ctx`, which every runner set as it went,
    // are its own again.
    bool Claim(int place, RequestContext& ctx);
    bool Decided() const { return winner_.has_value(); }
    // The attempt at `place` was aborted, or never sent, because another one won.
    bool Lost(int place) const { return winner_ && *winner_ != place; }

  private:
    struct Runner {
        upstream::UpstreamCall* call = nullptr;
        const config::Deployment* deployment = nullptr;
        routing::PlannedGroup stage;
    };
    std::array<Runner, kRunners> runners_{};
    int joined_ = 0;
    std::optional<int> winner_;
};

// An attempt's place in its race (none: it runs alone), left when the attempt ends.
class RaceSeat final {
  public:
    RaceSeat(AttemptRace* race, upstream::UpstreamCall& call, const config::Deployment& deployment,
             const routing::PlannedGroup& stage)
        : race_(race) {
        if (race_ != nullptr) place_ = race_->Join(call, deployment, stage);
    }
    RaceSeat(const RaceSeat&) = delete;
    RaceSeat& operator=(const RaceSeat&) = delete;
    ~RaceSeat() {
        if (race_ != nullptr && place_) race_->Leave(*place_);
    }

    // The race is decided by another attempt: this one must not answer (or be sent).
    bool Lost() const { return race_ != nullptr && (!place_ || race_->Lost(*place_)); }
    // True when this attempt may answer the client: it runs alone, or it is the first of its race
    // to get there.
    bool Claim(RequestContext& ctx) const {
        return race_ == nullptr || (place_ && race_->Claim(*place_, ctx));
    }

  private:
    AttemptRace* race_;
    std::optional<int> place_;
};

}  // namespace switchyard::server
