#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "config/client_key.h"
#include "config/config_sections.h"
#include "core/url.h"

// The sections of a config about how the gateway serves its clients (config_sections.h): server,
// timeouts, idempotency and degradation.

namespace switchyard::config {

void ReadServer(Reader& r, const YAML::Node& node, ServerConfig& server) {
    if (!r.CheckMap(node, "server",
                    {"listen", "workers", "max_body_bytes", "max_body_bytes_in_flight",
                     "max_body_bytes_in_flight_per_key", "header_timeout_ms", "idle_timeout_ms",
                     "write_timeout_ms", "drain_delay_ms", "drain_timeout_ms", "master_key",
                     "stream_mode"})) {
        return;
    }
    std::string listen;
    if (r.String(node, "listen", listen) &&
        !core::ParseHostPort(listen, server.listen_host, server.listen_port)) {
        r.Fail(node["listen"], "'listen' must be HOST:PORT, e.g. 127.0.0.1:4000");
    }
    r.Integer(node, "workers", server.workers, 0, 256);
    r.Integer(node, "max_body_bytes", server.max_body_bytes, 1024, 1LL << 30);
    r.Integer(node, "max_body_bytes_in_flight", server.max_body_bytes_in_flight, 1024, 1LL << 40);
    r.Integer(node, "max_body_bytes_in_flight_per_key", server.max_body_bytes_in_flight_per_key,
              1024, 1LL << 40);
    r.Duration(node, "header_timeout_ms", server.header_timeout);
    r.Duration(node, "idle_timeout_ms", server.idle_timeout);
    r.Duration(node, "write_timeout_ms", server.write_timeout);
    r.Duration(node, "drain_delay_ms", server.drain_delay, 0);
    r.Duration(node, "drain_timeout_ms", server.drain_timeout);
    r.SecretValue(node, "master_key", server.master_key);
    std::string mode;
    if (r.String(node, "stream_mode", mode)) {
        if (const auto parsed = ParseStreamMode(mode)) {
            server.stream_mode = *parsed;
        } else {
            r.Fail(node["stream_mode"], "'stream_mode' must be " + std::string(kStreamModeChoices));
        }
    }
}

void ReadTimeouts(Reader& r, const YAML::Node& node, Timeouts& timeouts) {
    if (!r.CheckMap(node, "timeouts",
                    {"connect_ms", "first_byte_ms", "first_token_ms", "chunk_ms", "total_ms",
                     "pings_are_progress", "stream_upstream_over_max_tokens", "adaptive",
                     "adaptive_multiplier", "adaptive_floor_ms", "adaptive_min_samples",
                     "latency_window_ms"})) {
        return;
    }
    r.Duration(node, "connect_ms", timeouts.connect);
    r.Duration(node, "first_byte_ms", timeouts.first_byte);
    r.Duration(node, "first_token_ms", timeouts.first_token);
    r.Duration(node, "chunk_ms", timeouts.chunk);
    r.Duration(node, "total_ms", timeouts.total);
    r.Bool(node, "pings_are_progress", timeouts.pings_are_progress);
    r.Integer(node, "stream_upstream_over_max_tokens", timeouts.stream_upstream_over_max_tokens, 0,
              100'000'000);
    r.Bool(node, "adaptive", timeouts.adaptive);
    r.Number(node, "adaptive_multiplier", timeouts.adaptive_multiplier);
    if (timeouts.adaptive_multiplier < 1) {
        r.Fail(node["adaptive_multiplier"], "'adaptive_multiplier' must be at least 1");
    }
    r.Duration(node, "adaptive_floor_ms", timeouts.adaptive_floor);
    r.Integer(node, "adaptive_min_samples", timeouts.adaptive_min_samples, 1, 1'000'000);
    r.Duration(node, "latency_window_ms", timeouts.latency_window);
}

void ReadIdempotency(Reader& r, const YAML::Node& node, IdempotencyConfig& idempotency) {
    if (!r.CheckMap(node, "idempotency", {"ttl_s", "max_answer_bytes", "max_bytes"})) return;
    long long ttl = idempotency.ttl.count();
    r.Integer(node, "ttl_s", ttl, 1, 30LL * 24 * 3600);
    idempotency.ttl = std::chrono::seconds(ttl);
    r.Integer(node, "max_answer_bytes", idempotency.max_answer_bytes, 1024, 256LL << 20);
    r.Integer(node, "max_bytes", idempotency.max_bytes, 64 * 1024, 64LL << 30);
}

void ReadBatches(Reader& r, const YAML::Node& node, BatchesConfig& batches) {
    if (!r.CheckMap(node, "batches",
                    {"lane", "concurrency", "max_file_bytes", "max_stored_bytes", "max_lines",
                     "line_attempts", "price_ratio", "poll_ms", "max_poll_ms"})) {
        return;
    }
    r.String(node, "lane", batches.lane);
    r.Integer(node, "concurrency", batches.concurrency, 1, 256);
    r.Integer(node, "max_file_bytes", batches.max_file_bytes, 1024, 1LL << 40);
    r.Integer(node, "max_stored_bytes", batches.max_stored_bytes, 1024, 1LL << 50);
    r.Integer(node, "max_lines", batches.max_lines, 1, 1'000'000);
    r.Integer(node, "line_attempts", batches.line_attempts, 1, 100);
    r.Number(node, "price_ratio", batches.price_ratio, /*allow_zero=*/true);
    r.Duration(node, "poll_ms", batches.poll);
    r.Duration(node, "max_poll_ms", batches.max_poll);
    if (batches.max_poll < batches.poll) batches.max_poll = batches.poll;
}

namespace {

// A drill's `every`: a number with a unit, `30s`, `15m`, `6h` or `1d`.
std::optional<Millis> ReadEvery(std::string_view text) {
    if (text.size() < 2) return std::nullopt;
    long long count = 0;
    for (const char c : text.substr(0, text.size() - 1)) {
        if (c < '0' || c > '9' || count > 1'000'000) return std::nullopt;
        count = count * 10 + (c - '0');
    }
    long long unit = 0;
    switch (text.back()) {
        case 's':
            unit = 1'000;
            break;
        case 'm':
            unit = 60'000;
            break;
        case 'h':
            unit = 3'600'000;
            break;
        case 'd':
            unit = 86'400'000;
            break;
        default:
            return std::nullopt;
    }
    const Millis every(count * unit);
    if (every < Millis(1'000) || every > Millis(30LL * 86'400'000)) return std::nullopt;
    return every;
}

// The text of a drill's cases file; a relative path is read beside the config file.
std::optional<std::string> ReadCasesFile(const std::string& config_file, const std::string& path) {
    std::filesystem::path where(path);
    if (where.is_relative()) {
        std::error_code ec;
        const std::filesystem::path config_path(config_file);
        if (std::filesystem::is_regular_file(config_path, ec)) {
            where = config_path.parent_path() / where;
        }
    }
    // Only a regular file: a FIFO or a device (/dev/stdin, /dev/zero) would block or never end.
    std::error_code ec;
    if (!std::filesystem::is_regular_file(where, ec)) return std::nullopt;
    constexpr std::size_t kMaxCasesBytes = 16 << 20;
    const std::uintmax_t size = std::filesystem::file_size(where, ec);
    if (ec || size > kMaxCasesBytes) return std::nullopt;
    std::ifstream in(where, std::ios::binary);
    if (!in) return std::nullopt;
    std::string text(static_cast<std::size_t>(size) + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxCasesBytes) return std::nullopt;
    return text;
}

}  // namespace

void ReadDrills(Reader& r, const YAML::Node& node, Config& config) {
    if (!node.IsSequence()) {
        r.Fail(node, "'drills' must be a list of {group, cases, every}");
        return;
    }
    for (const YAML::Node& item : node) {
        if (!r.CheckMap(item, "a drill",
                        {"group", "cases", "every", "lane", "concurrency", "max_cost"})) {
            continue;
        }
        DrillConfig drill;
        drill.line = item.Mark().line + 1;
        if (!r.String(item, "group", drill.group, /*required=*/true) ||
            !r.String(item, "cases", drill.cases_path, /*required=*/true)) {
            continue;
        }
        const bool again =
            std::any_of(config.drills.begin(), config.drills.end(),
                        [&](const DrillConfig& d) { return d.group == drill.group; });
        if (again) {
            r.Fail(item["group"],
                   "'" + drill.group + "' is drilled twice: put its cases in one file");
            continue;
        }
        const ModelGroup* group = config.FindGroup(drill.group);
        if (group == nullptr) {
            r.Fail(item["group"], "drill of an unknown model group '" + drill.group + "'");
            continue;
        }
        if (group->mode != GroupMode::kChat) {
            r.Fail(item["group"],
                   "'" + drill.group + "' serves embeddings: drills check chat answers");
            continue;
        }
        std::string every;
        if (r.String(item, "every", every)) {
            const std::optional<Millis> read = ReadEvery(every);
            if (!read) {
                r.Fail(item["every"],
                       "'every' must be a duration from 1s to 30d such as 30s, 15m, 6h or 1d");
                continue;
            }
            drill.every = *read;
        }
        if (r.String(item, "lane", drill.lane) && !config.limits.FindLane(drill.lane)) {
            r.Fail(item["lane"], "no lane '" + drill.lane + "' in limits.lanes");
            continue;
        }
        r.Integer(item, "concurrency", drill.concurrency, 1, 64);
        r.Number(item, "max_cost", drill.max_cost, /*allow_zero=*/true);
        std::optional<std::string> text = ReadCasesFile(r.File(), drill.cases_path);
        if (!text) {
            r.Fail(item["cases"],
                   "cannot read the cases file '" + drill.cases_path + "' (at most 16 MiB)");
            continue;
        }
        drill.cases = std::move(*text);
        config.drills.push_back(std::move(drill));
    }
}

void ReadDegradation(Reader& r, const YAML::Node& node, DegradationConfig& degradation) {
    if (!r.CheckMap(node, "degradation", {"mode", "content"})) return;
    std::string mode = "error";
    r.String(node, "mode", mode);
    if (mode == "error") {
        degradation.mode = DegradationConfig::Mode::kError;
    } else if (mode == "static") {
        degradation.mode = DegradationConfig::Mode::kStatic;
        r.String(node, "content", degradation.content, /*required=*/true);
    } else {
        r.Fail(node["mode"], "degradation 'mode' must be 'error' or 'static'");
    }
}

}  // namespace switchyard::config
