#include "policy/rate_limit_headers.h"

#include <charconv>
#include <cmath>
#include <string>

namespace switchyard::policy {
namespace {

std::optional<std::int64_t> Integer(std::optional<std::string_view> text) {
    if (!text) return std::nullopt;
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (ec != std::errc() || end != text->data() + text->size() || value < 0) return std::nullopt;
    return value;
}

std::optional<int> Digits(std::string_view text, std::size_t at, std::size_t count) {
    if (at + count > text.size()) return std::nullopt;
    int value = 0;
    for (std::size_t i = at; i < at + count; ++i) {
        if (text[i] < '0' || text[i] > '9') return std::nullopt;
        value = value * 10 + (text[i] - '0');
    }
    return value;
}

}  // namespace

std::optional<std::chrono::milliseconds> ParseGoDuration(std::string_view text) {
    if (text.empty()) return std::nullopt;
    double total_ms = 0;
    std::size_t i = 0;
    while (i < text.size()) {
        std::size_t start = i;
        while (i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.')) ++i;
        if (i == start) return std::nullopt;
        const double number =
            std::strtod(std::string(text.substr(start, i - start)).c_str(), nullptr);
        start = i;
        while (i < text.size() && !(text[i] >= '0' && text[i] <= '9') && text[i] != '.') ++i;
        const std::string_view unit = text.substr(start, i - start);
        double scale = 0;
        if (unit == "h") {
            scale = 3'600'000;
        } else if (unit == "m") {
            scale = 60'000;
        } else if (unit == "s") {
            scale = 1'000;
        } else if (unit == "ms") {
            scale = 1;
        } else if (unit == "us" || unit == "\xc2\xb5s") {
            scale = 0.001;
        } else if (unit == "ns") {
            scale = 0.000001;
        } else {
            return std::nullopt;
        }
        total_ms += number * scale;
    }
    if (!std::isfinite(total_ms) || total_ms > 1e12) return std::nullopt;
    return std::chrono::milliseconds(static_cast<long long>(std::ceil(total_ms)));
}

std::optional<std::chrono::system_clock::time_point> ParseRfc3339(std::string_view text) {
    using namespace std::chrono;
    const auto year = Digits(text, 0, 4);
    const auto month = Digits(text, 5, 2);
    const auto day = Digits(text, 8, 2);
    const auto hour = Digits(text, 11, 2);
    const auto minute = Digits(text, 14, 2);
    const auto second = Digits(text, 17, 2);
    if (!year || !month || !day || !hour || !minute || !second || text[4] != '-' ||
        text[7] != '-' || (text[10] != 'T' && text[10] != 't' && text[10] != ' ') ||
        text[13] != ':' || text[16] != ':' || *hour > 23 || *minute > 59 || *second > 60) {
        return std::nullopt;
    }
    const year_month_day date{std::chrono::year(*year), std::chrono::month(*month),
                              std::chrono::day(*day)};
    if (!date.ok()) return std::nullopt;
    system_clock::time_point t =
        sys_days(date) + hours(*hour) + minutes(*minute) + seconds(*second);
    std::size_t i = 19;
    if (i < text.size() && text[i] == '.') {
        ++i;
        double fraction = 0;
        double scale = 0.1;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
            fraction += (text[i] - '0') * scale;
            scale /= 10;
            ++i;
        }
        t += duration_cast<system_clock::duration>(duration<double>(fraction));
    }
    if (i < text.size() && (text[i] == 'Z' || text[i] == 'z'))
        return i + 1 == text.size() ? std::optional(t) : std::nullopt;
    if (i + 6 == text.size() && (text[i] == '+' || text[i] == '-') && text[i + 3] == ':') {
        const auto oh = Digits(text, i + 1, 2);
        const auto om = Digits(text, i + 4, 2);
        if (!oh || !om) return std::nullopt;
        const auto offset = hours(*oh) + minutes(*om);
        return text[i] == '+' ? t - offset : t + offset;
    }
    return std::nullopt;
}

RateLimitHeaders ParseRateLimitHeaders(const std::vector<HeaderField>& fields,
                                       std::chrono::system_clock::time_point now) {
    RateLimitHeaders out;
    enum class Part { kLimit, kRemaining, kReset };
    struct Known {
        std::string_view name;
        RateLimitWindow RateLimitHeaders::*window;
        Part part;
        bool go_duration;  // OpenAI resets are durations from now, Anthropic's are instants
    };
    static constexpr Known kKnown[] = {
        {"anthropic-ratelimit-requests-limit", &RateLimitHeaders::requests, Part::kLimit, false},
        {"anthropic-ratelimit-requests-remaining", &RateLimitHeaders::requests, Part::kRemaining,
         false},
        {"anthropic-ratelimit-requests-reset", &RateLimitHeaders::requests, Part::kReset, false},
        {"anthropic-ratelimit-tokens-limit", &RateLimitHeaders::tokens, Part::kLimit, false},
        {"anthropic-ratelimit-tokens-remaining", &RateLimitHeaders::tokens, Part::kRemaining,
         false},
        {"anthropic-ratelimit-tokens-reset", &RateLimitHeaders::tokens, Part::kReset, false},
        {"anthropic-ratelimit-input-tokens-limit", &RateLimitHeaders::input_tokens, Part::kLimit,
         false},
        {"anthropic-ratelimit-input-tokens-remaining", &RateLimitHeaders::input_tokens,
         Part::kRemaining, false},
        {"anthropic-ratelimit-input-tokens-reset", &RateLimitHeaders::input_tokens, Part::kReset,
         false},
        {"anthropic-ratelimit-output-tokens-limit", &RateLimitHeaders::output_tokens, Part::kLimit,
         false},
        {"anthropic-ratelimit-output-tokens-remaining", &RateLimitHeaders::output_tokens,
         Part::kRemaining, false},
        {"anthropic-ratelimit-output-tokens-reset", &RateLimitHeaders::output_tokens, Part::kReset,
         false},
        {"x-ratelimit-limit-requests", &RateLimitHeaders::requests, Part::kLimit, true},
        {"x-ratelimit-remaining-requests", &RateLimitHeaders::requests, Part::kRemaining, true},
        {"x-ratelimit-reset-requests", &RateLimitHeaders::requests, Part::kReset, true},
        {"x-ratelimit-limit-tokens", &RateLimitHeaders::tokens, Part::kLimit, true},
        {"x-ratelimit-remaining-tokens", &RateLimitHeaders::tokens, Part::kRemaining, true},
        {"x-ratelimit-reset-tokens", &RateLimitHeaders::tokens, Part::kReset, true},
    };
    auto iequal = [](std::string_view a, std::string_view b) {
        if (a.size() != b.size()) return false;
        for (std::size_t i = 0; i < a.size(); ++i) {
            const char c = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
            if (c != b[i]) return false;
        }
        return true;
    };
    for (const auto& [name, value] : fields) {
        for (const Known& k : kKnown) {
            if (!iequal(name, k.name)) continue;
            RateLimitWindow& window = out.*(k.window);
            if (k.part == Part::kLimit) {
                if (auto v = Integer(value)) window.limit = v;
            } else if (k.part == Part::kRemaining) {
                if (auto v = Integer(value)) window.remaining = v;
            } else if (k.go_duration) {
                if (auto d = ParseGoDuration(value)) window.reset = now + *d;
            } else if (auto t = ParseRfc3339(value)) {
                window.reset = t;
            }
            break;
        }
    }
    return out;
}

}  // namespace switchyard::policy
