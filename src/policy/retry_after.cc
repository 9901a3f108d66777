#include "policy/retry_after.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace switchyard::policy {
namespace {

using std::chrono::milliseconds;

std::string_view Trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

// A non-negative finite decimal number, the whole string.
std::optional<double> ParseNumber(std::string_view s) {
    s = Trim(s);
    if (s.empty() || s.size() > 32) return std::nullopt;
    for (char c : s) {
        if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.') return std::nullopt;
    }
    const std::string copy(s);
    char* end = nullptr;
    const double value = std::strtod(copy.c_str(), &end);
    if (end != copy.c_str() + copy.size() || !std::isfinite(value) || value < 0) {
        return std::nullopt;
    }
    return value;
}

std::optional<int> Month(std::string_view name) {
    static constexpr std::array<std::string_view, 12> kMonths = {
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    for (int i = 0; i < 12; ++i) {
        if (kMonths[i] == name) return i + 1;
    }
    return std::nullopt;
}

std::optional<int> Int(std::string_view s) {
    int value = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return value;
}

// Days from 1970-01-01 to the civil date (proleptic Gregorian).
long long DaysFromCivil(int y, int m, int d) {
    y -= m <= 2;
    const long long era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<long long>(doe) - 719468;
}

std::optional<std::chrono::system_clock::time_point> Assemble(int year, int month, int day,
                                                              std::string_view hms) {
    if (hms.size() != 8 || hms[2] != ':' || hms[5] != ':') return std::nullopt;
    const auto h = Int(hms.substr(0, 2));
    const auto mi = Int(hms.substr(3, 2));
    const auto s = Int(hms.substr(6, 2));
    if (!h || !mi || !s || *h < 0 || *h > 23 || *mi < 0 || *mi > 59 || *s < 0 || *s > 60 ||
        day < 1 || day > 31 || year < 1 || year > 9999) {
        return std::nullopt;
    }
    const long long seconds = DaysFromCivil(year, month, day) * 86400 + *h * 3600 + *mi * 60 + *s;
    // system_clock counts nanoseconds on common platforms (about 1677..2262): a date outside its
    // range would wrap around into a random wait, so it is no date at all.
    using std::chrono::duration_cast;
    using Clock = std::chrono::system_clock;
    constexpr long long kMin = duration_cast<std::chrono::seconds>(Clock::duration::min()).count();
    constexpr long long kMax = duration_cast<std::chrono::seconds>(Clock::duration::max()).count();
    if (seconds < kMin || seconds > kMax) return std::nullopt;
    return Clock::time_point(std::chrono::seconds(seconds));
}

std::vector<std::string_view> Words(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == ',')) ++i;
        const std::size_t start = i;
        while (i < s.size() && s[i] != ' ' && s[i] != ',') ++i;
        if (i > start) out.push_back(s.substr(start, i - start));
    }
    return out;
}

}  // namespace

std::optional<std::chrono::system_clock::time_point> ParseHttpDate(std::string_view text) {
    const std::vector<std::string_view> w = Words(Trim(text));
    // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
    if (w.size() == 6 && w[5] == "GMT") {
        const auto day = Int(w[1]);
        const auto month = Month(w[2]);
        const auto year = Int(w[3]);
        if (day && month && year) return Assemble(*year, *month, *day, w[4]);
        return std::nullopt;
    }
    // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
    if (w.size() == 4 && w[3] == "GMT" && w[1].size() == 9 && w[1][2] == '-' && w[1][6] == '-') {
        const auto day = Int(w[1].substr(0, 2));
        const auto month = Month(w[1].substr(3, 3));
        const auto yy = Int(w[1].substr(7, 2));
        // Two-digit years: RFC 9110 says to read them as within 50 years of now; 1970..2069.
        if (day && month && yy)
            return Assemble(*yy < 70 ? 2000 + *yy : 1900 + *yy, *month, *day, w[2]);
        return std::nullopt;
    }
    // asctime: Sun Nov  6 08:49:37 1994
    if (w.size() == 5) {
        const auto month = Month(w[1]);
        const auto day = Int(w[2]);
        const auto year = Int(w[4]);
        if (day && month && year) return Assemble(*year, *month, *day, w[3]);
    }
    return std::nullopt;
}

std::optional<milliseconds> ParseRetryAfter(std::optional<std::string_view> retry_after_ms,
                                            std::optional<std::string_view> retry_after,
                                            std::chrono::system_clock::time_point now) {
    if (retry_after_ms) {
        if (const auto ms = ParseNumber(*retry_after_ms); ms && *ms < 1e12) {
            return milliseconds(static_cast<long long>(std::ceil(*ms)));
        }
    }
    if (!retry_after) return std::nullopt;
    if (const auto seconds = ParseNumber(*retry_after)) {
        if (*seconds >= 1e9) return std::nullopt;
        return milliseconds(static_cast<long long>(std::ceil(*seconds * 1000.0)));
    }
    if (const auto date = ParseHttpDate(*retry_after)) {
        if (*date <= now) return milliseconds(0);
        return std::chrono::ceil<milliseconds>(*date - now);
    }
    return std::nullopt;
}

std::chrono::milliseconds SpreadHint(std::chrono::milliseconds minimum,
                                     std::chrono::milliseconds spread, double draw) {
    const double fraction = std::clamp(draw, 0.0, 1.0);
    const auto extra = std::chrono::milliseconds(static_cast<std::int64_t>(
        static_cast<double>(std::max<std::int64_t>(0, spread.count())) * fraction));
    return std::max(minimum, std::chrono::milliseconds(0)) + extra;
}

std::chrono::milliseconds DefaultSpread(std::chrono::milliseconds minimum) {
    return std::clamp(minimum / 2, std::chrono::milliseconds(100), std::chrono::milliseconds(5000));
}

}  // namespace switchyard::policy
