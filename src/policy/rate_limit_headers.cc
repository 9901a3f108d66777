#include "policy/rate_limit_headers.h"

#include <charconv>
#include <cmath>

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
        double number = 0;
        const auto [end, ec] =
            std::from_chars(text.data() + start, text.data() + i, number, std::chars_format::fixed);
        if (ec != std::errc() || end != text.data() + i) return std::nullopt;
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
    // The clock counts nanoseconds from 1970 in 64 bits: years outside 1970-2200 would overflow
    // it, and no rate limit resets then.
    if (*year < 1970 || *year > 2200) return std::nullopt;
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

RateLimitHeaders ParseRateLimitHeaders(std::span<const HeaderField> fields,
                                       std::chrono::system_clock::time_point now) {
    RateLimitHeaders out;
    for (const auto& [name, value] : fields) {
        // Names are matched in lower case, taken apart as the two providers build them.
        char lower[64];
        if (name.size() > sizeof lower) continue;
        for (std::size_t i = 0; i < name.size(); ++i) {
            const char c = name[i];
            lower[i] = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
        }
        std::string_view rest(lower, name.size());
        std::string_view dimension;
        std::string_view part;
        bool go_duration = false;  // OpenAI resets are durations from now, Anthropic's instants
        if (rest.starts_with("x-ratelimit-")) {
            rest.remove_prefix(12);  // {limit,remaining,reset}-{requests,tokens}
            const std::size_t dash = rest.find('-');
            if (dash == std::string_view::npos) continue;
            part = rest.substr(0, dash);
            dimension = rest.substr(dash + 1);
            go_duration = true;
        } else if (rest.starts_with("anthropic-ratelimit-")) {
            rest.remove_prefix(20);  // {requests,tokens,input-tokens,output-tokens}-{part}
            const std::size_t dash = rest.rfind('-');
            if (dash == std::string_view::npos) continue;
            dimension = rest.substr(0, dash);
            part = rest.substr(dash + 1);
        } else {
            continue;
        }
        RateLimitWindow* window = nullptr;
        if (dimension == "requests") {
            window = &out.requests;
        } else if (dimension == "tokens") {
            window = &out.tokens;
        } else if (!go_duration && dimension == "input-tokens") {
            window = &out.input_tokens;
        } else if (!go_duration && dimension == "output-tokens") {
            window = &out.output_tokens;
        } else {
            continue;
        }
        if (part == "limit") {
            if (auto v = Integer(value)) window->limit = v;
        } else if (part == "remaining") {
            if (auto v = Integer(value)) window->remaining = v;
        } else if (part != "reset") {
            continue;
        } else if (go_duration) {
            if (auto d = ParseGoDuration(value)) window->reset = now + *d;
        } else if (auto t = ParseRfc3339(value)) {
            window->reset = t;
        }
    }
    return out;
}

}  // namespace switchyard::policy
