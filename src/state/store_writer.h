#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "observe/metrics.h"
#include "state/durable_store.h"

namespace switchyard::state {

// Writes to the durable store off every request's path (docs/state.md#the-durable-store): one
// thread owns the store and writes what accumulated in one transaction at most every `interval`
// (spend, kept answers, cooldowns), at once when asked (admin changes, disables), and at the end.
// A write that fails (a full or read-only disk) keeps what it held for the next one; requests go
// on being served; the episode is logged once when it starts and once when it ends, and counted.
// Thread-safe.
class StoreWriter final {
  public:
    // Adds, on the writer thread before each write, what accumulates in memory (the keys'
    // spend). `failed` is true when the batch it added last was not written: add it again.
    using Collect = std::function<void(StoreBatch& batch, bool failed)>;
    using Done = std::function<void(bool written)>;

    // `clock` paces the writes (a real one: the thread waits on it).
    StoreWriter(std::unique_ptr<DurableStore> store, observe::Metrics& metrics,
                const core::Clock& clock, std::chrono::milliseconds interval);
    ~StoreWriter();
    StoreWriter(const StoreWriter&) = delete;
    StoreWriter& operator=(const StoreWriter&) = delete;

    // What the store holds (DurableStore::Load); before Start only.
    StoreContents Read(std::int64_t now_ms) { return store_->Load(now_ms); }
    // Starts the thread.
    void Start(Collect collect);
    // Written with the next write.
    void Enqueue(StoreBatch batch);
    // Written at once; `done` (on the writer thread) says whether it reached the disk. A batch
    // that did not is not kept: the caller reports the failure.
    void WriteNow(StoreBatch batch, Done done);
    // Runs `work` on the writer thread with the store, after the next write (an export).
    void Visit(std::function<void(DurableStore&)> work);
    // Writes what is left and stops the thread (at shutdown, after the last request).
    void Stop();

    const std::string& Path() const { return path_; }

  private:
    void Run();
    // One write of everything pending.
    void WriteOnce(std::unique_lock<std::mutex>& lock);
    // Logs the start and the end of a failure episode, once each.
    void NoteEpisode(bool written, const std::string& why);

    std::unique_ptr<DurableStore> store_;
    std::string path_;
    observe::Metrics& metrics_;
    const core::Clock& clock_;
    const std::chrono::milliseconds interval_;
    Collect collect_;

    std::mutex mutex_;
    std::condition_variable wake_;
    StoreBatch queued_;
    std::vector<std::pair<StoreBatch, Done>> urgent_;
    std::vector<std::function<void(DurableStore&)>> visits_;
    StoreBatch retry_;  // queued changes a failed write held
    bool collect_failed_ = false;
    bool stopping_ = false;
    std::thread thread_;

    // The current failure episode (touched on the writer thread only).
    bool failing_ = false;
    std::uint64_t failures_ = 0;
};

}  // namespace switchyard::state
