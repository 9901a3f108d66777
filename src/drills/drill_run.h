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
#include "drills/drill_report.h"
#include "upstream/connection_pool.h"

namespace switchyard::drills {

struct DrillOptions {
    int concurrency = 4;    // calls in flight at once
    double max_cost = 1.0;  // USD; no call starts once the drill has spent this much (0: no cap)
};

// What lets a call go (the scheduled drills wait for the headroom traffic leaves): `admitted`
// false skips the case with `reason`; `settle`, when set, is told how the call went, and
// `release`, when set, gives back what was reserved for a call that is not made after all.
struct Admission {
    bool admitted = true;
    std::string reason;
    std::function<void(const CaseResult&)> settle;
    std::function<void()> release;
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
