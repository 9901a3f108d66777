#include "core/time_format.h"

#include <cstring>

namespace switchyard::core {
namespace {

void WriteDigits(char* out, long long value, int width) {
    for (int i = width - 1; i >= 0; --i) {
        out[i] = static_cast<char>('0' + value % 10);
        value /= 10;
    }
}

// "YYYY-MM-DDTHH:MM:SS" of a whole second since the epoch.
void WriteSecond(std::chrono::sys_seconds second, char* out) {
    using namespace std::chrono;
    const sys_days day = floor<days>(second);
    const year_month_day date{day};
    const hh_mm_ss<seconds> clock{second - day};
    WriteDigits(out, static_cast<int>(date.year()), 4);
    out[4] = '-';
    WriteDigits(out + 5, static_cast<unsigned>(date.month()), 2);
    out[7] = '-';
    WriteDigits(out + 8, static_cast<unsigned>(date.day()), 2);
    out[10] = 'T';
    WriteDigits(out + 11, clock.hours().count(), 2);
    out[13] = ':';
    WriteDigits(out + 14, clock.minutes().count(), 2);
    out[16] = ':';
    WriteDigits(out + 17, clock.seconds().count(), 2);
}

}  // namespace

void WriteRfc3339(std::chrono::system_clock::time_point time, char* out) {
    using namespace std::chrono;
    // system_clock counts nanoseconds in 64 bits: its years (1678-2261) all have four digits.
    const sys_seconds second = floor<seconds>(time);
    const long long millis = duration_cast<milliseconds>(time - second).count();
    thread_local sys_seconds cached_second = sys_seconds::min();
    thread_local char cached[19];
    if (second != cached_second) {
        WriteSecond(second, cached);
        cached_second = second;
    }
    std::memcpy(out, cached, sizeof cached);
    out[19] = '.';
    WriteDigits(out + 20, millis, 3);
    out[23] = 'Z';
}

std::string Rfc3339(std::chrono::system_clock::time_point time) {
    std::string text(kRfc3339Size, '\0');
    WriteRfc3339(time, text.data());
    return text;
}

}  // namespace switchyard::core
