#include "drills/drill_run.h"

#include <chrono>
#include <memory>

namespace switchyard::drills {
namespace {

// The drill's shared state on its (single) thread.
struct Progress {
    const std::vector<DrillEntry>& entries;
    const std::vector<DrillCase>& cases;
    std::vector<std::vector<CaseResult>> results;  // per entry, per case
    std::size_t next = 0;                          // the next (entry, case) pair, row by row
    double spent = 0;
};

CaseResult Skipped(const DrillCase& drill_case, std::string reason) {
    CaseResult result;
    result.id = drill_case.id;
    result.skipped = true;
    result.error = std::move(reason);
    return result;
}

// One of the drill's `concurrency` callers: takes the next pair until none is left.
asio::awaitable<void> Caller(upstream::ConnectionPool& pool, const core::Clock& clock,
                             const config::Config& config, const DrillOptions& options,
                             const Admit& admit, Progress& progress) {
    const std::size_t total = progress.entries.size() * progress.cases.size();
    while (progress.next < total) {
        const std::size_t pair = progress.next++;
        const DrillEntry& entry = progress.entries[pair / progress.cases.size()];
        const DrillCase& drill_case = progress.cases[pair % progress.cases.size()];
        CaseResult& slot =
            progress.results[pair / progress.cases.size()][pair % progress.cases.size()];
        if (options.max_cost > 0 && progress.spent >= options.max_cost) {
            slot = Skipped(drill_case, "the drill's cost cap was reached");
            continue;
        }
        Admission admission;
        if (admit) admission = co_await admit(entry, drill_case);
        if (!admission.admitted) {
            slot = Skipped(drill_case, admission.reason);
            continue;
        }
        // Other callers may have spent the rest while this one waited to be admitted.
        if (options.max_cost > 0 && progress.spent >= options.max_cost) {
            if (admission.release) admission.release();
            slot = Skipped(drill_case, "the drill's cost cap was reached");
            continue;
        }
        try {
            slot = co_await CallEntry(pool, clock, config, entry, drill_case);
        } catch (const std::exception& e) {
            // Nothing a provider sends should get here; if it does, the case says so.
            slot = CaseResult{};
            slot.id = drill_case.id;
            slot.error_class = "local";
            slot.error = std::string("the drill failed: ") + e.what();
        }
        if (slot.cost) progress.spent += *slot.cost;
        if (admission.settle) admission.settle(slot);
    }
}

}  // namespace

asio::awaitable<DrillReport> RunDrill(upstream::ConnectionPool& pool, const core::Clock& clock,
                                      const config::Config& config, const config::ModelGroup& group,
                                      const std::vector<DrillCase>& cases,
                                      const DrillOptions& options, const Admit& admit) {
    DrillReport report;
    report.group = group.name;
    report.started =
        std::chrono::duration_cast<std::chrono::seconds>(clock.WallNow().time_since_epoch())
            .count();
    const auto started = clock.Now();
    const std::vector<DrillEntry> entries = EntriesOf(config, group);
    Progress progress{entries, cases, {}, 0, 0};
    progress.results.assign(entries.size(), std::vector<CaseResult>(cases.size()));
    if (!cases.empty()) {
        // The callers run on this thread; the last to end wakes the drill.
        const int callers = std::max(
            1, std::min<int>(options.concurrency, static_cast<int>(entries.size() * cases.size())));
        auto executor = co_await asio::this_coro::executor;
        asio::steady_timer all_done(executor, asio::steady_timer::time_point::max());
        auto running = std::make_shared<int>(callers);
        for (int i = 0; i < callers; ++i) {
            asio::co_spawn(executor, Caller(pool, clock, config, options, admit, progress),
                           [running, &all_done](const std::exception_ptr&) {
                               if (--*running == 0) all_done.cancel();
                           });
        }
        if (*running > 0) co_await all_done.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    for (std::size_t i = 0; i < entries.size(); ++i) {
        EntryReport entry;
        entry.group = entries[i].group->name;
        entry.deployment = entries[i].deployment->name;
        entry.model = entries[i].deployment->model;
        entry.stage = std::string(entries[i].stage);
        entry.depth = entries[i].depth;
        entry.cases = std::move(progress.results[i]);
        for (const CaseResult& result : entry.cases) {
            ++(result.passed ? entry.passed : entry.failed);
        }
        report.entries.push_back(std::move(entry));
    }
    report.cost = progress.spent;
    report.seconds = std::chrono::duration<double>(clock.Now() - started).count();
    co_return report;
}

}  // namespace switchyard::drills
