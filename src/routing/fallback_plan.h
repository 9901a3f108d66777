#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "policy/outcome.h"

namespace switchyard::routing {

// One model group in a request's fallback chain. Depth is its position in the chain: 0 is what the
// client asked for; a group at depth > 0 serves as a fallback entry (its prompt and params apply).
struct PlannedGroup {
    const config::ModelGroup* group = nullptr;
    int depth = 0;
};

// The ordered chain of groups for a request (docs/resilience.md#the-fallback-chain): the requested
// group — or each group of the request's `models` list — then the fallbacks: the request's
// `fallbacks` override when given, else the configured `fallbacks` of each group in turn.
// Duplicates are dropped; with `fallbacks_enabled` false the chain is just the requested groups.
// Names must exist.
std::vector<PlannedGroup> PlanGroups(const config::Config& config,
                                     const std::vector<std::string>& requested,
                                     const std::optional<std::vector<std::string>>& override,
                                     bool fallbacks_enabled);

// The semantic fallbacks of `group` for a context-window or content-policy outcome; the first
// gets `depth`, the next depth + 1, and so on.
std::vector<PlannedGroup> SemanticFallbacks(const config::Config& config,
                                            const config::ModelGroup& group, policy::Action action,
                                            int depth);

}  // namespace switchyard::routing
