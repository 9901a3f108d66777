#include "state/store_writer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace switchyard::state {
namespace {

std::int64_t UnixMillis(const core::Clock& clock) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(clock.WallNow().time_since_epoch())
        .count();
}

// A line on stderr that may not arrive: stderr may be a file on the disk that just filled up, and
// a log line that cannot be written must not end the process (fmt::print would throw).
// Written with write(2): a stdio stream that saw an error may stay silent after it.
void Log(const std::string& line) {
    std::fflush(stderr);
    const ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
    (void)n;
}

}  // namespace

StoreWriter::StoreWriter(std::unique_ptr<DurableStore> store, observe::Metrics& metrics,
                         const core::Clock& clock, std::chrono::milliseconds interval)
    : store_(std::move(store)),
      path_(store_->Path()),
      metrics_(metrics),
      clock_(clock),
      interval_(interval) {
    metrics_.SetStoreUp(1);
}

StoreWriter::~StoreWriter() { Stop(); }

void StoreWriter::Start(Collect collect) {
    collect_ = std::move(collect);
    thread_ = std::thread([this] { Run(); });
}

void StoreWriter::Enqueue(StoreBatch batch) {
    std::lock_guard lock(mutex_);
    queued_.Append(std::move(batch));
}

void StoreWriter::WriteNow(StoreBatch batch, Done done) {
    {
        std::lock_guard lock(mutex_);
        urgent_.emplace_back(std::move(batch), std::move(done));
    }
    wake_.notify_one();
}

void StoreWriter::Visit(std::function<void(DurableStore&)> work) {
    {
        std::lock_guard lock(mutex_);
        visits_.push_back(std::move(work));
    }
    wake_.notify_one();
}

void StoreWriter::Stop() {
    {
        std::lock_guard lock(mutex_);
        if (stopping_ && !thread_.joinable()) return;
        stopping_ = true;
    }
    wake_.notify_one();
    if (thread_.joinable()) thread_.join();
}

void StoreWriter::NoteEpisode(bool written, const std::string& why) {
    if (!written) {
        ++failures_;
        if (!failing_) {
            failing_ = true;
            Log(
                fmt::format("switchyard: state store {}: cannot write: {}; requests are served, "
                            "and what is not written is kept in memory and written when the disk "
                            "takes it again\n",
                            path_, why));
        }
    } else if (failing_) {
        Log(fmt::format("switchyard: state store {}: written again after {} failed write(s)\n",
                        path_, failures_));
        failing_ = false;
        failures_ = 0;
    }
}

void StoreWriter::Run() {
    std::unique_lock lock(mutex_);
    auto next = clock_.Now() + interval_;
    for (;;) {
        wake_.wait_until(lock, next,
                         [this] { return stopping_ || !urgent_.empty() || !visits_.empty(); });
        const bool stop = stopping_;
        if (stop || !urgent_.empty() || !visits_.empty() || clock_.Now() >= next) {
            WriteOnce(lock);
            next = clock_.Now() + interval_;
        }
        std::vector<std::function<void(DurableStore&)>> visits = std::move(visits_);
        visits_.clear();
        if (!visits.empty()) {
            lock.unlock();
            for (auto& work : visits) work(*store_);
            lock.lock();
        }
        if (stop) return;
    }
}

void StoreWriter::WriteOnce(std::unique_lock<std::mutex>& lock) {
    // The failed write's changes first: what happened later is written after them.
    StoreBatch batch = std::move(retry_);
    retry_ = {};
    batch.Append(std::move(queued_));
    queued_ = {};
    std::vector<std::pair<StoreBatch, Done>> urgent = std::move(urgent_);
    urgent_.clear();
    const bool collect_failed = collect_failed_;
    lock.unlock();

    // What was queued is the head of each list; it is kept for a retry should the write fail
    // (the urgent changes' callers hear of the failure, and the spend is read again).
    const std::size_t keys_added = batch.keys_added.size(),
                      keys_removed = batch.keys_removed.size(), spend = batch.spend.size(),
                      marks = batch.marks.size();
    for (auto& [changes, done] : urgent) batch.Append(std::move(changes));
    if (collect_) collect_(batch, collect_failed);
    // An empty batch writes nothing and so says nothing of the disk: the episode goes on.
    bool written = true;
    if (!batch.Empty()) {
        std::string why;
        try {
            store_->Write(batch, UnixMillis(clock_));
        } catch (const StoreError& e) {
            written = false;
            why = e.what();
        }
        metrics_.CountStoreWrite(written);
        metrics_.SetStoreUp(written ? 1 : 0);
        NoteEpisode(written, why);
    }
    for (auto& [changes, done] : urgent) {
        if (done) done(written);
    }

    lock.lock();
    collect_failed_ = !written;
    if (!written) {
        // Kept answers wait in memory anyway (and a long episode must not grow this without
        // bound); the rest is written with the next write.
        batch.keys_added.resize(keys_added);
        batch.keys_removed.resize(keys_removed);
        batch.spend.resize(spend);
        batch.marks.resize(marks);
        batch.idempotency.clear();
        retry_ = std::move(batch);
    }
}

}  // namespace switchyard::state
