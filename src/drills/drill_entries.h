#pragma once

#include <string_view>
#include <vector>

#include "config/config.h"

namespace switchyard::drills {

// One entry of a group's fallback chain as a drill calls it: a deployment as a member of a model
// group at a depth of the chain (depth > 0: the group's prompt and params apply, as in
// production).
struct DrillEntry {
    const config::ModelGroup* drilled = nullptr;  // the group whose chain this is
    const config::ModelGroup* group = nullptr;
    const config::Deployment* deployment = nullptr;
    int depth = 0;
    // How production reaches it: "primary" (the drilled group), "fallback", "context_window" or
    // "content_policy" (the semantic fallbacks).
    std::string_view stage = "primary";
};

// Every entry of `group`'s chain (docs/drills.md#what-a-drill-calls): its own deployments, then
// those of its fallback groups in chain order, then those of the context-window and
// content-policy fallbacks of every group in the chain; each group once, each deployment in the
// config's order, whatever its health or region. The static degradation is no entry.
std::vector<DrillEntry> EntriesOf(const config::Config& config, const config::ModelGroup& group);

}  // namespace switchyard::drills
