#include "observe/access_log.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <iterator>

#include "core/time_format.h"
#include "observe/json_text.h"

namespace switchyard::observe {
namespace {

// `,"latency_ms":12.345`: milliseconds with three decimals, written from whole microseconds.
void AppendMilliseconds(std::string& out, double seconds) {
    out.append(",\"latency_ms\":");
    const double micros = std::round(seconds * 1e6);
    if (!(micros >= 0 && micros < 1e15)) {  // negative, huge or not a number: no shortcut
        fmt::format_to(std::back_inserter(out), "{:.3f}", seconds * 1000.0);
        return;
    }
    const auto whole = static_cast<std::int64_t>(micros);
    const fmt::format_int ms(whole / 1000);
    out.append(ms.data(), ms.size());
    const auto fraction = static_cast<int>(whole % 1000);
    const char decimals[] = {'.', static_cast<char>('0' + fraction / 100),
                             static_cast<char>('0' + fraction / 10 % 10),
                             static_cast<char>('0' + fraction % 10)};
    out.append(decimals, sizeof decimals);
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

std::string AccessLog::Format(const RequestRecord& record) {
    std::string out;
    FormatTo(out, record);
    return out;
}

void AccessLog::FormatTo(std::string& out, const RequestRecord& r) {
    // No temporary strings and no format strings: this runs once per request.
    auto text = [&](std::string_view s) { out.append(s); };
    auto number = [&](std::string_view name, std::int64_t value) {
        text(name);
        const fmt::format_int digits(value);
        out.append(digits.data(), digits.size());
    };
    auto string = [&](std::string_view name, std::string_view value) {
        text(name);
        AppendJsonString(out, value);
    };
    char time[core::kRfc3339Size];
    core::WriteRfc3339(r.start, time);
    text("{\"time\":\"");
    text(std::string_view(time, sizeof time));
    text("\"");
    string(",\"method\":", r.method);
    string(",\"path\":", r.path);
    string(",\"route\":", r.route);
    string(",\"model_group\":", r.model_group);
    string(",\"deployment\":", r.deployment);
    if (!r.region.empty()) string(",\"region\":", r.region);
    if (!r.key.empty()) string(",\"key\":", r.key);
    if (!r.lane.empty()) string(",\"lane\":", r.lane);
    number(",\"status\":", r.status);
    AppendMilliseconds(out, r.latency_seconds);
    string(",\"upstream_request_id\":", r.upstream_request_id);
    number(",\"bytes_in\":", static_cast<std::int64_t>(r.bytes_in));
    number(",\"bytes_out\":", static_cast<std::int64_t>(r.bytes_out));
    text(r.stream ? ",\"stream\":true" : ",\"stream\":false");
    if (r.input_tokens >= 0 || r.output_tokens >= 0) {
        number(",\"input_tokens\":", r.input_tokens);
        number(",\"output_tokens\":", r.output_tokens);
    }
    if (r.attempts > 0) {
        number(",\"attempts\":", r.attempts);
        number(",\"fallback_depth\":", r.fallback_depth);
    }
    if (r.client_retry_count > 0) number(",\"client_retry_count\":", r.client_retry_count);
    if (r.client_repeat) text(",\"client_repeat\":true");
    if (r.panic) text(",\"panic\":true");
    if (r.hedged)
        text(r.hedge_answered ? ",\"hedged\":\"hedge_answered\""
                              : ",\"hedged\":\"first_answered\"");
    if (!r.error.empty()) string(",\"error\":", r.error);
    text("}\n");
}

void AccessLog::Write(unsigned shard, const RequestRecord& record) {
    if (out_ == nullptr) return;
    Shard& s = shards_[shard % shards_.size()];
    // Formatted straight into the queue: the writer thread takes the lock once per 10 ms.
    std::lock_guard lock(s.mutex);
    if (s.lines >= capacity_) {
        metrics_.CountLogDropped();
        return;
    }
    FormatTo(s.text, record);
    ++s.lines;
}

void AccessLog::Drain() {
    std::string taken;
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
                taken.swap(s.text);  // the shard keeps the emptied buffer's capacity
                s.lines = 0;
            }
            buffer += taken;
            taken.clear();
        }
        if (!buffer.empty()) {
            std::fwrite(buffer.data(), 1, buffer.size(), out_);
            std::fflush(out_);
        }
    }
}

}  // namespace switchyard::observe
