#include "server/batch_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <random>
#include <unordered_set>
#include <vector>

#include "batches/batch_lines.h"
#include "batches/batch_records.h"
#include "server/admission.h"

namespace switchyard::server {
namespace {

using batches::BatchJob;
using batches::LineResult;
using batches::Status;
using std::chrono::milliseconds;

namespace records = batches::records;

// A line's request goes to the listener on loopback when it listens on every address.
std::string LoopbackFor(const std::string& host) {
    if (host.empty() || host == "0.0.0.0") return "127.0.0.1";
    if (host == "::" || host == "[::]") return "::1";
    return host;
}

// How long an answer asked a client to wait (retry-after-ms, else retry-after in seconds).
milliseconds RetryAfterOf(const http::response<http::string_body>& response) {
    const auto parse = [](std::string_view text) -> long long {
        long long n = 0;
        for (const char c : text) {
            if (c < '0' || c > '9') return -1;
            n = n * 10 + (c - '0');
            if (n > 86'400'000) return n;
        }
        return text.empty() ? -1 : n;
    };
    if (const auto it = response.find("retry-after-ms"); it != response.end()) {
        if (const long long ms = parse(it->value()); ms >= 0) return milliseconds(ms);
    }
    if (const auto it = response.find(http::field::retry_after); it != response.end()) {
        if (const long long s = parse(it->value()); s >= 0) return milliseconds(s * 1000);
    }
    return milliseconds(0);
}

}  // namespace

// One connection to the gateway's own listener, for one line at a time.
struct BatchRunner::Slot {
    std::optional<beast::tcp_stream> stream;
};

BatchRunner::BatchRunner(ServerContext& context, DurableState& store,
                         std::unique_ptr<batches::FileStore> files, std::string host,
                         std::uint16_t port)
    : context_(context),
      store_(store),
      files_(std::move(files)),
      host_(LoopbackFor(host)),
      port_(port),
      ioc_(1),
      watchdog_(ioc_.get_executor(), context.clock),
      pool_(ioc_.get_executor(), context.tls, context.metrics, watchdog_) {}

BatchRunner::~BatchRunner() { Stop(); }

std::int64_t BatchRunner::Now() const {
    return std::chrono::duration_cast<std::chrono::seconds>(
               context_.clock.WallNow().time_since_epoch())
        .count();
}

void BatchRunner::Start() {
    work_.emplace(ioc_.get_executor());
    watchdog_.Start();
    asio::co_spawn(
        ioc_,
        [this]() -> asio::awaitable<void> {
            std::function<std::vector<BatchJob>(state::DurableStore&)> load =
                [](state::DurableStore& s) { return records::RunningJobs(s.Database()); };
            const Stored<std::vector<BatchJob>> jobs = co_await OnStore(store_, std::move(load));
            if (!jobs.value) {
                fmt::print(stderr, "switchyard: batches: cannot read the running jobs: {}\n",
                           jobs.error);
                co_return;
            }
            if (!jobs.value->empty()) {
                fmt::print(stderr, "switchyard: batches: resuming {} job(s)\n", jobs.value->size());
            }
            for (const BatchJob& job : *jobs.value) Run(job.id);
        },
        asio::detached);
    thread_ = std::thread([this] { ioc_.run(); });
}

void BatchRunner::Run(std::string id) {
    asio::co_spawn(
        ioc_,
        [this, id = std::move(id)]() -> asio::awaitable<void> {
            if (stopping_ || jobs_.contains(id)) co_return;
            std::function<std::optional<BatchJob>(state::DurableStore&)> load =
                [id](state::DurableStore& s) { return records::GetJob(s.Database(), id); };
            const Stored<std::optional<BatchJob>> job = co_await OnStore(store_, std::move(load));
            if (!job.value || !*job.value || batches::Ended((*job.value)->status)) co_return;
            if (stopping_ || jobs_.contains(id)) co_return;
            auto run = std::make_shared<JobRun>(ioc_, std::move(**job.value));
            run->committed = run->job;
            if (cancels_.erase(id) > 0 && run->job.status != Status::kCancelling &&
                run->job.status != Status::kFinalizing) {
                run->job.status = Status::kCancelling;
                run->job.cancelling_s = Now();
            }
            if (run->job.status == Status::kCancelling) run->halt = JobRun::Halt::kCancel;
            jobs_[id] = run;
            context_.metrics.AddBatchJobsRunning(1);
            std::string failure;
            try {
                co_await RunJob(run);
            } catch (const std::exception& e) {
                failure = e.what();
            }
            if (!failure.empty()) {
                // A job that cannot go on (its input file gone, say) fails; it never hangs.
                fmt::print(stderr, "switchyard: batches: {} failed: {}\n", id, failure);
                run->job.errors.push_back({{"code", "internal_error"},
                                           {"message", "The job failed: " + failure},
                                           {"param", nullptr},
                                           {"line", nullptr}});
                run->job.status = Status::kFailed;
                run->job.failed_s = Now();
                run->committed = run->job;
                co_await Save(*run);
            }
            run->watch.cancel();
            context_.metrics.AddBatchJobsRunning(-1);
            if (batches::Ended(run->job.status)) {
                static constexpr Status kEnded[] = {Status::kCompleted, Status::kFailed,
                                                    Status::kExpired, Status::kCancelled};
                for (std::size_t i = 0; i < std::size(kEnded); ++i) {
                    if (kEnded[i] == run->job.status) context_.metrics.CountBatchJobEnded(i);
                }
            }
            jobs_.erase(id);
            if (stopping_ && jobs_.empty()) ioc_.stop();
        },
        asio::detached);
}

asio::awaitable<std::optional<BatchJob>> BatchRunner::Cancel(std::string id) {
    auto cancel = [this, id = std::move(id)]() -> asio::awaitable<std::optional<BatchJob>> {
        const auto it = jobs_.find(id);
        if (it == jobs_.end()) {
            // Not running here (yet, or not now): the cancel is written, and a run that starts
            // meanwhile reads it (cancels_).
            cancels_.insert(id);
            std::function<std::optional<BatchJob>(state::DurableStore&)> mark =
                [id, now = Now()](state::DurableStore& s) -> std::optional<BatchJob> {
                std::optional<BatchJob> job = records::GetJob(s.Database(), id);
                if (!job || batches::Ended(job->status) || job->status == Status::kFinalizing ||
                    job->status == Status::kCancelling) {
                    return job;
                }
                job->status = Status::kCancelling;
                job->cancelling_s = now;
                records::PutJob(s.Database(), *job);
                return job;
            };
            const Stored<std::optional<BatchJob>> job = co_await OnStore(store_, std::move(mark));
            co_return job.value ? *job.value : std::nullopt;
        }
        const std::shared_ptr<JobRun> run = it->second;
        // A job that is writing its output files has run every line: the cancel comes too late.
        if (!batches::Ended(run->job.status) && run->job.status != Status::kFinalizing &&
            run->halt == JobRun::Halt::kNone) {
            run->halt = JobRun::Halt::kCancel;
            run->job.status = Status::kCancelling;
            run->job.cancelling_s = Now();
            co_await Save(*run);
        }
        co_return run->job;
    };
    co_return co_await asio::co_spawn(ioc_, std::move(cancel), asio::use_awaitable);
}

void BatchRunner::Stop() {
    if (!thread_.joinable()) return;
    asio::post(ioc_, [this] {
        stopping_ = true;
        for (auto& [id, run] : jobs_) {
            if (run->halt == JobRun::Halt::kNone) run->halt = JobRun::Halt::kStop;
            run->watch.cancel();
        }
        // The watchdog ticks for ever: the loop ends once the last job has.
        if (jobs_.empty()) ioc_.stop();
    });
    work_.reset();
    thread_.join();
}

asio::awaitable<bool> BatchRunner::Save(const JobRun& run) {
    // The job as it stands, with what its written results say: counts, tokens and cursor as of
    // the last commit (a line whose result is not written yet must run again after a crash, and
    // count once).
    BatchJob job = run.job;
    job.counts = run.committed.counts;
    job.input_tokens = run.committed.input_tokens;
    job.output_tokens = run.committed.output_tokens;
    job.cursor_line = run.committed.cursor_line;
    job.cursor_offset = run.committed.cursor_offset;
    std::function<bool(state::DurableStore&)> put = [job](state::DurableStore& s) {
        records::PutJob(s.Database(), job);
        return true;
    };
    const Stored<bool> saved = co_await OnStore(store_, std::move(put));
    if (!saved.value) {
        fmt::print(stderr, "switchyard: batches: cannot save {}: {}\n", job.id, saved.error);
    }
    co_return saved.value.has_value();
}

asio::awaitable<void> BatchRunner::Watch(std::shared_ptr<JobRun> run) {
    const std::int64_t left = run->job.ExpiresAt() - Now();
    run->watch.expires_after(std::chrono::seconds(std::max<std::int64_t>(left, 0)));
    auto [ec] = co_await run->watch.async_wait(kTuple);
    if (ec || batches::Ended(run->job.status)) co_return;
    if (run->halt == JobRun::Halt::kNone || run->halt == JobRun::Halt::kCancel) {
        run->halt = JobRun::Halt::kExpire;
    }
}

BatchRunner::LineEnd BatchRunner::EndOf(batches::Unrun why) {
    return why == batches::Unrun::kExpired ? LineEnd::kExpired : LineEnd::kCanceled;
}

void BatchRunner::CountLine(JobRun& run, LineEnd end) {
    batches::LineCounts& counts = run.job.counts;
    switch (end) {
        case LineEnd::kSucceeded:
            ++counts.succeeded;
            break;
        case LineEnd::kFailed:
            ++counts.failed;
            break;
        case LineEnd::kCanceled:
            ++counts.canceled;
            break;
        case LineEnd::kExpired:
            ++counts.expired;
            break;
    }
    context_.metrics.CountBatchLine(run.job.mode == "provider", static_cast<std::size_t>(end));
}

asio::awaitable<void> BatchRunner::Pause(const JobRun& run, milliseconds wait) {
    // In slices: a cancel, the window's end or a stop ends the wait.
    for (milliseconds left = wait; left.count() > 0;) {
        if (run.halt != JobRun::Halt::kNone || context_.draining.load() || stopping_) break;
        const milliseconds slice = std::min(left, milliseconds(200));
        asio::steady_timer pause(ioc_, slice);
        co_await pause.async_wait(kTuple);
        left -= slice;
    }
}

asio::awaitable<bool> BatchRunner::Validate(JobRun& run) {
    BatchJob& job = run.job;
    const std::shared_ptr<const config::Config> config = context_.Config();
    const config::BatchesConfig& settings = config->batches;
    std::int64_t total = 0;
    try {
        batches::LineReader reader(files_->PathOf(job.input_file_id), 0);
        std::unordered_set<std::uint64_t> seen;  // custom_ids, hashed: 8 bytes a line
        std::string text;
        std::int64_t offset = 0;
        const auto problem = [&](std::string code, std::string message, std::int64_t line) {
            if (job.errors.size() >= 10) return;
            job.errors.push_back(
                {{"code", std::move(code)},
                 {"message", std::move(message)},
                 {"param", nullptr},
                 {"line", line < 0 ? boost::json::value(nullptr) : boost::json::value(line)}});
        };
        bool mixed = false;  // the lines name more than one model
        while (reader.Next(text, offset)) {
            if (text.empty()) continue;
            ++total;
            batches::LineProblem why;
            const std::optional<batches::InputLine> line =
                batches::ReadInputLine(job.api, job.endpoint, text, why);
            // A message batch's params are checked as its lines run (as Anthropic does).
            if (!line && job.api == batches::Api::kAnthropic) continue;
            if (!line) {
                problem(why.code, why.message, total);
                continue;
            }
            if (job.model.empty()) job.model = line->model;
            mixed = mixed || line->model != job.model;
            if (job.api == batches::Api::kAnthropic) continue;  // custom_ids checked when created
            if (!seen.insert(std::hash<std::string>()(line->custom_id)).second) {
                problem("duplicate_custom_id",
                        "The custom_id '" + line->custom_id +
                            "' is a duplicate of another request's; each must be unique.",
                        total);
            }
        }
        if (mixed) job.mode = "gateway";  // a provider batch serves one model
        if (total == 0) problem("empty_file", "The input file holds no requests.", -1);
        if (total > settings.max_lines) {
            problem("too_many_tasks",
                    fmt::format("The input file holds {} requests; a batch may hold at most {}.",
                                total, settings.max_lines),
                    -1);
        }
    } catch (const std::exception& e) {
        job.errors.push_back(
            {{"code", "file_unavailable"},
             {"message", std::string("The input file cannot be read: ") + e.what()},
             {"param", "input_file_id"},
             {"line", nullptr}});
    }
    job.total = total;
    if (!job.errors.empty()) {
        job.status = Status::kFailed;
        job.failed_s = Now();
    } else {
        if (job.status != Status::kCancelling) job.status = Status::kInProgress;
        job.in_progress_s = Now();
    }
    co_await Save(run);
    co_return job.status != Status::kFailed;  // (a cancel may have come meanwhile)
}

asio::awaitable<void> BatchRunner::RunJob(std::shared_ptr<JobRun> run) {
    asio::co_spawn(ioc_, Watch(run), asio::detached);
    BatchJob& job = run->job;
    // Not validated yet (a cancel may have come first: its lines are still counted).
    const bool unchecked = job.status == Status::kValidating ||
                           (job.status == Status::kCancelling && job.in_progress_s == 0);
    if (unchecked && !co_await Validate(*run)) {
        run->watch.cancel();
        co_return;
    }
    if (job.mode.empty() && !batches::Ended(job.status)) {
        const std::shared_ptr<const config::Config> config = context_.Config();
        const config::Deployment* deployment = ProviderDeployment(*config, job);
        job.mode = deployment != nullptr ? "provider" : "gateway";
        if (deployment != nullptr) job.deployment = deployment->name;
        co_await Save(*run);
    }
    bool on_provider = false;
    if (job.mode == "provider" &&
        (job.status == Status::kInProgress || job.status == Status::kCancelling)) {
        const ProviderOutcome outcome = co_await RunOnProvider(run, context_.Config());
        if (outcome == ProviderOutcome::kStopped) {
            run->watch.cancel();
            co_return;
        }
        if (outcome == ProviderOutcome::kRefused) {
            fmt::print(stderr,
                       "switchyard: batches: {}: the provider's batch API refused it ({}); the "
                       "gateway runs its lines\n",
                       job.id, job.note);
            job.mode = "gateway";
            co_await Save(*run);
        } else {
            on_provider = true;
        }
    }
    if (!on_provider && (job.status == Status::kInProgress || job.status == Status::kCancelling)) {
        try {
            run->reader = std::make_unique<batches::LineReader>(files_->PathOf(job.input_file_id),
                                                                job.cursor_offset);
        } catch (const std::exception& e) {
            job.errors.push_back(
                {{"code", "file_unavailable"},
                 {"message", std::string("The input file cannot be read: ") + e.what()},
                 {"param", "input_file_id"},
                 {"line", nullptr}});
            job.status = Status::kFailed;
            job.failed_s = Now();
        }
        if (job.status == Status::kFailed) {
            co_await Save(*run);
            run->watch.cancel();
            co_return;
        }
        run->next_line = job.cursor_line;
        std::function<std::vector<std::int64_t>(state::DurableStore&)> ended =
            [id = job.id, from = job.cursor_line](state::DurableStore& s) {
                return records::EndedLines(s.Database(), id, from);
            };
        Stored<std::vector<std::int64_t>> lines = co_await OnStore(store_, std::move(ended));
        if (lines.value) run->ended = std::move(*lines.value);
        const int slots = context_.Config()->batches.concurrency;
        run->slots = slots;
        run->all_done.expires_at(asio::steady_timer::time_point::max());
        for (int i = 0; i < slots; ++i) asio::co_spawn(ioc_, RunSlot(run), asio::detached);
        // A slot may run to its end inside co_spawn (halted already): wait only for live ones.
        if (run->slots > 0) {
            auto [ec] = co_await run->all_done.async_wait(kTuple);
            (void)ec;
        }
        // Every result is written before the job moves on.
        while (run->committing || !run->pending.empty()) {
            if (!run->committing) {
                co_await Commit(run);
                // A store that cannot write at shutdown: these lines run again after the start.
                if (stopping_) break;
                continue;
            }
            asio::steady_timer pause(ioc_, milliseconds(10));
            co_await pause.async_wait(kTuple);
        }
        // Stopped, or (defensively) lines left that did not end: resumed from the cursor at the
        // next start, never finished with lines missing.
        if (run->halt == JobRun::Halt::kStop ||
            (run->halt == JobRun::Halt::kNone && job.counts.Done() < job.total)) {
            run->watch.cancel();
            co_return;
        }
        if (run->halt != JobRun::Halt::kNone) co_await EndUnrun(*run);
        run->reader.reset();
        if (stopping_) {
            run->watch.cancel();
            co_return;
        }
    }
    run->watch.cancel();
    if (!batches::Ended(job.status)) co_await Finalize(*run);
}

asio::awaitable<void> BatchRunner::RunSlot(std::shared_ptr<JobRun> run) {
    JobRun& r = *run;
    const BatchJob& job = r.job;
    Slot slot;
    const config::BatchesConfig settings = context_.Config()->batches;
    std::string text;
    for (;;) {
        // The next line to run: none once the job halts or the gateway drains (the job goes on
        // from its cursor at the next start).
        if (context_.draining.load() && r.halt == JobRun::Halt::kNone) r.halt = JobRun::Halt::kStop;
        if (r.halt != JobRun::Halt::kNone || !r.reader) break;
        std::int64_t offset = 0;
        if (!r.reader->Next(text, offset)) break;
        if (text.empty()) continue;
        const std::int64_t number = r.next_line++;
        if (std::binary_search(r.ended.begin(), r.ended.end(), number)) continue;
        r.in_flight[number] = offset;
        batches::LineProblem problem;
        std::optional<batches::InputLine> line =
            batches::ReadInputLine(job.api, job.endpoint, text, problem);
        std::optional<LineResult> result;
        std::optional<batches::Unrun> unrun;  // set when it ends without running
        if (!line) {
            // A message batch's params are checked as its lines run (as Anthropic does).
            const std::string body = boost::json::serialize(boost::json::object{
                {"type", "error"},
                {"error", {{"type", "invalid_request_error"}, {"message", problem.message}}}});
            result =
                LineResult{number, false,
                           batches::AnswerLine(job.api, batches::CustomIdOf(text), 400, "", body)};
        } else {
            // Sends the line until it ends: an answer, or halted.
            int failures = 0;
            for (;;) {
                if (r.halt == JobRun::Halt::kCancel || r.halt == JobRun::Halt::kExpire) {
                    unrun = r.halt == JobRun::Halt::kExpire ? batches::Unrun::kExpired
                                                            : batches::Unrun::kCanceled;
                    result = LineResult{number, false,
                                        batches::UnrunLine(job.api, line->custom_id, *unrun)};
                    break;
                }
                if (r.halt == JobRun::Halt::kStop) break;
                milliseconds wait(0);
                bool sent = false;
                http::response<http::string_body> response;
                if (!slot.stream) {
                    slot.stream.emplace(ioc_);
                    tcp::resolver resolver(ioc_);
                    auto [rec, endpoints] =
                        co_await resolver.async_resolve(host_, std::to_string(port_), kTuple);
                    if (!rec) {
                        slot.stream->expires_after(std::chrono::seconds(10));
                        auto [cec, connected] =
                            co_await slot.stream->async_connect(endpoints, kTuple);
                        (void)connected;
                        if (cec) slot.stream.reset();
                    } else {
                        slot.stream.reset();
                    }
                }
                if (slot.stream) {
                    http::request<http::string_body> request{http::verb::post, line->url, 11};
                    request.set(http::field::host, "switchyard-batch");
                    request.set(http::field::content_type, "application/json");
                    request.set(kBatchTokenHeader, context_.batch_token);
                    request.set(kBatchOwnerHeader, job.owner);
                    if (job.api == batches::Api::kAnthropic) {
                        request.set("anthropic-version", "2023-06-01");
                    }
                    request.body() = line->body;
                    request.prepare_payload();
                    // The gateway bounds the request by its own deadlines; this only ends a
                    // connection that went silent.
                    slot.stream->expires_after(std::chrono::minutes(30));
                    auto [wec, written] = co_await http::async_write(*slot.stream, request, kTuple);
                    (void)written;
                    beast::flat_buffer buffer;
                    http::response_parser<http::string_body> parser;
                    parser.body_limit(std::uint64_t{1} << 30);
                    boost::system::error_code rec;
                    if (!wec) {
                        auto [ec, read] =
                            co_await http::async_read(*slot.stream, buffer, parser, kTuple);
                        (void)read;
                        rec = ec;
                    }
                    if (!wec && !rec) {
                        response = parser.release();
                        sent = true;
                        if (!response.keep_alive()) slot.stream.reset();
                    } else {
                        slot.stream.reset();
                    }
                }
                if (!sent) {
                    // The listener is gone (the gateway stops) or refused: not the line's fault.
                    if (stopping_ || context_.draining.load()) {
                        r.halt = r.halt == JobRun::Halt::kNone ? JobRun::Halt::kStop : r.halt;
                        break;
                    }
                    wait = milliseconds(1000);
                } else {
                    // The gateway's own answers: its give-ups say x-should-retry false to
                    // clients (it retried already), but a batch line has time to come back.
                    // A stand-in answer (degradation) is no answer for a batch.
                    const bool degraded = response.find("x-switchyard-degraded") != response.end();
                    const unsigned status = degraded ? 503 : response.result_int();
                    const milliseconds asked = RetryAfterOf(response);
                    const bool told_when =
                        response.find(http::field::retry_after) != response.end();
                    if (status == 429 && told_when) {
                        // Shed or rate-limited: capacity comes later; the line waits for it. (A
                        // 429 without retry-after is one no wait turns around: too large.)
                        std::uniform_int_distribution<long long> spread(0, 1000);
                        wait = std::max(asked, milliseconds(500)) + milliseconds(spread(r.rng));
                    } else if ((status >= 500 || status == 408) &&
                               ++failures < settings.line_attempts) {
                        const long long cap =
                            std::min<long long>(60'000, 1000LL << std::min(failures, 6));
                        std::uniform_int_distribution<long long> jitter(0, cap);
                        wait = std::max(asked, milliseconds(jitter(r.rng)));
                    } else {
                        const auto id = response.find("x-request-id");
                        const std::string request_id =
                            id == response.end() ? std::string() : std::string(id->value());
                        const bool ok = status >= 200 && status < 300;
                        if (degraded) {
                            response.body() = boost::json::serialize(boost::json::object{
                                {"error",
                                 {{"message",
                                   "Every target failed; the gateway's stand-in "
                                   "answer is not kept for a batch."},
                                  {"type", "upstream_error"},
                                  {"param", nullptr},
                                  {"code", "all_attempts_failed"}}}});
                        }
                        if (ok) {
                            const batches::Tokens tokens = batches::TokensOf(response.body());
                            r.job.input_tokens += tokens.input;
                            r.job.output_tokens += tokens.output;
                        }
                        const std::string& body = response.body();
                        result = LineResult{number, ok,
                                            batches::AnswerLine(job.api, line->custom_id, status,
                                                                request_id, body)};
                        break;
                    }
                }
                co_await Pause(r, wait);
                if (context_.draining.load() && r.halt == JobRun::Halt::kNone) {
                    r.halt = JobRun::Halt::kStop;
                }
            }
        }
        if (!result) break;  // halted for a stop: the line stays unended (and holds the cursor)
        r.in_flight.erase(number);
        CountLine(r, result->ok ? LineEnd::kSucceeded : unrun ? EndOf(*unrun) : LineEnd::kFailed);
        r.pending.push_back(std::move(*result));
        if (!r.committing) asio::co_spawn(ioc_, Commit(run), asio::detached);
    }
    if (--r.slots == 0) r.all_done.cancel();
}

asio::awaitable<void> BatchRunner::Commit(std::shared_ptr<JobRun> run) {
    JobRun& r = *run;
    if (r.committing) co_return;
    r.committing = true;
    while (!r.pending.empty()) {
        std::vector<LineResult> results = std::move(r.pending);
        r.pending.clear();
        // Every line before the cursor has a result once these are written.
        if (!r.in_flight.empty()) {
            r.job.cursor_line = r.in_flight.begin()->first;
            r.job.cursor_offset = r.in_flight.begin()->second;
        } else if (r.reader) {
            r.job.cursor_line = r.next_line;
            r.job.cursor_offset = r.reader->Offset();
        }
        const BatchJob snapshot = r.job;
        std::function<bool(state::DurableStore&)> write = [&snapshot,
                                                           &results](state::DurableStore& s) {
            records::AddResults(s.Database(), snapshot, results);
            return true;
        };
        const Stored<bool> written = co_await OnStore(store_, std::move(write));
        if (written.value) r.committed = snapshot;
        if (!written.value) {
            fmt::print(stderr, "switchyard: batches: cannot write results of {}: {}\n", r.job.id,
                       written.error);
            r.pending.insert(r.pending.begin(), std::make_move_iterator(results.begin()),
                             std::make_move_iterator(results.end()));
            asio::steady_timer pause(ioc_, std::chrono::seconds(1));
            co_await pause.async_wait(kTuple);
            if (stopping_) break;
        }
    }
    r.committing = false;
}

asio::awaitable<void> BatchRunner::EndUnrun(JobRun& run) {
    const batches::Unrun why =
        run.halt == JobRun::Halt::kExpire ? batches::Unrun::kExpired : batches::Unrun::kCanceled;
    std::string text;
    std::int64_t offset = 0;
    auto self = jobs_.at(run.job.id);
    while (run.reader && run.reader->Next(text, offset)) {
        if (text.empty()) continue;
        const std::int64_t number = run.next_line++;
        if (std::binary_search(run.ended.begin(), run.ended.end(), number)) continue;
        run.pending.push_back(
            {number, false, batches::UnrunLine(run.job.api, batches::CustomIdOf(text), why)});
        CountLine(run, EndOf(why));
        if (run.pending.size() >= 1000) co_await Commit(self);
    }
    co_await Commit(self);
}

asio::awaitable<void> BatchRunner::Finalize(JobRun& run) {
    BatchJob job = run.job;
    if (job.finalizing_s == 0 && job.status == Status::kInProgress) {
        job.status = Status::kFinalizing;
        job.finalizing_s = Now();
        run.job = job;
        co_await Save(run);
    }
    const std::int64_t now = Now();
    if (job.cancelling_s != 0) {
        job.status = Status::kCancelled;
        job.cancelled_s = now;
    } else if (job.counts.expired > 0) {
        job.status = Status::kExpired;
        job.expired_s = now;
    } else {
        job.status = Status::kCompleted;
        job.completed_s = now;
    }
    std::function<BatchJob(state::DurableStore&)> finish = [this, job](state::DurableStore& s) {
        BatchJob done = job;
        const bool anthropic = done.api == batches::Api::kAnthropic;
        const std::string output_id = batches::NewFileId();
        const std::string error_id = batches::NewFileId();
        batches::FileStore::Writer output(*files_, output_id);
        batches::FileStore::Writer errors(*files_, error_id);
        records::VisitResults(s.Database(), done.id, [&](const LineResult& result) {
            auto& to = result.ok || anthropic ? output : errors;
            to.Append(result.text);
            to.Append("\n");
        });
        const std::int64_t output_bytes = output.Bytes();
        const std::int64_t error_bytes = errors.Bytes();
        state::SqliteTransaction transaction(s.Database());
        if (output_bytes > 0 || anthropic) {
            output.Keep();
            done.output_file_id = output_id;
            records::PutFile(
                s.Database(),
                {output_id, done.owner, anthropic ? "message_batch_results" : "batch_output",
                 done.id + (anthropic ? "_results.jsonl" : "_output.jsonl"), output_bytes, Now()});
        }
        if (error_bytes > 0) {
            errors.Keep();
            done.error_file_id = error_id;
            records::PutFile(s.Database(), {error_id, done.owner, "batch_output",
                                            done.id + "_error.jsonl", error_bytes, Now()});
        }
        records::DeleteResults(s.Database(), done.id);
        records::PutJob(s.Database(), done);
        transaction.Commit();
        return done;
    };
    const Stored<BatchJob> finished = co_await OnStore(store_, std::move(finish));
    if (!finished.value) {
        fmt::print(stderr, "switchyard: batches: cannot finish {}: {}\n", job.id, finished.error);
        co_return;  // finished at the next start
    }
    run.job = *finished.value;
    run.committed = run.job;
}

}  // namespace switchyard::server
