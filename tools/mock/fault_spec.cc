#include "fault_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <utility>
#include <vector>

namespace switchyard::mock {
namespace {

struct NamedErrorEntry {
    std::string_view name;
    NamedError error;
    int status;
};

constexpr std::array kNamedErrors = {
    NamedErrorEntry{"rate_limit", NamedError::kRateLimit, 429},
    NamedErrorEntry{"insufficient_quota", NamedError::kInsufficientQuota, 429},
    NamedErrorEntry{"credit_balance_exhausted", NamedError::kCreditBalanceExhausted, 429},
    NamedErrorEntry{"organization_spend_limit", NamedError::kOrganizationSpendLimit, 429},
    NamedErrorEntry{"project_spend_limit", NamedError::kProjectSpendLimit, 429},
    NamedErrorEntry{"context_length", NamedError::kContextLength, 400},
    NamedErrorEntry{"content_policy", NamedError::kContentPolicy, 400},
    NamedErrorEntry{"server_overloaded", NamedError::kServerOverloaded, 503},
    NamedErrorEntry{"server_error", NamedError::kServerError, 500},
    NamedErrorEntry{"invalid_api_key", NamedError::kInvalidApiKey, 401},
    NamedErrorEntry{"model_not_found", NamedError::kModelNotFound, 404},
    NamedErrorEntry{"timeout", NamedError::kTimeout, 504},
    NamedErrorEntry{"enforced_spend_limit", NamedError::kEnforcedSpendLimit, 429},
    NamedErrorEntry{"prompt_too_long", NamedError::kPromptTooLong, 400},
    NamedErrorEntry{"overloaded", NamedError::kOverloaded, 529},
    NamedErrorEntry{"billing", NamedError::kBilling, 402},
};

const NamedErrorEntry& EntryFor(NamedError error) {
    for (const auto& entry : kNamedErrors) {
        if (entry.error == error) return entry;
    }
    return kNamedErrors.front();  // Unreachable: the table covers the enum.
}

constexpr int kMaxDelayMs = 3'600'000;
constexpr int kMaxBatchMs = 86'400'000;  // a batch's completion window: 24 hours
constexpr int kMaxChunks = 1'000'000;
constexpr int kMaxEventBytes = 256 * 1024 * 1024;
constexpr std::size_t kMaxInterim = 16;
constexpr double kMaxRetryAfterSeconds = 1e7;

// Parses the whole of `s` as a decimal integer in [min, max].
std::optional<int> ParseInt(std::string_view s, int min, int max) {
    int value = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc{} || end != s.data() + s.size() || value < min || value > max) {
        return std::nullopt;
    }
    return value;
}

// Parses the whole of `s` as a finite decimal number in [min, max].
std::optional<double> ParseDouble(std::string_view s, double min, double max) {
    double value = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc{} || end != s.data() + s.size() || !std::isfinite(value) || value < min ||
        value > max) {
        return std::nullopt;
    }
    return value;
}

std::optional<bool> ParseFlag(std::string_view s) {
    if (s == "1" || s == "true") return true;
    if (s == "0" || s == "false") return false;
    return std::nullopt;
}

std::string BadValue(std::string_view key, std::string_view value, std::string_view expected) {
    return fmt::format("bad value for {}: '{}' (expected {})", key, value, expected);
}

// `interim=CODES`: 1 to 16 comma-separated 1xx codes. 101 is refused: Switching Protocols ends
// HTTP/1.1 on the connection (RFC 9110 15.2.2), so it is no interim response.
std::string ParseInterim(std::string_view value, std::vector<int>& codes) {
    const auto bad = [value] {  // The whole value, not the rest the loop has reached.
        return BadValue(
            "interim", value,
            fmt::format("1 to {} comma-separated codes in [100, 199] except 101", kMaxInterim));
    };
    codes.clear();
    for (;;) {
        const auto comma = value.find(',');
        const auto code = ParseInt(TrimBlanks(value.substr(0, comma)), 100, 199);
        if (!code || *code == 101 || codes.size() == kMaxInterim) return bad();
        codes.push_back(*code);
        if (comma == std::string_view::npos) return {};
        value.remove_prefix(comma + 1);
    }
}

// Applies one `key=value` token to `spec`. Returns an error message, or "" on success.
std::string ApplyToken(std::string_view key, std::string_view value, FaultSpec& spec) {
    const auto set_int = [&](std::optional<int>& field, int min, int max) -> std::string {
        field = ParseInt(value, min, max);
        if (field) return {};
        return BadValue(key, value, fmt::format("an integer in [{}, {}]", min, max));
    };
    const auto set_delay = [&](std::chrono::milliseconds& field) -> std::string {
        const auto ms = ParseInt(value, 0, kMaxDelayMs);
        if (!ms) return BadValue(key, value, fmt::format("milliseconds in [0, {}]", kMaxDelayMs));
        field = std::chrono::milliseconds(*ms);
        return {};
    };
    const auto set_seconds = [&](std::optional<double>& field, double max) -> std::string {
        field = ParseDouble(value, 0, max);
        if (field) return {};
        return BadValue(key, value, fmt::format("a number in [0, {}]", max));
    };
    const auto set_flag = [&](bool& field) -> std::string {
        const auto flag = ParseFlag(value);
        if (!flag) return BadValue(key, value, "1, 0, true or false");
        field = *flag;
        return {};
    };

    if (key == "status") return set_int(spec.status, 400, 599);
    if (key == "error") {
        spec.error = NamedErrorFromName(value);
        if (spec.error) return {};
        std::string names;
        for (const auto& entry : kNamedErrors) {
            if (!names.empty()) names += ", ";
            names += entry.name;
        }
        return BadValue(key, value, "one of " + names);
    }
    if (key == "retry_after") return set_seconds(spec.retry_after_s, kMaxRetryAfterSeconds);
    if (key == "retry_after_date") {
        return set_seconds(spec.retry_after_date_s, kMaxRetryAfterSeconds);
    }
    if (key == "retry_after_ms") return set_seconds(spec.retry_after_ms, kMaxRetryAfterSeconds);
    if (key == "x_should_retry") {
        if (value == "true") {
            spec.x_should_retry = true;
        } else if (value == "false") {
            spec.x_should_retry = false;
        } else {
            return BadValue(key, value, "true or false");
        }
        return {};
    }
    if (key == "delay_headers_ms") return set_delay(spec.delay_headers);
    if (key == "delay_first_chunk_ms") return set_delay(spec.delay_first_chunk);
    if (key == "delay_chunks_ms") return set_delay(spec.delay_chunks);
    if (key == "chunks") return set_int(spec.chunks, 0, kMaxChunks);
    if (key == "error_after_chunks") return set_int(spec.error_after_chunks, 0, kMaxChunks);
    if (key == "reset_after_chunks") return set_int(spec.reset_after_chunks, 0, kMaxChunks);
    if (key == "stall_after_chunks") return set_int(spec.stall_after_chunks, 0, kMaxChunks);
    if (key == "end_after_chunks") return set_int(spec.end_after_chunks, 0, kMaxChunks);
    if (key == "truncate_body") return set_int(spec.truncate_body, 0, 64 * 1024 * 1024);
    if (key == "stall") return set_flag(spec.stall);
    if (key == "reset") return set_flag(spec.reset);
    if (key == "close") return set_flag(spec.close);
    if (key == "tool_use") return set_flag(spec.tool_use);
    if (key == "invalid_output") return set_flag(spec.invalid_output);
    if (key == "one_write") return set_flag(spec.one_write);
    if (key == "error_without_data") return set_flag(spec.error_without_data);
    if (key == "interim") return ParseInterim(value, spec.interim);
    if (key == "late_response_ms") {
        std::chrono::milliseconds delay{0};
        if (auto error = set_delay(delay); !error.empty()) return error;
        spec.late_response = delay;
        return {};
    }
    if (key == "body") {
        if (value == "error") {
            spec.body = BodyFault::kError;
        } else if (value == "wrong_shape") {
            spec.body = BodyFault::kWrongShape;
        } else {
            return BadValue(key, value, "error or wrong_shape");
        }
        return {};
    }
    if (key == "event_bytes") return set_int(spec.event_bytes, 1, kMaxEventBytes);
    if (key == "batch_ms") {
        spec.batch = true;
        const auto ms = ParseInt(value, 0, kMaxBatchMs);
        if (!ms) return BadValue(key, value, fmt::format("milliseconds in [0, {}]", kMaxBatchMs));
        spec.batch_ms = std::chrono::milliseconds(*ms);
        return {};
    }
    if (key == "batch_expire") {
        spec.batch = true;
        return set_flag(spec.batch_expire);
    }
    if (key == "batch_refuse") {
        spec.batch = true;
        if (value == "queue_limit") {
            spec.batch_refuse = BatchRefusal::kQueueLimit;
        } else if (value == "model") {
            spec.batch_refuse = BatchRefusal::kModel;
        } else {
            return BadValue(key, value, "queue_limit or model");
        }
        return {};
    }
    if (key == "probability") {
        const auto p = ParseDouble(value, 0.0, 1.0);
        if (!p) return BadValue(key, value, "a number in [0, 1]");
        spec.probability = *p;
        return {};
    }
    return fmt::format("unknown key '{}'", key);
}

// Rejects combinations whose meaning would depend on an arbitrary precedence rule.
std::string CheckCombination(const FaultSpec& spec) {
    const std::pair<bool, std::string_view> endings[] = {
        {spec.stall, "stall"},
        {spec.reset, "reset"},
        {spec.error_after_chunks.has_value(), "error_after_chunks"},
        {spec.reset_after_chunks.has_value(), "reset_after_chunks"},
        {spec.stall_after_chunks.has_value(), "stall_after_chunks"},
        {spec.end_after_chunks.has_value(), "end_after_chunks"},
    };
    // A refused batch never runs, so nothing can time it or make it expire.
    if (spec.batch_refuse && (spec.batch_ms || spec.batch_expire)) {
        return fmt::format("batch_refuse and {} cannot be combined",
                           spec.batch_ms ? "batch_ms" : "batch_expire");
    }
    std::string_view first_ending;
    for (const auto& [present, name] : endings) {
        if (!present) continue;
        if (!first_ending.empty()) {
            return fmt::format("{} and {} cannot be combined", first_ending, name);
        }
        first_ending = name;
    }
    if (spec.status && !first_ending.empty()) {
        return fmt::format("status and {} cannot be combined", first_ending);
    }
    if (spec.error_without_data && first_ending != "error_after_chunks") {
        return "error_without_data needs error_after_chunks";
    }
    if (spec.error && spec.error_without_data) {
        return "error and error_without_data cannot be combined";
    }
    if (spec.error && !first_ending.empty() && first_ending != "error_after_chunks") {
        return fmt::format("error and {} cannot be combined", first_ending);
    }
    if (spec.one_write && (!first_ending.empty() || spec.delay_first_chunk.count() > 0 ||
                           spec.delay_chunks.count() > 0)) {
        return "one_write cannot be combined with a stream cut or delays between events";
    }
    if (spec.retry_after_s && spec.retry_after_date_s) {
        return "retry_after and retry_after_date cannot be combined";
    }
    // stall and reset send no response head, so nothing can come before it.
    if (!spec.interim.empty() && (spec.stall || spec.reset)) {
        return fmt::format("interim and {} cannot be combined", first_ending);
    }
    // A late response follows a complete answer on a connection that stays open.
    if (spec.late_response && spec.close) return "late_response_ms and close cannot be combined";
    if (spec.late_response && !first_ending.empty()) {
        return fmt::format("late_response_ms and {} cannot be combined", first_ending);
    }
    // body= replaces a whole answer that is sent at once; an error answer or a stream is another.
    if (spec.body) {
        if (spec.status) return "body and status cannot be combined";
        if (spec.error) return "body and error cannot be combined";
        if (!first_ending.empty()) {
            return fmt::format("body and {} cannot be combined", first_ending);
        }
        if (spec.event_bytes) return "body and event_bytes cannot be combined";
    }
    return {};
}

}  // namespace

std::optional<NamedError> NamedErrorFromName(std::string_view name) {
    for (const auto& entry : kNamedErrors) {
        if (entry.name == name) return entry.error;
    }
    return std::nullopt;
}

std::string_view NamedErrorName(NamedError error) { return EntryFor(error).name; }

int NamedErrorStatus(NamedError error) { return EntryFor(error).status; }

std::optional<int> FaultSpec::ErrorStatus() const {
    if (status) return status;
    if (error && !error_after_chunks) return NamedErrorStatus(*error);
    return std::nullopt;
}

std::optional<int> FaultSpec::CutAfterChunks() const {
    if (error_after_chunks) return error_after_chunks;
    if (reset_after_chunks) return reset_after_chunks;
    if (end_after_chunks) return end_after_chunks;
    return stall_after_chunks;
}

ParsedFaultSpec ParseFaultSpec(std::string_view text) {
    ParsedFaultSpec result;
    std::vector<std::string_view> seen_keys;
    std::string_view other_key;  // the first key that is no batch key
    while (!text.empty()) {
        const auto semicolon = text.find(';');
        const auto token = TrimBlanks(text.substr(0, semicolon));
        text =
            semicolon == std::string_view::npos ? std::string_view{} : text.substr(semicolon + 1);
        if (token.empty()) continue;

        const auto equals = token.find('=');
        if (equals == std::string_view::npos) {
            result.error = fmt::format("expected key=value, got '{}'", token);
            return result;
        }
        const auto key = TrimBlanks(token.substr(0, equals));
        const auto value = TrimBlanks(token.substr(equals + 1));
        if (key.empty()) {
            result.error = fmt::format("missing key in '{}'", token);
            return result;
        }
        if (value.empty()) {
            result.error = fmt::format("missing value for {}", key);
            return result;
        }
        if (std::find(seen_keys.begin(), seen_keys.end(), key) != seen_keys.end()) {
            result.error = fmt::format("duplicate key {}", key);
            return result;
        }
        result.error = ApplyToken(key, value, result.spec);
        if (!result.ok()) return result;
        if (!key.starts_with("batch_") && other_key.empty()) other_key = key;
        // Batch keys act on a batch creation, every other key on a request: no spec does both.
        if (result.spec.batch && !other_key.empty()) {
            result.error = fmt::format(
                "batch_ms, batch_expire and batch_refuse cannot be combined with other keys ({})",
                other_key);
            return result;
        }
        seen_keys.push_back(key);
    }
    result.error = CheckCombination(result.spec);
    return result;
}

std::string_view TrimBlanks(std::string_view text) {
    constexpr std::string_view kBlank = " \t";
    const auto first = text.find_first_not_of(kBlank);
    if (first == std::string_view::npos) return {};
    const auto last = text.find_last_not_of(kBlank);
    return text.substr(first, last - first + 1);
}

}  // namespace switchyard::mock
