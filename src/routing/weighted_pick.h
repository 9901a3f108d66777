#pragma once

#include <vector>

#include "config/config.h"

namespace switchyard::routing {

// All deployments of `group` in a random order where each position is drawn by weight among
// those not yet placed: the first is chosen with probability proportional to its weight, the rest
// are its fallbacks within the group. `uniform` returns draws from [0, 1).
template <class Uniform>
std::vector<const config::Deployment*> WeightedOrder(const config::ModelGroup& group,
                                                     Uniform&& uniform) {
    std::vector<const config::Deployment*> left;
    for (const auto& d : group.deployments) left.push_back(&d);
    std::vector<const config::Deployment*> order;
    while (!left.empty()) {
        double total = 0;
        for (const auto* d : left) total += d->weight;
        double point = uniform() * total;
        std::size_t chosen = left.size() - 1;
        for (std::size_t i = 0; i < left.size(); ++i) {
            if (point < left[i]->weight) {
                chosen = i;
                break;
            }
            point -= left[i]->weight;
        }
        order.push_back(left[chosen]);
        left.erase(left.begin() + static_cast<std::ptrdiff_t>(chosen));
    }
    return order;
}

}  // namespace switchyard::routing
