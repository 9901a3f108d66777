#include "routing/weighted_pick.h"

namespace switchyard::routing {

const config::Deployment& PickWeighted(const config::ModelGroup& group, double uniform) {
    double total = 0;
    for (const auto& d : group.deployments) total += d.weight;
    double point = uniform * total;
    for (const auto& d : group.deployments) {
        if (point < d.weight) return d;
        point -= d.weight;
    }
    return group.deployments.back();  // rounding at the top end
}

}  // namespace switchyard::routing
