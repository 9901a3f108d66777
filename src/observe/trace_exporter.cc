#include "observe/trace_exporter.h"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <cstdio>

#include "core/asio.h"

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

bool TraceExporter::Post(const std::string& body, std::string& why) {
    // Asynchronous operations on a private io_context, so the timeout bounds connecting, sending
    // and reading the answer (a collector that accepts and never answers must not hold the
    // thread). Name resolution is the system's, unbounded: it happens once per failure episode.
    asio::io_context ioc;
    unsigned status = 0;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            beast::tcp_stream stream(co_await asio::this_coro::executor);
            if (endpoints_.empty()) {
                // Resolved once, and again only after a failure.
                tcp::resolver resolver(co_await asio::this_coro::executor);
                auto [resolve_ec, results] = co_await resolver.async_resolve(
                    options_.host, std::to_string(options_.port), kTuple);
                if (resolve_ec) {
                    why = "resolve: " + resolve_ec.message();
                    co_return;
                }
                endpoints_.assign(results.begin(), results.end());
            }
            stream.expires_after(options_.timeout);
            auto [connect_ec, endpoint] = co_await stream.async_connect(endpoints_, kTuple);
            if (connect_ec) {
                why = "connect: " + connect_ec.message();
                co_return;
            }
            http::request<http::string_body> request{http::verb::post, options_.path, 11};
            request.set(http::field::host, options_.host_header);
            request.set(http::field::content_type, "application/json");
            request.set(http::field::user_agent, "switchyard/" + options_.service_version);
            for (const auto& [name, value] : options_.headers) request.set(name, value);
            request.body() = body;
            request.prepare_payload();
            auto [write_ec, written] = co_await http::async_write(stream, request, kTuple);
            if (write_ec) {
                why = "send: " + write_ec.message();
                co_return;
            }
            beast::flat_buffer buffer;
            http::response<http::string_body> response;
            auto [read_ec, read] = co_await http::async_read(stream, buffer, response, kTuple);
            if (read_ec) {
                why = "answer: " + read_ec.message();
                co_return;
            }
            status = response.result_int();
            boost::system::error_code ignored;
            stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
        },
        asio::detached);
    ioc.run();
    if (status == 0) endpoints_.clear();
    if (status == 0) return false;
    if (status < 200 || status >= 300) {
        why = fmt::format("HTTP {}", status);
        return false;
    }
    return true;
}

}  // namespace switchyard::observe
