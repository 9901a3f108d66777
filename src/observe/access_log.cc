#include "observe/access_log.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>

#include "core/time_format.h"
#include "observe/json_text.h"

namespace switchyard::observe {

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
    // One buffer, no temporary strings: this runs once per request.
    fmt::memory_buffer out;
    auto text = [&](std::string_view s) { out.append(s); };
    text("{\"time\":\"");
    text(core::Rfc3339(r.start));
    text("\",\"method\":");
    AppendJsonString(out, r.method);
    text(",\"path\":");
    AppendJsonString(out, r.path);
    text(",\"route\":");
    AppendJsonString(out, r.route);
    text(",\"model_group\":");
    AppendJsonString(out, r.model_group);
    text(",\"deployment\":");
    AppendJsonString(out, r.deployment);
    if (!r.region.empty()) {
        text(",\"region\":");
        AppendJsonString(out, r.region);
    }
    if (!r.key.empty()) {
        text(",\"key\":");
        AppendJsonString(out, r.key);
    }
    if (!r.lane.empty()) {
        text(",\"lane\":");
        AppendJsonString(out, r.lane);
    }
    fmt::format_to(std::back_inserter(out), ",\"status\":{},\"latency_ms\":{:.3f}", r.status,
                   r.latency_seconds * 1000.0);
    text(",\"upstream_request_id\":");
    AppendJsonString(out, r.upstream_request_id);
    fmt::format_to(std::back_inserter(out), ",\"bytes_in\":{},\"bytes_out\":{},\"stream\":{}",
                   r.bytes_in, r.bytes_out, r.stream);
    if (r.input_tokens >= 0 || r.output_tokens >= 0) {
        fmt::format_to(std::back_inserter(out), ",\"input_tokens\":{},\"output_tokens\":{}",
                       r.input_tokens, r.output_tokens);
    }
    if (r.attempts > 0) {
        fmt::format_to(std::back_inserter(out), ",\"attempts\":{},\"fallback_depth\":{}",
                       r.attempts, r.fallback_depth);
    }
    if (r.client_retry_count > 0) {
        fmt::format_to(std::back_inserter(out), ",\"client_retry_count\":{}", r.client_retry_count);
    }
    if (!r.error.empty()) {
        text(",\"error\":");
        AppendJsonString(out, r.error);
    }
    text("}\n");
    return fmt::to_string(out);
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
