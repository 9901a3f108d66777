#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/asio.h"
#include "core/clock.h"
#include "drills/drill_call.h"
#include "drills/drill_case.h"
#include "drills/drill_entries.h"
#include "upstream/connection_pool.h"

namespace switchyard::drills {

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

struct DrillOptions {
    int concurrency = 4;    // calls in flight at once
    double max_cost = 1.0;  // USD; no call starts once the drill has spent this much (0: no cap)
};

// What lets a call go (the scheduled drills wait for the headroom traffic leaves): `admitted`
// false skips the case with `reason`; `settle`, when set, is told how the call went.
struct Admission {
    bool admitted = true;
    std::string reason;
    std::function<void(const CaseResult&)> settle;
};
using Admit =
    std::function<asio::awaitable<Admission>(const DrillEntry& entry, const DrillCase& drill_case)>;

// Runs `cases` on every entry of `group`'s chain (EntriesOf), at most `options.concurrency` calls
// at once, on the pool's executor (which must be single-threaded); `admit` (may be empty) is
// asked before each call. Entries are reported in chain order, cases in file order.
asio::awaitable<DrillReport> RunDrill(upstream::ConnectionPool& pool, const core::Clock& clock,
                                      const config::Config& config, const config::ModelGroup& group,
                                      const std::vector<DrillCase>& cases,
                                      const DrillOptions& options, const Admit& admit);

}  // namespace switchyard::drills
