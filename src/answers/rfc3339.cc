#include "answers/rfc3339.h"

namespace switchyard::answers {
namespace {

// Reads exactly `count` ASCII digits at the front of `text` and drops them; -1 if not there.
int TakeDigits(std::string_view& text, std::size_t count) {
    if (text.size() < count) return -1;
    int value = 0;
    for (std::size_t i = 0; i < count; ++i) {
        if (text[i] < '0' || text[i] > '9') return -1;
        value = value * 10 + (text[i] - '0');
    }
    text.remove_prefix(count);
    return value;
}

bool TakeChar(std::string_view& text, char c) {
    if (text.empty() || text.front() != c) return false;
    text.remove_prefix(1);
    return true;
}

int DaysInMonth(int year, int month) {
    constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : kDays[month - 1];
}

// full-date = date-fullyear "-" date-month "-" date-mday
bool TakeDate(std::string_view& text) {
    const int year = TakeDigits(text, 4);
    if (year < 0 || !TakeChar(text, '-')) return false;
    const int month = TakeDigits(text, 2);
    if (month < 1 || month > 12 || !TakeChar(text, '-')) return false;
    const int day = TakeDigits(text, 2);
    return day >= 1 && day <= DaysInMonth(year, month);
}

// full-time = partial-time time-offset, the whole of `text`.
bool IsTime(std::string_view text) {
    const int hour = TakeDigits(text, 2);
    if (hour < 0 || hour > 23 || !TakeChar(text, ':')) return false;
    const int minute = TakeDigits(text, 2);
    if (minute < 0 || minute > 59 || !TakeChar(text, ':')) return false;
    const int second = TakeDigits(text, 2);
    if (second < 0 || second > 60) return false;
    if (TakeChar(text, '.')) {  // time-secfrac = "." 1*DIGIT
        if (TakeDigits(text, 1) < 0) return false;
        while (!text.empty() && text.front() >= '0' && text.front() <= '9') text.remove_prefix(1);
    }
    int offset_minutes = 0;
    if (!TakeChar(text, 'Z') && !TakeChar(text, 'z')) {
        int sign = 0;
        if (TakeChar(text, '+')) {
            sign = 1;
        } else if (TakeChar(text, '-')) {
            sign = -1;
        } else {
            return false;
        }
        const int offset_hour = TakeDigits(text, 2);
        if (offset_hour < 0 || offset_hour > 23 || !TakeChar(text, ':')) return false;
        const int offset_minute = TakeDigits(text, 2);
        if (offset_minute < 0 || offset_minute > 59) return false;
        offset_minutes = sign * (offset_hour * 60 + offset_minute);
    }
    if (!text.empty()) return false;
    // RFC 3339 5.7: a leap second is the last second of a UTC day.
    constexpr int kDay = 24 * 60;
    const int utc_minute = ((hour * 60 + minute - offset_minutes) % kDay + kDay) % kDay;
    return second < 60 || utc_minute == 23 * 60 + 59;
}

}  // namespace

bool IsRfc3339Date(std::string_view text) { return TakeDate(text) && text.empty(); }

bool IsRfc3339Time(std::string_view text) { return IsTime(text); }

bool IsRfc3339DateTime(std::string_view text) {
    if (!TakeDate(text)) return false;
    if (!TakeChar(text, 'T') && !TakeChar(text, 't')) return false;
    return IsTime(text);
}

}  // namespace switchyard::answers
