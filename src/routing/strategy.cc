#include "routing/strategy.h"

#include <algorithm>
#include <type_traits>
#include <utility>

#include "routing/weighted_pick.h"

namespace switchyard::routing {
namespace {

using Order = std::vector<const config::Deployment*>;

// A uniformly random permutation (Fisher-Yates), so ties in the sorts below are broken fairly.
Order Shuffled(const config::ModelGroup& group, const std::function<double()>& uniform) {
    Order order;
    for (const auto& d : group.deployments) order.push_back(&d);
    for (std::size_t i = order.size(); i > 1; --i) {
        const auto j =
            std::min(i - 1, static_cast<std::size_t>(uniform() * static_cast<double>(i)));
        std::swap(order[i - 1], order[j]);
    }
    return order;
}

// Sorted by `key`, read once per deployment before sorting: the keys are shared state other
// requests change meanwhile, and a comparator whose answers change mid-sort is undefined
// behaviour (std::stable_sort then runs off the end of the vector).
template <class Key>
Order SortedBy(Order order, Key key) {
    using Value = std::invoke_result_t<Key&, const config::Deployment*>;
    std::vector<std::pair<Value, const config::Deployment*>> keyed;
    keyed.reserve(order.size());
    for (const auto* d : order) keyed.emplace_back(key(d), d);
    std::stable_sort(keyed.begin(), keyed.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t i = 0; i < keyed.size(); ++i) order[i] = keyed[i].second;
    return order;
}

}  // namespace

std::vector<const config::Deployment*> OrderDeployments(const config::ModelGroup& group,
                                                        const DeploymentHealth& health,
                                                        const std::function<double()>& uniform) {
    const auto in_flight = [&](const config::Deployment* d) { return health.InFlight(d->index); };
    switch (group.strategy) {
        case config::Strategy::kWeighted:
            return WeightedOrder(group, uniform);
        case config::Strategy::kPriority: {
            Order order;
            for (const auto& d : group.deployments) order.push_back(&d);
            return order;
        }
        case config::Strategy::kLeastInFlight:
            return SortedBy(Shuffled(group, uniform), in_flight);
        case config::Strategy::kLowestLatency:
            // A deployment without a measurement goes first, so every one gets measured.
            // EwmaTtftMs is -1 before the first measurement, below any measured average.
            return SortedBy(Shuffled(group, uniform), [&](const config::Deployment* d) {
                return health.EwmaTtftMs(d->index);
            });
        case config::Strategy::kCheapest: {
            Order order;
            for (const auto& d : group.deployments) order.push_back(&d);
            return SortedBy(order, [](const config::Deployment* d) {
                return d->input_price + d->output_price;
            });
        }
        case config::Strategy::kPowerOfTwo: {
            Order order = SortedBy(Shuffled(group, uniform), in_flight);
            if (order.size() < 2) return order;
            // Two random choices, the less loaded first (Mitzenmacher); the rest by load.
            Order pair = Shuffled(group, uniform);
            const config::Deployment* first =
                in_flight(pair[1]) < in_flight(pair[0]) ? pair[1] : pair[0];
            order.erase(std::find(order.begin(), order.end(), first));
            order.insert(order.begin(), first);
            return order;
        }
    }
    return WeightedOrder(group, uniform);
}

}  // namespace switchyard::routing
