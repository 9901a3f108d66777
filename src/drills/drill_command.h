#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_loader.h"

namespace switchyard::drills {

// `switchyard drill --config FILE --group NAME --cases FILE.jsonl [--report FILE.json]
// [--html FILE.html] [--concurrency N] [--max-cost USD]` (docs/drills.md#running-a-drill): prints
// the table, writes the reports, and returns the exit status — 0 when every entry passed every
// case, 1 when one did not (or a case was skipped), 2 when the drill could not run (usage, config,
// cases). `load` reads a config file (the gateway's own or a LiteLLM one).
// The problems of the config's scheduled drills' cases files (each case line as ParseCases reads
// it), as config problems at the drill's line: a config with one is refused like any other.
std::vector<config::Problem> CaseProblems(const config::Config& config, std::string_view file);

int DrillCommand(const std::vector<std::string_view>& args,
                 const std::function<config::LoadResult(const std::string&)>& load);

}  // namespace switchyard::drills
