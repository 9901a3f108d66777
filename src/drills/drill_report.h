#pragma once

#include <string>

#include "drills/drill_run.h"

// A drill's report in the three forms `switchyard drill` writes (docs/drills.md#the-report).
namespace switchyard::drills {

// {"group", "passed", "started", "seconds", "cost", "entries": [{"group", "deployment", "model",
// "stage", "depth", "passed", "failed", "cases": [{"id", "passed", "skipped", "status",
// "error_class", "error", "unmet", "latency_ms", "input_tokens", "output_tokens", "cost",
// "served_model"}]}]}
std::string ReportJson(const DrillReport& report);

// The table printed on stdout: one row per entry, then one line per failed case.
std::string ReportTable(const DrillReport& report);

// A self-contained HTML page: the entries against the cases, each cell passed or failed with
// the reason on hover.
std::string ReportHtml(const DrillReport& report);

}  // namespace switchyard::drills
