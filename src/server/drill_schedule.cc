#include "server/drill_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "api/usage.h"
#include "drills/drill_report.h"

namespace switchyard::server {
namespace {

using std::chrono::milliseconds;

// How long a drill's call may wait for headroom before it is skipped.
constexpr milliseconds kHeadroomPatience{60'000};
// How often the schedule looks for a drill that is due.
constexpr milliseconds kTick{1'000};

std::string KeyOf(const config::DrillConfig& drill) {
    return drill.group + '\n' + drill.cases_path;
}

}  // namespace

DrillSchedule::DrillSchedule(ServerContext& context)
    : context_(context),
      ioc_(1),
      watchdog_(ioc_.get_executor(), context.clock),
      pool_(ioc_.get_executor(), context.tls, context.metrics, watchdog_) {}

DrillSchedule::~DrillSchedule() { Stop(); }

void DrillSchedule::Start() {
    asio::co_spawn(ioc_, Loop(), [this](const std::exception_ptr& error) {
        if (error) {
            try {
                std::rethrow_exception(error);
            } catch (const std::exception& e) {
                fmt::print(stderr, "drills: stopped: {}\n", e.what());
            }
        }
        ioc_.stop();  // the watchdog's loop ends with it
    });
    thread_ = std::thread([this] { ioc_.run(); });
}

void DrillSchedule::Stop() {
    if (!thread_.joinable()) return;
    asio::post(ioc_, [this] {
        stopping_ = true;
        watchdog_.ExpireAll();  // calls in flight end now, as timeouts
    });
    thread_.join();
}

std::string DrillSchedule::LastReports() const {
    std::lock_guard lock(reports_mutex_);
    std::string out = "{\"drills\":[";
    bool first = true;
    for (const auto& [key, report] : reports_) {
        if (!first) out += ',';
        first = false;
        out += report;
    }
    out += "]}";
    return out;
}

asio::awaitable<void> DrillSchedule::Loop() {
    asio::steady_timer timer(ioc_);
    while (!stopping_) {
        const std::shared_ptr<Runtime> runtime = context_.runtime.Current();
        // A reload may have removed drills: what they left behind goes (runs, reports, gauges).
        std::vector<std::string> keys, groups;
        for (const config::DrillConfig& drill : runtime->config->drills) {
            keys.push_back(KeyOf(drill));
            groups.push_back(drill.group);
        }
        const auto gone = [&](const auto& item) {
            return std::find(keys.begin(), keys.end(), item.first) == keys.end();
        };
        std::erase_if(last_run_, gone);
        {
            std::lock_guard lock(reports_mutex_);
            std::erase_if(reports_, gone);
        }
        context_.metrics.KeepDrillGroups(groups);
        for (const config::DrillConfig& drill : runtime->config->drills) {
            if (stopping_) break;
            // Due at once when new, then `every` after its last run (as the config now says).
            const auto last = last_run_.find(KeyOf(drill));
            if (last != last_run_.end() && context_.clock.Now() < last->second + drill.every) {
                continue;
            }
            co_await RunDrill(runtime, drill);
            last_run_[KeyOf(drill)] = context_.clock.Now();
        }
        timer.expires_after(kTick);
        co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    }
}

asio::awaitable<drills::Admission> DrillSchedule::Admit(std::shared_ptr<Runtime> runtime,
                                                        std::size_t lane,
                                                        const drills::DrillEntry& entry,
                                                        const drills::DrillCase& drill_case) {
    const std::size_t index = entry.deployment->index;
    const core::Clock& clock = context_.clock;
    if (!runtime->config->limits.self_throttle) co_return drills::Admission{};
    // What production reserves for the same request (engine/executor.cc).
    const limits::HeadroomCost cost =
        limits::CostOf(entry.deployment->provider, api::EstimateInputTokens(drill_case.body),
                       drill_case.max_tokens);
    const auto give_up = clock.Now() + kHeadroomPatience;
    asio::steady_timer timer(ioc_);
    while (!stopping_) {
        const auto now = clock.Now();
        const limits::Lanes::Grant grant = runtime->lanes->Share(lane, now);
        const milliseconds wait =
            runtime->headroom->TryReserve(index, cost, grant.share, now, lane, grant.ramp);
        if (wait == milliseconds(0)) {
            drills::Admission admitted;
            admitted.settle = [runtime, index, cost, &clock](const drills::CaseResult& result) {
                runtime->headroom->Settle(index, cost, result.status >= 200 && result.status < 300,
                                          result.input_tokens, result.output_tokens, clock.Now());
            };
            admitted.release = [runtime, index, cost, &clock] {
                runtime->headroom->Cancel(index, cost, clock.Now());
            };
            co_return admitted;
        }
        if (wait > give_up - now) break;
        timer.expires_after(std::min(wait, kTick));
        co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    drills::Admission refused;
    refused.admitted = false;
    refused.reason = stopping_ ? "the gateway stops" : "no headroom for the drill's lane in time";
    co_return refused;
}

asio::awaitable<void> DrillSchedule::RunDrill(std::shared_ptr<Runtime> runtime,
                                              const config::DrillConfig& drill) {
    const config::Config& config = *runtime->config;
    const config::ModelGroup* group = config.FindGroup(drill.group);
    const drills::CaseFile cases = drills::ParseCases(drill.cases, drill.group);
    if (group == nullptr || !cases.problems.empty()) co_return;  // the loader refused these
    if (!watchdog_started_) {
        // Its ticks are only worth having once there is a drill to run.
        watchdog_.Start();
        watchdog_started_ = true;
    }
    const std::size_t lane = drill.lane.empty() ? config.limits.lanes.size() - 1
                                                : config.limits.FindLane(drill.lane).value_or(0);
    drills::DrillOptions options;
    options.concurrency = drill.concurrency;
    options.max_cost = drill.max_cost;
    const drills::Admit admit = [this, runtime, lane](const drills::DrillEntry& entry,
                                                      const drills::DrillCase& drill_case) {
        return Admit(runtime, lane, entry, drill_case);
    };
    const drills::DrillReport report = co_await drills::RunDrill(
        pool_, context_.clock, config, *group, cases.cases, options, admit);
    if (stopping_) co_return;  // cut short: no result to report
    std::vector<std::pair<std::string, int>> failing_cases;
    for (const drills::EntryReport& entry : report.entries) {
        for (const drills::CaseResult& result : entry.cases) {
            context_.metrics.CountDrillCase(report.group, entry.deployment,
                                            result.passed    ? "passed"
                                            : result.skipped ? "skipped"
                                                             : "failed");
        }
        failing_cases.emplace_back(entry.deployment, entry.failed);
    }
    context_.metrics.SetDrillRun(
        report.group, failing_cases,
        std::chrono::duration<double>(context_.clock.WallNow().time_since_epoch()).count());
    int failing = 0;
    for (const drills::EntryReport& entry : report.entries) failing += entry.failed > 0 ? 1 : 0;
    fmt::print(stderr,
               "drill {}: {} of {} entries passed every case ({} cases, ${:.6f}, {:.1f} s)\n",
               report.group, report.entries.size() - static_cast<std::size_t>(failing),
               report.entries.size(), cases.cases.size(), report.cost, report.seconds);
    std::lock_guard lock(reports_mutex_);
    reports_[KeyOf(drill)] = drills::ReportJson(report);
}

}  // namespace switchyard::server
