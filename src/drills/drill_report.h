#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

// A drill's results, and its report in the three forms `switchyard drill` writes
// (docs/drills.md#the-report).
namespace switchyard::drills {

// How one case went on one entry.
struct CaseResult {
    std::string id;
    bool passed = false;
    // The call was not made (the drill's cost cap, no headroom in time): not passed either.
    bool skipped = false;
    unsigned status = 0;             // the provider's HTTP status; 0: no answer
    std::string error_class;         // the classifier's name for a failed call (policy::Name)
    std::string error;               // what went wrong with the call, or why it was skipped
    std::vector<std::string> unmet;  // expectations the answer broke
    double latency_ms = 0;
    std::int64_t input_tokens = -1;  // -1: not reported
    std::int64_t output_tokens = -1;
    std::optional<double> cost;  // USD at the deployment's prices; nullopt: no usage reported
    std::string served_model;    // the `model` the provider's answer names
};

// How every case went on one entry.
struct EntryReport {
    std::string group;
    std::string deployment;
    std::string model;  // the model the deployment sends upstream
    std::string stage;  // primary, fallback, context_window, content_policy
    int depth = 0;
    int passed = 0;
    int failed = 0;  // skipped cases count as failed: the entry was not shown to work
    std::vector<CaseResult> cases;
};

// One drill of a group: every entry of its chain against every case.
struct DrillReport {
    std::string group;
    std::int64_t started = 0;  // Unix seconds
    double seconds = 0;        // how long it ran
    double cost = 0;           // USD spent, as far as usage was reported
    std::vector<EntryReport> entries;

    bool Passed() const {
        for (const EntryReport& entry : entries) {
            if (entry.failed > 0) return false;
        }
        return !entries.empty();
    }
};

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
