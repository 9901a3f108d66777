#include "server/attempt_race.h"

#include "providers/upstream_request.h"

namespace switchyard::server {

std::optional<int> AttemptRace::Join(upstream::UpstreamCall& call,
                                     const config::Deployment& deployment,
                                     const routing::PlannedGroup& stage) {
    if (winner_ || joined_ == kRunners) return std::nullopt;
    runners_[joined_] = {&call, &deployment, stage};
    return joined_++;
}

bool AttemptRace::Claim(int place, RequestContext& ctx) {
    if (winner_) return *winner_ == place;
    winner_ = place;
    for (int other = 0; other < joined_; ++other) {
        if (other != place && runners_[other].call != nullptr) runners_[other].call->Abort();
    }
    const Runner& won = runners_[place];
    const config::Deployment& deployment = *won.deployment;
    ctx.model_group = won.stage.group->name;
    ctx.deployment = deployment.name;
    ctx.region = deployment.region;
    ctx.model = deployment.model;
    ctx.record.fallback_depth = won.stage.depth;
    ctx.upstream_request_id.clear();
    ctx.record.hedge_answered = place > 0;
    if (won.call != nullptr) {  // it has its response head: it is about to answer
        const auto& header = won.call->Header();
        const auto id = header.find(providers::RequestIdHeader(deployment.provider));
        if (id != header.end()) ctx.upstream_request_id = std::string(id->value());
    }
    return true;
}

}  // namespace switchyard::server
