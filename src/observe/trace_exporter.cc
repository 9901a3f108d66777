#include "observe/trace_exporter.h"

#include <fmt/format.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/json.hpp>
#include <cstdio>
#include <string_view>

namespace switchyard::observe {

TraceExporter::TraceExporter(Options options, Metrics& metrics)
    : options_(std::move(options)), metrics_(metrics), thread_([this] { Run(); }) {}

TraceExporter::~TraceExporter() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
}

void TraceExporter::Submit(std::vector<Span> spans) {
    std::size_t dropped = 0;
    bool batch_full = false;
    {
        std::lock_guard lock(mutex_);
        for (Span& span : spans) {
            if (queue_.size() >= options_.max_queue) {
                ++dropped;
                continue;
            }
            queue_.push_back(std::move(span));
        }
        batch_full = queue_.size() >= options_.max_batch;
    }
    if (dropped > 0) metrics_.CountSpansDropped("queue_full", dropped);
    if (batch_full) wake_.notify_one();
}

void TraceExporter::Run() {
    std::unique_lock lock(mutex_);
    for (;;) {
        if (failing_) {
            // The collector is away: what is queued waits a whole interval for the next try.
            wake_.wait_for(lock, options_.interval, [this] { return stopping_; });
        } else {
            wake_.wait_for(lock, options_.interval,
                           [this] { return stopping_ || queue_.size() >= options_.max_batch; });
        }
        const bool last = stopping_;
        if (last && failing_) {
            // Shutting down while the collector is away: no further export is tried.
            metrics_.CountSpansDropped("export", queue_.size());
            queue_.clear();
            return;
        }
        while (!queue_.empty()) {
            const std::size_t n = std::min(queue_.size(), options_.max_batch);
            std::vector<Span> batch(std::make_move_iterator(queue_.begin()),
                                    std::make_move_iterator(queue_.begin() + n));
            queue_.erase(queue_.begin(), queue_.begin() + n);
            lock.unlock();
            const std::string body =
                EncodeOtlpTraces(batch, options_.service_name, options_.service_version);
            std::string why;
            const bool sent = Post(body, why);
            if (sent) {
                metrics_.CountSpansExported(n);
            } else {
                metrics_.CountSpansDropped("export", n);
            }
            // Logged without the lock: a slow stderr must never hold up Submit.
            if (!sent && !failing_) {
                // One line per episode, naming the collector, never its headers' values.
                fmt::print(stderr,
                           "{{\"level\":\"warn\",\"event\":\"trace_export_failed\","
                           "\"collector\":{},\"error\":{}}}\n",
                           boost::json::serialize(boost::json::string(options_.host_header)),
                           boost::json::serialize(boost::json::string(why)));
            } else if (sent && failing_) {
                fmt::print(stderr, "{{\"level\":\"info\",\"event\":\"trace_export_back\"}}\n");
            }
            failing_ = !sent;
            lock.lock();
            if (sent) continue;
            if (last) {
                // Shutting down: one failed export is enough to give up on the rest.
                metrics_.CountSpansDropped("export", queue_.size());
                queue_.clear();
            }
            break;
        }
        if (last) return;
    }
}

namespace {

// The status code of an HTTP/1.x response head ("HTTP/1.1 200 OK\r\n..."); 0 when it is none.
unsigned StatusOf(std::string_view head) {
    if (head.size() < 12 || !head.starts_with("HTTP/1.") || head[8] != ' ') return 0;
    unsigned status = 0;
    for (std::size_t i = 9; i < 12; ++i) {
        if (head[i] < '0' || head[i] > '9') return 0;
        status = status * 10 + static_cast<unsigned>(head[i] - '0');
    }
    return status;
}

}  // namespace

bool TraceExporter::Post(const std::string& body, std::string& why) {
    // One request per connection (`Connection: close`), of which only the status line is read.
    // Asynchronous operations on a private io_context run for at most the timeout, so it bounds
    // connecting, sending and reading the answer (a collector that accepts and never answers
    // must not hold the thread). Name resolution is the system's, unbounded: it happens once per
    // failure episode.
    std::string request = fmt::format(
        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n"
        "User-Agent: switchyard/{}\r\nConnection: close\r\nContent-Length: {}\r\n",
        options_.path, options_.host_header, options_.service_version, body.size());
    for (const auto& [name, value] : options_.headers) {
        request.append(name).append(": ").append(value).append("\r\n");
    }
    request.append("\r\n").append(body);

    unsigned status = 0;
    bool answered = false;
    boost::asio::io_context ioc;  // last: its end destroys an operation cut short
    why = "timed out";
    boost::asio::co_spawn(
        ioc,
        [&]() -> boost::asio::awaitable<void> {
            constexpr auto kTuple = boost::asio::as_tuple(boost::asio::use_awaitable);
            boost::asio::ip::tcp::socket socket(co_await boost::asio::this_coro::executor);
            if (endpoints_.empty()) {
                // Resolved once, and again only after a failure.
                boost::asio::ip::tcp::resolver resolver(co_await boost::asio::this_coro::executor);
                auto [resolve_ec, results] = co_await resolver.async_resolve(
                    options_.host, std::to_string(options_.port), kTuple);
                if (resolve_ec) {
                    why = "resolve: " + resolve_ec.message();
                    co_return;
                }
                endpoints_.assign(results.begin(), results.end());
            }
            auto [connect_ec, endpoint] =
                co_await boost::asio::async_connect(socket, endpoints_, kTuple);
            if (connect_ec) {
                why = "connect: " + connect_ec.message();
                co_return;
            }
            auto [write_ec, written] =
                co_await boost::asio::async_write(socket, boost::asio::buffer(request), kTuple);
            if (write_ec) {
                why = "send: " + write_ec.message();
                co_return;
            }
            std::string head;
            auto [read_ec, read] = co_await boost::asio::async_read_until(
                socket, boost::asio::dynamic_buffer(head, 16 * 1024), "\r\n", kTuple);
            if (read_ec) {
                why = "answer: " + read_ec.message();
                co_return;
            }
            answered = true;
            status = StatusOf(head);
            boost::system::error_code ignored;
            socket.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
        },
        boost::asio::detached);
    ioc.run_for(options_.timeout);
    if (!answered) {
        endpoints_.clear();
        return false;
    }
    if (status < 200 || status >= 300) {
        why = status == 0 ? "answer: not HTTP/1.x" : fmt::format("HTTP {}", status);
        return false;
    }
    return true;
}

}  // namespace switchyard::observe
