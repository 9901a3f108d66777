#pragma once

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "observe/metrics.h"
#include "observe/request_record.h"

namespace switchyard::observe {

// One JSON line per request, written off the request path: Write() formats the line and appends
// it to its worker's bounded queue; a writer thread drains all queues every few milliseconds
// with one write per batch. A full queue drops the line and counts it; Write never blocks on I/O.
// Never logs keys or prompt text (RequestRecord carries neither). Thread-safe.
class AccessLog final {
  public:
    // destination: "stdout", "stderr", "off", or a file path (appended to).
    AccessLog(const std::string& destination, unsigned shards, Metrics& metrics,
              std::size_t capacity_per_shard = 16384);
    ~AccessLog();
    AccessLog(const AccessLog&) = delete;
    AccessLog& operator=(const AccessLog&) = delete;

    void Write(unsigned shard, const RequestRecord& record);

    // The JSON line (with trailing newline) for one record.
    static std::string Format(const RequestRecord& record);
    // The same line appended to `out`.
    static void FormatTo(std::string& out, const RequestRecord& record);

  private:
    // A worker's queue: its lines one after another, as they will be written.
    struct Shard {
        std::mutex mutex;
        std::string text;
        std::size_t lines = 0;
    };
    void Drain();

    std::FILE* out_ = nullptr;
    bool owns_out_ = false;
    Metrics& metrics_;
    std::size_t capacity_;
    std::vector<Shard> shards_;
    std::mutex stop_mutex_;
    std::condition_variable stop_cv_;
    bool stopping_ = false;
    std::thread writer_;
};

}  // namespace switchyard::observe
