#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "observe/metrics.h"
#include "observe/span.h"

namespace switchyard::observe {

// Sends finished spans to an OTLP/HTTP collector (JSON encoding) from a thread of its own
// (docs/observability.md#traces). Submit never blocks on the network: spans wait in a bounded
// queue and are sent in batches every `interval` or as soon as a batch is full; when the queue is
// full, or the collector refuses or cannot be reached, spans are dropped and counted
// (switchyard_trace_spans_dropped_total). Thread-safe.
class TraceExporter final {
  public:
    struct Options {
        std::string host;
        std::uint16_t port = 4318;
        std::string host_header;  // "host:port"
        std::string path = "/v1/traces";
        std::vector<std::pair<std::string, std::string>> headers;  // e.g. the collector's key
        std::string service_name = "switchyard";
        std::string service_version;
        std::size_t max_queue = 8192;
        std::size_t max_batch = 512;
        std::chrono::milliseconds interval{1'000};
        std::chrono::milliseconds timeout{5'000};
    };

    TraceExporter(Options options, Metrics& metrics);
    // Sends what is queued (giving up at the first failed export), then stops the thread.
    ~TraceExporter();
    TraceExporter(const TraceExporter&) = delete;
    TraceExporter& operator=(const TraceExporter&) = delete;

    // Queues the spans of one request.
    void Submit(std::vector<Span> spans);

  private:
    void Run();
    // One POST of `body`; false when it was not accepted (with a reason for the log).
    bool Post(const std::string& body, std::string& why);

    const Options options_;
    Metrics& metrics_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Span> queue_;
    bool stopping_ = false;
    // The exporter thread's own (no lock): the last export failed, logged once per episode; the
    // collector's addresses, resolved once.
    bool failing_ = false;
    std::vector<boost::asio::ip::tcp::endpoint> endpoints_;
    std::thread thread_;
};

}  // namespace switchyard::observe
