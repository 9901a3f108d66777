#include "observe/access_log.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>
#include <chrono>

#include "core/time_format.h"

namespace switchyard::observe {
namespace {

std::string Quote(std::string_view text) {
    return boost::json::serialize(boost::json::string(text));
}

}  // namespace

AccessLog::AccessLog(const std::string& destination, unsigned shards, Metrics& metrics,
                     std::size_t capacity_per_shard)
    : metrics_(metrics), capacity_(capacity_per_shard), shards_(std::max(1u, shards)) {
    if (destination == "stdout") {
        out_ = stdout;
    } else if (destination == "stderr") {
        out_ = stderr;
    } else if (destination != "off") {
        out_ = std::fopen(destination.c_str(), "a");
        owns_out_ = out_ != nullptr;
        if (out_ == nullptr) {
            fmt::print(stderr, "switchyard: cannot open access log '{}', logging to stderr\n",
                       destination);
            out_ = stderr;
        }
    }
    if (out_ != nullptr) writer_ = std::thread([this] { Drain(); });
}

AccessLog::~AccessLog() {
    {
        std::lock_guard lock(stop_mutex_);
        stopping_ = true;
    }
    stop_cv_.notify_one();
    if (writer_.joinable()) writer_.join();
    if (owns_out_) std::fclose(out_);
}

std::string AccessLog::Format(const RequestRecord& r) {
    std::string line = fmt::format(
        "{{\"time\":\"{}\",\"method\":{},\"path\":{},\"route\":\"{}\",\"model_group\":"
        "{},"
        "\"deployment\":{},\"status\":{},\"latency_ms\":{:.3f},\"upstream_request_id\":{},"
        "\"bytes_in\":{},\"bytes_out\":{},\"stream\":{}",
        core::Rfc3339(r.start), Quote(r.method), Quote(r.path), r.route, Quote(r.model_group),
        Quote(r.deployment), r.status, r.latency_seconds * 1000.0, Quote(r.upstream_request_id),
        r.bytes_in, r.bytes_out, r.stream);
    if (r.input_tokens >= 0 || r.output_tokens >= 0) {
        line += fmt::format(",\"input_tokens\":{},\"output_tokens\":{}", r.input_tokens,
                            r.output_tokens);
    }
    if (r.attempts > 0) {
        line += fmt::format(",\"attempts\":{},\"fallback_depth\":{}", r.attempts, r.fallback_depth);
    }
    if (r.client_retry_count > 0) {
        line += fmt::format(",\"client_retry_count\":{}", r.client_retry_count);
    }
    if (!r.error.empty()) line += ",\"error\":" + Quote(r.error);
    line += "}\n";
    return line;
}

void AccessLog::Write(unsigned shard, const RequestRecord& record) {
    if (out_ == nullptr) return;
    std::string line = Format(record);
    Shard& s = shards_[shard % shards_.size()];
    std::lock_guard lock(s.mutex);
    if (s.lines.size() >= capacity_) {
        metrics_.CountLogDropped();
        return;
    }
    s.lines.push_back(std::move(line));
}

void AccessLog::Drain() {
    std::vector<std::string> batch;
    std::string buffer;
    for (bool last = false; !last;) {
        {
            std::unique_lock lock(stop_mutex_);
            last = stop_cv_.wait_for(lock, std::chrono::milliseconds(10),
                                     [this] { return stopping_; });
        }
        buffer.clear();
        for (Shard& s : shards_) {
            {
                std::lock_guard lock(s.mutex);
                batch.swap(s.lines);
            }
            for (const std::string& line : batch) buffer += line;
            batch.clear();
        }
        if (!buffer.empty()) {
            std::fwrite(buffer.data(), 1, buffer.size(), out_);
            std::fflush(out_);
        }
    }
}

}  // namespace switchyard::observe
