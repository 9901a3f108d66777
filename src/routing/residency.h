#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace switchyard::routing {

// The regions one request may be served in (docs/resilience.md#data-residency): every constraint
// that applies narrows it — the request's `x-switchyard-residency` header, its client key's
// `residency`, the `residency` of each model group it asked for. nullopt: no constraint, every
// deployment may serve; an empty list: none may.
using Regions = std::optional<std::vector<std::string>>;

// `allowed` narrowed by `constraint` (an empty constraint changes nothing).
Regions Narrow(Regions allowed, const std::vector<std::string>& constraint);

// Whether `deployment` may serve under `allowed`. A deployment without a region serves only
// requests without a constraint.
bool Admits(const Regions& allowed, const config::Deployment& deployment);

// "eu, us" for messages; "none" for an empty list.
std::string Describe(const std::vector<std::string>& regions);

// Reads a header value: region names separated by commas, blanks around them ignored, any case.
// nullopt when empty or when a name is not a region name (core::IsRegionName).
std::optional<std::vector<std::string>> ParseRegions(std::string_view text);

}  // namespace switchyard::routing
