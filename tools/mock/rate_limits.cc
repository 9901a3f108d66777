#include "rate_limits.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <charconv>
#include <cmath>
#include <ctime>
#include <iterator>

#include "fault_spec.h"

namespace switchyard::mock {
namespace json = boost::json;
using std::chrono::milliseconds;
namespace {

// Static values of an unlimited dimension: per-minute limits no client of the mock reaches, so a
// gateway that throttles itself by the headers never throttles a benchmark.
constexpr std::int64_t kLimitRequests = 100'000'000;
constexpr std::int64_t kLimitTokens = 100'000'000'000;
constexpr std::int64_t kAnthropicLimitRequests = 100'000'000;
constexpr std::int64_t kAnthropicLimitInputTokens = 100'000'000'000;
constexpr std::int64_t kAnthropicLimitOutputTokens = 100'000'000'000;

constexpr std::int64_t kMaxLimit = 1'000'000'000'000;
constexpr double kMaxNumber = static_cast<double>(kMaxLimit);
// A bucket's debt is capped at one minute's worth of its capacity.
constexpr double kDebtFloorCapacities = 60;
constexpr auto kAccelerationWindow = std::chrono::seconds(5);
constexpr auto kAccelerationBaseline = std::chrono::seconds(60);
// Slack for float sums, so that a bucket refilled for exactly the right time holds the amount.
constexpr double kEpsilon = 1e-9;

std::int64_t RoundToThousand(std::int64_t n) { return (n + 500) / 1000 * 1000; }

// `seconds` rounded up to whole milliseconds, ignoring float noise below a microsecond.
milliseconds CeilMillis(double seconds) {
    return milliseconds(static_cast<std::int64_t>(std::ceil(seconds * 1000 - 1e-3)));
}

// The names of RateLimitConfig in the --limits spec and the POST /mock/limits body.
struct Field final {
    std::string_view name;
    std::int64_t RateLimitConfig::*limit;  // Set for the per-minute limits...
    double RateLimitConfig::*number;       // ...or this for the acceleration values.
};

constexpr std::array<Field, 6> kFields = {{
    {"rpm", &RateLimitConfig::rpm, nullptr},
    {"tpm", &RateLimitConfig::tpm, nullptr},
    {"itpm", &RateLimitConfig::itpm, nullptr},
    {"otpm", &RateLimitConfig::otpm, nullptr},
    {"acceleration", nullptr, &RateLimitConfig::acceleration_factor},
    {"acceleration_min_rpm", nullptr, &RateLimitConfig::acceleration_min_rpm},
}};

constexpr std::string_view kKnownNames = "rpm, tpm, itpm, otpm, acceleration, acceleration_min_rpm";

const Field* FindField(std::string_view name) {
    for (const Field& field : kFields) {
        if (field.name == name) return &field;
    }
    return nullptr;
}

std::string UnknownName(std::string_view name) {
    return fmt::format("unknown name '{}' (known: {})", name, kKnownNames);
}

std::string BadLimit(std::string_view name) {
    return fmt::format("{}: expected an integer in [0, {}]", name, kMaxLimit);
}

std::string BadNumber(std::string_view name) {
    return fmt::format("{}: expected a number in [0, {}]", name, kMaxLimit);
}

bool ValidNumber(double value) { return std::isfinite(value) && value >= 0 && value <= kMaxNumber; }

template <typename T>
std::optional<T> ParseWhole(std::string_view text) {
    T value{};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    return value;
}

// Counts the entries of the sorted `times` in (from, to].
std::ptrdiff_t CountIn(const std::deque<SteadyTime>& times, SteadyTime from, SteadyTime to) {
    return std::upper_bound(times.begin(), times.end(), to) -
           std::upper_bound(times.begin(), times.end(), from);
}

}  // namespace

ParsedRateLimits ParseRateLimitSpec(std::string_view text) {
    ParsedRateLimits result;
    std::array<bool, kFields.size()> seen{};
    while (!text.empty()) {
        const auto comma = text.find(',');
        const std::string_view token = TrimBlanks(text.substr(0, comma));
        text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
        if (token.empty()) continue;
        const auto equals = token.find('=');
        if (equals == std::string_view::npos) {
            result.error = fmt::format("'{}': expected name=value", token);
            return result;
        }
        const std::string_view name = TrimBlanks(token.substr(0, equals));
        const std::string_view value = TrimBlanks(token.substr(equals + 1));
        const Field* field = FindField(name);
        if (field == nullptr) {
            result.error = UnknownName(name);
            return result;
        }
        bool& already = seen[static_cast<std::size_t>(field - kFields.data())];
        if (already) {
            result.error = fmt::format("{}: given twice", name);
            return result;
        }
        already = true;
        if (field->limit != nullptr) {
            const auto limit = ParseWhole<std::int64_t>(value);
            if (!limit || *limit < 0 || *limit > kMaxLimit) {
                result.error = BadLimit(name);
                return result;
            }
            result.config.*field->limit = *limit;
        } else {
            const auto number = ParseWhole<double>(value);
            if (!number || !ValidNumber(*number)) {
                result.error = BadNumber(name);
                return result;
            }
            result.config.*field->number = *number;
        }
    }
    return result;
}

ParsedRateLimits ParseRateLimitJson(std::string_view json_text) {
    ParsedRateLimits result;
    boost::system::error_code ec;
    const json::value root = json::parse(json::string_view(json_text.data(), json_text.size()), ec);
    if (ec) {
        result.error = fmt::format("invalid JSON: {}", ec.message());
        return result;
    }
    const auto* object = root.if_object();
    if (object == nullptr) {
        result.error = "expected a JSON object";
        return result;
    }
    for (const auto& [key, value] : *object) {
        const std::string_view name(key.data(), key.size());
        const Field* field = FindField(name);
        if (field == nullptr) {
            result.error = UnknownName(name);
            return result;
        }
        if (field->limit != nullptr) {
            std::optional<std::int64_t> limit;
            if (value.is_int64()) limit = value.get_int64();
            if (value.is_uint64() && value.get_uint64() <= static_cast<std::uint64_t>(kMaxLimit)) {
                limit = static_cast<std::int64_t>(value.get_uint64());
            }
            if (!limit || *limit < 0 || *limit > kMaxLimit) {
                result.error = BadLimit(name);
                return result;
            }
            result.config.*field->limit = *limit;
        } else {
            if (!value.is_number() || !ValidNumber(value.to_number<double>())) {
                result.error = BadNumber(name);
                return result;
            }
            result.config.*field->number = value.to_number<double>();
        }
    }
    return result;
}

std::string_view RateLimitReasonName(RateLimitReason reason) {
    switch (reason) {
        case RateLimitReason::kRequests:
            return "requests";
        case RateLimitReason::kTokens:
            return "tokens";
        case RateLimitReason::kInputTokens:
            return "input_tokens";
        case RateLimitReason::kOutputTokens:
            return "output_tokens";
        case RateLimitReason::kAcceleration:
            return "acceleration";
    }
    return "requests";
}

std::int64_t EstimateInputTokens(std::int64_t chars) { return (chars + 3) / 4; }

double RateLimits::Bucket::Capacity() const {
    return std::max(1.0, static_cast<double>(limit) / 60);
}

double RateLimits::Bucket::RatePerSecond() const { return static_cast<double>(limit) / 60; }

double RateLimits::Bucket::LevelAt(SteadyTime now) const {
    // Concurrent requests may arrive here slightly out of order: time never runs backwards.
    const double elapsed = std::max(0.0, std::chrono::duration<double>(now - updated).count());
    return std::min(Capacity(), level + elapsed * RatePerSecond());
}

void RateLimits::Bucket::Take(double amount, SteadyTime now) {
    level = std::max(LevelAt(now) - amount, -kDebtFloorCapacities * Capacity());
    updated = std::max(updated, now);
}

milliseconds RateLimits::Bucket::Until(double target, SteadyTime now) const {
    const double current = LevelAt(now);
    if (current + kEpsilon >= target) return milliseconds(0);
    return CeilMillis((target - current) / RatePerSecond());
}

void RateLimits::Configure(const RateLimitConfig& config, SteadyTime now) {
    std::lock_guard lock(mutex_);
    config_ = config;
    limited_.store(config != RateLimitConfig{}, std::memory_order_release);
    for (ApiState* state : {&openai_, &anthropic_}) {
        const bool openai = state == &openai_;
        state->requests.limit = config.rpm;
        state->tokens.limit = openai ? config.tpm : config.itpm;
        state->output.limit = openai ? 0 : config.otpm;
        for (Bucket* bucket : {&state->requests, &state->tokens, &state->output}) {
            bucket->level = bucket->Capacity();
            bucket->updated = now;
        }
        state->arrivals.clear();
    }
}

RateLimitConfig RateLimits::config() const {
    std::lock_guard lock(mutex_);
    return config_;
}

RateLimitDecision RateLimits::Admit(RateLimitApi api, const RateLimitCost& cost, SteadyTime now) {
    if (!limited_.load(std::memory_order_acquire)) return {};
    std::lock_guard lock(mutex_);
    ApiState& state = State(api);
    const bool openai = api == RateLimitApi::kOpenAi;
    const bool acceleration = config_.acceleration_factor > 0;
    if (acceleration) {
        auto& arrivals = state.arrivals;
        const SteadyTime horizon = now - kAccelerationWindow - kAccelerationBaseline;
        while (!arrivals.empty() && arrivals.front() <= horizon) arrivals.pop_front();
        arrivals.insert(std::upper_bound(arrivals.begin(), arrivals.end(), now), now);
    }

    Bucket& requests = state.requests;
    Bucket& tokens = state.tokens;
    Bucket& output = state.output;
    // OpenAI charges max(max_tokens, estimate) up front (docs/resilience.md#provider-limits);
    // Anthropic's input side charges the input tokens, and output tokens only once they are
    // generated.
    const double token_cost = static_cast<double>(
        openai ? std::max(cost.max_tokens, cost.input_tokens) : cost.input_tokens);
    // A request larger than the bucket can ever hold needs a full bucket and leaves debt.
    const double token_need = std::min(token_cost, tokens.Capacity());

    RateLimitDecision decision;
    if (requests.limit > 0 && requests.LevelAt(now) + kEpsilon < 1) {
        decision.reason = RateLimitReason::kRequests;
        decision.limit = requests.limit;
    } else if (tokens.limit > 0 && tokens.LevelAt(now) + kEpsilon < token_need) {
        decision.reason = openai ? RateLimitReason::kTokens : RateLimitReason::kInputTokens;
        decision.limit = tokens.limit;
    } else if (output.limit > 0 && output.LevelAt(now) <= 0) {
        decision.reason = RateLimitReason::kOutputTokens;
        decision.limit = output.limit;
    } else if (acceleration && Accelerating(state, now, 0)) {
        decision.reason = RateLimitReason::kAcceleration;
    }

    if (!decision.reason) {
        if (requests.limit > 0) requests.Take(1, now);
        if (tokens.limit > 0) tokens.Take(token_cost, now);
        return decision;
    }
    // OpenAI: failed requests count against the per-minute request limit
    // (docs/resilience.md#provider-limits).
    if (openai && requests.limit > 0) requests.Take(1, now);

    milliseconds wait(1);
    if (requests.limit > 0) wait = std::max(wait, requests.Until(1, now));
    if (tokens.limit > 0) wait = std::max(wait, tokens.Until(token_need, now));
    if (output.limit > 0) {
        const double level = output.LevelAt(now);
        // Strictly above 0: one millisecond past the moment the debt is repaid.
        if (level <= 0)
            wait = std::max(wait, CeilMillis(-level / output.RatePerSecond()) + milliseconds(1));
    }
    if (decision.reason == RateLimitReason::kAcceleration) {
        wait = std::max(wait, AccelerationRetryAfter(state, now));
    }
    decision.retry_after = wait;
    return decision;
}

bool RateLimits::Accelerating(const ApiState& state, SteadyTime at, int extra) const {
    const auto recent =
        CountIn(state.arrivals, at - kAccelerationWindow, at) + static_cast<std::ptrdiff_t>(extra);
    const auto baseline = CountIn(state.arrivals, at - kAccelerationWindow - kAccelerationBaseline,
                                  at - kAccelerationWindow);
    // Both as requests per minute: the 5 s count times 12, the 60 s count as it is.
    const double recent_rpm = static_cast<double>(recent) * 12;
    const double baseline_rpm = static_cast<double>(baseline);
    return recent_rpm > config_.acceleration_factor * baseline_rpm &&
           recent_rpm > config_.acceleration_min_rpm;
}

// The first moment, as the arrivals of the last 5 s age out of that window one by one, at which
// one more request would not be punished; the whole window if none is.
milliseconds RateLimits::AccelerationRetryAfter(const ApiState& state, SteadyTime now) const {
    const auto& arrivals = state.arrivals;
    const auto first =
        std::upper_bound(arrivals.begin(), arrivals.end(), now - kAccelerationWindow);
    const auto last = std::upper_bound(arrivals.begin(), arrivals.end(), now);
    for (auto it = first; it != last; ++it) {
        const SteadyTime at = *it + kAccelerationWindow;
        if (at > now && !Accelerating(state, at, 1)) {
            return std::chrono::ceil<milliseconds>(at - now);
        }
    }
    return kAccelerationWindow;
}

void RateLimits::TakeOutputTokens(std::int64_t tokens, SteadyTime now) {
    if (!limited_.load(std::memory_order_acquire)) return;
    std::lock_guard lock(mutex_);
    Bucket& output = anthropic_.output;
    if (output.limit > 0 && tokens > 0) output.Take(static_cast<double>(tokens), now);
}

namespace {

// Whole units left in a limited bucket; 0 while it is in debt.
std::int64_t Remaining(double level) {
    return std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(level + kEpsilon)));
}

}  // namespace

// Buckets with no limits, for the header values of an unlimited configuration. Built once: a
// deque allocates on construction.
const RateLimits::ApiState& RateLimits::Unlimited() {
    static const ApiState unlimited;
    return unlimited;
}

RateLimitSnapshot RateLimits::Snapshot(std::int64_t static_tokens, SteadyTime now) const {
    if (!limited_.load(std::memory_order_acquire)) {
        return SnapshotOf(Unlimited(), static_tokens, now);
    }
    std::lock_guard lock(mutex_);
    return SnapshotOf(openai_, static_tokens, now);
}

RateLimitSnapshot RateLimits::SnapshotOf(const ApiState& state, std::int64_t static_tokens,
                                         SteadyTime now) {
    RateLimitSnapshot snapshot;
    const Bucket& requests = state.requests;
    if (requests.limit > 0) {
        snapshot.limit_requests = requests.limit;
        snapshot.remaining_requests = Remaining(requests.LevelAt(now));
        snapshot.reset_requests = requests.Until(requests.Capacity(), now);
    } else {
        snapshot.limit_requests = kLimitRequests;
        snapshot.remaining_requests = kLimitRequests - 1;
        snapshot.reset_requests = milliseconds(6);
    }
    const Bucket& tokens = state.tokens;
    if (tokens.limit > 0) {
        snapshot.limit_tokens = tokens.limit;
        snapshot.remaining_tokens = Remaining(tokens.LevelAt(now));
        snapshot.reset_tokens = tokens.Until(tokens.Capacity(), now);
    } else {
        snapshot.limit_tokens = kLimitTokens;
        snapshot.remaining_tokens = std::max<std::int64_t>(0, kLimitTokens - static_tokens);
        snapshot.reset_tokens = milliseconds(2);
    }
    return snapshot;
}

AnthropicRateLimitSnapshot RateLimits::AnthropicSnapshot(std::int64_t static_input_tokens,
                                                         SteadyTime now, WallTime wall) const {
    if (!limited_.load(std::memory_order_acquire)) {
        return AnthropicSnapshotOf(Unlimited(), static_input_tokens, now, wall);
    }
    std::lock_guard lock(mutex_);
    return AnthropicSnapshotOf(anthropic_, static_input_tokens, now, wall);
}

AnthropicRateLimitSnapshot RateLimits::AnthropicSnapshotOf(const ApiState& state,
                                                           std::int64_t static_input_tokens,
                                                           SteadyTime now, WallTime wall) {
    using Reported = AnthropicRateLimitSnapshot::Bucket;
    const WallTime static_reset =
        std::chrono::floor<std::chrono::seconds>(wall) + std::chrono::seconds(1);
    // Resets are whole seconds: round up, so that a client waiting for one is never early.
    const auto limited = [&](const Bucket& bucket, bool thousands) {
        const std::int64_t remaining = Remaining(bucket.LevelAt(now));
        return Reported{
            bucket.limit, thousands ? RoundToThousand(remaining) : remaining,
            std::chrono::ceil<std::chrono::seconds>(wall + bucket.Until(bucket.Capacity(), now))};
    };
    const Bucket& requests = state.requests;
    const Bucket& input = state.tokens;
    const Bucket& output = state.output;

    AnthropicRateLimitSnapshot snapshot;
    snapshot.requests = requests.limit > 0 ? limited(requests, false)
                                           : Reported{kAnthropicLimitRequests,
                                                      kAnthropicLimitRequests - 1, static_reset};
    snapshot.input_tokens =
        input.limit > 0 ? limited(input, true)
                        : Reported{kAnthropicLimitInputTokens,
                                   RoundToThousand(std::max<std::int64_t>(
                                       0, kAnthropicLimitInputTokens - static_input_tokens)),
                                   static_reset};
    snapshot.output_tokens = output.limit > 0 ? limited(output, false)
                                              : Reported{kAnthropicLimitOutputTokens,
                                                         kAnthropicLimitOutputTokens, static_reset};
    if (input.limit > 0 && output.limit > 0) {
        const bool output_tighter =
            output.LevelAt(now) / output.Capacity() < input.LevelAt(now) / input.Capacity();
        snapshot.tokens = output_tighter ? snapshot.output_tokens : snapshot.input_tokens;
    } else if (input.limit > 0) {
        snapshot.tokens = snapshot.input_tokens;
    } else if (output.limit > 0) {
        snapshot.tokens = snapshot.output_tokens;
    } else {
        // Input and output limits combined, as the tidyllm capture shows
        // (docs/providers.md#rate-limit-headers).
        snapshot.tokens = {kAnthropicLimitInputTokens + kAnthropicLimitOutputTokens,
                           snapshot.input_tokens.remaining + kAnthropicLimitOutputTokens,
                           static_reset};
    }
    return snapshot;
}

std::string RateLimits::ToJson(SteadyTime now) const {
    std::lock_guard lock(mutex_);
    std::string out;
    auto sink = std::back_inserter(out);
    fmt::format_to(sink,
                   R"({{"limits":{{"rpm":{},"tpm":{},"itpm":{},"otpm":{},"acceleration":{},)"
                   R"("acceleration_min_rpm":{}}})",
                   config_.rpm, config_.tpm, config_.itpm, config_.otpm,
                   config_.acceleration_factor, config_.acceleration_min_rpm);
    // `,"name":{...}`, or null for an unlimited bucket.
    const auto append_bucket = [&](std::string_view name, const Bucket& bucket) {
        fmt::format_to(sink, R"(,"{}":)", name);
        if (bucket.limit == 0) {
            out += "null";
            return;
        }
        fmt::format_to(sink, R"({{"limit":{},"capacity":{:.3f},"level":{:.3f},"reset_ms":{}}})",
                       bucket.limit, bucket.Capacity(), bucket.LevelAt(now),
                       bucket.Until(bucket.Capacity(), now).count());
    };
    const auto append_api = [&](std::string_view name, const ApiState& state, bool anthropic) {
        fmt::format_to(sink, R"(,"{}":{{"acceleration":{{"last_5s":{},"previous_60s":{}}})", name,
                       CountIn(state.arrivals, now - kAccelerationWindow, now),
                       CountIn(state.arrivals, now - kAccelerationWindow - kAccelerationBaseline,
                               now - kAccelerationWindow));
        append_bucket("requests", state.requests);
        append_bucket(anthropic ? "input_tokens" : "tokens", state.tokens);
        if (anthropic) append_bucket("output_tokens", state.output);
        out += "}";
    };
    append_api("openai", openai_, false);
    append_api("anthropic", anthropic_, true);
    out += "}";
    return out;
}

std::string FormatRfc3339(WallTime time) {
    const std::time_t seconds = std::chrono::system_clock::to_time_t(time);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", utc.tm_year + 1900, utc.tm_mon + 1,
                       utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec);
}

void AppendAnthropicRateLimitHeaders(std::string& out, const AnthropicRateLimitSnapshot& snapshot) {
    const auto append = [&out](std::string_view name,
                               const AnthropicRateLimitSnapshot::Bucket& bucket) {
        fmt::format_to(std::back_inserter(out),
                       "anthropic-ratelimit-{0}-limit: {1}\r\n"
                       "anthropic-ratelimit-{0}-remaining: {2}\r\n"
                       "anthropic-ratelimit-{0}-reset: {3}\r\n",
                       name, bucket.limit, bucket.remaining, FormatRfc3339(bucket.reset));
    };
    append("requests", snapshot.requests);
    append("input-tokens", snapshot.input_tokens);
    append("output-tokens", snapshot.output_tokens);
    append("tokens", snapshot.tokens);
}

std::string FormatGoDuration(std::chrono::milliseconds duration) {
    auto ms = duration.count();
    if (ms == 0) return "0s";
    std::string out;
    if (ms < 0) {
        out.push_back('-');
        ms = -ms;
    }
    if (ms < 1000) {
        fmt::format_to(std::back_inserter(out), "{}ms", ms);
        return out;
    }
    const auto hours = ms / 3'600'000;
    const auto minutes = ms / 60'000 % 60;
    const auto seconds = ms / 1000 % 60;
    const auto millis = ms % 1000;
    if (hours > 0) fmt::format_to(std::back_inserter(out), "{}h", hours);
    if (hours > 0 || minutes > 0) fmt::format_to(std::back_inserter(out), "{}m", minutes);
    fmt::format_to(std::back_inserter(out), "{}", seconds);
    if (millis > 0) {
        auto fraction = fmt::format("{:03}", millis);
        fraction.erase(fraction.find_last_not_of('0') + 1);
        out.push_back('.');
        out += fraction;
    }
    out.push_back('s');
    return out;
}

void AppendRateLimitHeaders(std::string& out, const RateLimitSnapshot& snapshot) {
    fmt::format_to(std::back_inserter(out),
                   "x-ratelimit-limit-requests: {}\r\n"
                   "x-ratelimit-remaining-requests: {}\r\n"
                   "x-ratelimit-reset-requests: {}\r\n"
                   "x-ratelimit-limit-tokens: {}\r\n"
                   "x-ratelimit-remaining-tokens: {}\r\n"
                   "x-ratelimit-reset-tokens: {}\r\n",
                   snapshot.limit_requests, snapshot.remaining_requests,
                   FormatGoDuration(snapshot.reset_requests), snapshot.limit_tokens,
                   snapshot.remaining_tokens, FormatGoDuration(snapshot.reset_tokens));
}

void AppendRetryAfterHeaders(std::string& out, RateLimitApi api, milliseconds retry_after) {
    const auto seconds =
        std::max<std::int64_t>(1, std::chrono::ceil<std::chrono::seconds>(retry_after).count());
    auto sink = std::back_inserter(out);
    fmt::format_to(sink, "retry-after: {}\r\n", seconds);
    if (api == RateLimitApi::kOpenAi) {
        fmt::format_to(sink, "retry-after-ms: {}\r\n",
                       std::max<std::int64_t>(1, retry_after.count()));
    } else {
        out += "x-should-retry: true\r\n";
    }
}

}  // namespace switchyard::mock
