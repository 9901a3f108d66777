#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/asio.h"
#include "drills/drill_run.h"
#include "server/server_context.h"
#include "upstream/connection_pool.h"
#include "upstream/watchdog.h"

namespace switchyard::server {

// Runs the config's scheduled fallback drills (docs/drills.md#scheduled-drills): each `drills:`
// entry as soon as the gateway serves (or a reload brings it), then `every` after its last run,
// one drill at a time, each call in the
// drill's lane at the headroom that traffic leaves (a call that finds none within a minute is
// skipped). Calls go through their own connections and are never counted in a deployment's health,
// retry budget or latency: they are not traffic. Results go to the metrics and to /admin/drills.
// Follows config reloads. Its own thread and event loop; the public functions are thread-safe.
class DrillSchedule final {
  public:
    explicit DrillSchedule(ServerContext& context);
    ~DrillSchedule();
    DrillSchedule(const DrillSchedule&) = delete;
    DrillSchedule& operator=(const DrillSchedule&) = delete;

    void Start();
    // No new call starts; the thread ends once the calls in flight end.
    void Stop();

    // The last report of every drill that ran, as {"drills": [report, ...]} (drills::ReportJson).
    std::string LastReports() const;

  private:
    asio::awaitable<void> Loop();
    asio::awaitable<void> RunDrill(std::shared_ptr<Runtime> runtime,
                                   const config::DrillConfig& drill);
    asio::awaitable<drills::Admission> Admit(std::shared_ptr<Runtime> runtime, std::size_t lane,
                                             const drills::DrillEntry& entry,
                                             const drills::DrillCase& drill_case);

    ServerContext& context_;
    asio::io_context ioc_;
    upstream::Watchdog watchdog_;
    upstream::ConnectionPool pool_;
    std::thread thread_;
    bool stopping_ = false;          // on the thread
    bool watchdog_started_ = false;  // on the thread
    // When each drill (group and cases file) last ran; on the thread.
    std::map<std::string, std::chrono::steady_clock::time_point> last_run_;
    mutable std::mutex reports_mutex_;
    std::map<std::string, std::string> reports_;  // drill -> its last report (JSON)
};

}  // namespace switchyard::server
