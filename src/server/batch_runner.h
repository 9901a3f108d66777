#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <variant>

#include "batches/batch_job.h"
#include "batches/batch_lines.h"
#include "batches/batch_records.h"
#include "batches/file_store.h"
#include "core/asio.h"
#include "server/durable_state.h"
#include "server/server.h"
#include "server/server_context.h"
#include "upstream/connection_pool.h"
#include "upstream/watchdog.h"

namespace switchyard::server {

// The outcome of work on the durable store's thread: its value, or why it failed.
template <class T>
struct Stored {
    std::optional<T> value;
    std::string error;
};

// Runs `work` on the store's thread; an exception there (a full disk, a file that cannot be
// read) comes back as the error.
template <class T>
asio::awaitable<Stored<T>> OnStore(DurableState& store,
                                   std::function<T(state::DurableStore&)> work) {
    std::function<Stored<T>(state::DurableStore&)> guarded =
        [work = std::move(work)](state::DurableStore& s) -> Stored<T> {
        try {
            return {work(s), {}};
        } catch (const std::exception& e) {
            return {std::nullopt, e.what()};
        }
    };
    co_return co_await store.OnWriter(std::move(guarded));
}

// Runs batch jobs in gateway mode (docs/batches.md#how-a-job-runs-on-the-gateway): each job's lines
// are read from its input file on disk as a stream and sent, a few at a time (batches.concurrency),
// to this gateway's own listener as requests of the job's owner on the batch lane — so they take
// the whole attempt engine (retries, fallbacks, translation, headroom, the key's limits and spend)
// and only the headroom interactive traffic leaves. A line the gateway sheds or rate-limits waits
// and is sent again; one it answers 5xx is tried batches.line_attempts times. Results are written
// to the durable store as lines end, with the point every earlier line has passed, so a restart (or
// a kill) resumes each job there and every custom_id ends once. A finished job's results become its
// output files. Its own thread and event loop; the public functions are thread-safe.
class BatchRunner final {
  public:
    BatchRunner(ServerContext& context, DurableState& store,
                std::unique_ptr<batches::FileStore> files, std::string host, std::uint16_t port);
    ~BatchRunner();
    BatchRunner(const BatchRunner&) = delete;
    BatchRunner& operator=(const BatchRunner&) = delete;

    batches::FileStore& Files() { return *files_; }
    DurableState& Store() { return store_; }

    // Starts the thread and resumes every job the store holds that has not ended.
    void Start();
    // A new job (already in the store) to run.
    void Run(std::string id);
    // Cancels a job: no new lines start; lines in flight finish; the rest end canceled. The
    // job as it then stands (nullopt: unknown). Resumes the caller on its own executor.
    asio::awaitable<std::optional<batches::BatchJob>> Cancel(std::string id);
    // No new lines start; waits for the lines in flight and writes their results (at shutdown,
    // after the drain, before the store stops).
    void Stop();

  private:
    // One job running: its state on the runner's thread.
    struct JobRun {
        explicit JobRun(asio::io_context& ioc, batches::BatchJob j)
            : job(std::move(j)), all_done(ioc), watch(ioc) {}

        batches::BatchJob job;
        // The job as its last written results left it (what Save writes of counts and cursor).
        batches::BatchJob committed;
        // Why lines stop starting: the job was cancelled, its window ended, or the gateway stops.
        enum class Halt { kNone, kCancel, kExpire, kStop } halt = Halt::kNone;
        std::unique_ptr<batches::LineReader> reader;
        std::int64_t next_line = 0;       // the number the reader's next line gets
        std::vector<std::int64_t> ended;  // lines at or after the cursor with a result (resumed)
        std::map<std::int64_t, std::int64_t> in_flight;  // line -> its offset
        std::vector<batches::LineResult> pending;        // results not yet written
        bool committing = false;
        int slots = 0;
        asio::steady_timer all_done;  // cancelled when the last slot ends
        asio::steady_timer watch;     // the completion window's end
        std::mt19937_64 rng{SystemSeed()};
    };
    struct Slot;

    asio::awaitable<void> RunJob(std::shared_ptr<JobRun> run);
    asio::awaitable<bool> Validate(JobRun& run);
    asio::awaitable<void> RunSlot(std::shared_ptr<JobRun> run);
    asio::awaitable<void> Commit(std::shared_ptr<JobRun> run);
    asio::awaitable<bool> Save(const JobRun& run);
    asio::awaitable<void> EndUnrun(JobRun& run);
    asio::awaitable<void> Finalize(JobRun& run);
    asio::awaitable<void> Watch(std::shared_ptr<JobRun> run);
    // A line ended: counted in its job and in the metrics.
    enum class LineEnd { kSucceeded, kFailed, kCanceled, kExpired };
    void CountLine(JobRun& run, LineEnd end);
    static LineEnd EndOf(batches::Unrun why);
    // Waits `wait`, or less when the job halts or the gateway drains.
    asio::awaitable<void> Pause(const JobRun& run, std::chrono::milliseconds wait);
    std::int64_t Now() const;

    // On the provider's batch API (batch_provider.cc).
    enum class ProviderOutcome { kDone, kRefused, kStopped };
    // The deployment whose batch API takes the job; null: the gateway runs it.
    static const config::Deployment* ProviderDeployment(const config::Config& config,
                                                        const batches::BatchJob& job);
    asio::awaitable<ProviderOutcome> RunOnProvider(std::shared_ptr<JobRun> run,
                                                   std::shared_ptr<const config::Config> config);
    asio::awaitable<bool> SubmitToProvider(std::shared_ptr<JobRun> run,
                                           const config::Deployment& deployment);
    // False when the gateway stops before the results were read whole.
    asio::awaitable<bool> TakeProviderResults(std::shared_ptr<JobRun> run,
                                              const config::Deployment& deployment,
                                              std::vector<std::string> targets, bool expired);
    struct ProviderAnswer {
        unsigned status = 0;  // 0: no answer (error says why)
        std::string body;
        std::string error;
    };
    struct ProviderRequest {
        std::string method;
        std::string target;  // after the deployment's path prefix
        std::string body;
        std::string content_type;
    };
    // Pass a named request: g++ 12 may mishandle a temporary argument of a coroutine.
    asio::awaitable<ProviderAnswer> CallProvider(const config::Deployment& deployment,
                                                 const ProviderRequest& call);
    // Reads a provider's JSONL answer line by line, bounded by one line's size.
    asio::awaitable<bool> ReadProviderLines(std::shared_ptr<JobRun> run,
                                            const config::Deployment& deployment,
                                            std::string target,
                                            const std::function<void(std::string_view)>& line);

    ServerContext& context_;
    DurableState& store_;
    std::unique_ptr<batches::FileStore> files_;
    const std::string host_;
    const std::uint16_t port_;
    asio::io_context ioc_;
    std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
    // The provider batch APIs' connections, on this thread.
    upstream::Watchdog watchdog_;
    upstream::ConnectionPool pool_;
    std::thread thread_;
    // On the runner's thread only.
    std::map<std::string, std::shared_ptr<JobRun>> jobs_;
    std::set<std::string> cancels_;  // cancelled while not running here
    bool stopping_ = false;
};

}  // namespace switchyard::server
