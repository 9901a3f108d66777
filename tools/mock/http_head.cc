#include "http_head.h"

#include <fmt/format.h>

#include <boost/beast/http/status.hpp>
#include <ctime>

namespace switchyard::mock {

std::string_view ReasonPhrase(int status) {
    namespace http = boost::beast::http;
    // 529 is Anthropic's "overloaded"; it is not registered with IANA.
    if (status == 529) return "Site Overloaded";
    const auto known = http::int_to_status(static_cast<unsigned>(status));
    if (known == http::status::unknown) return "Unknown";
    return http::obsolete_reason(known);
}

void AppendHeadStart(std::string& out, int status, std::string_view content_type,
                     std::optional<std::size_t> content_length, bool keep_alive) {
    fmt::format_to(std::back_inserter(out), "HTTP/1.1 {} {}\r\nContent-Type: {}\r\n", status,
                   ReasonPhrase(status), content_type);
    if (content_length) {
        fmt::format_to(std::back_inserter(out), "Content-Length: {}\r\n", *content_length);
    } else {
        out += "Transfer-Encoding: chunked\r\n";
    }
    if (!keep_alive) out += "Connection: close\r\n";
}

void AppendInterimResponse(std::string& out, int status) {
    switch (status) {
        case 100:
            out += "HTTP/1.1 100 Continue\r\n\r\n";
            return;
        case 103:
            out += "HTTP/1.1 103 Early Hints\r\nLink: </hint.css>; rel=preload\r\n\r\n";
            return;
        default:
            fmt::format_to(std::back_inserter(out), "HTTP/1.1 {} Interim\r\n\r\n", status);
    }
}

std::string FormatImfFixdate(std::chrono::system_clock::time_point time) {
    const std::time_t seconds = std::chrono::system_clock::to_time_t(time);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    // Day and month names are fixed English tokens (RFC 7231 section 7.1.1.1), whatever the locale.
    static constexpr std::string_view kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    return fmt::format("{}, {:02} {} {:04} {:02}:{:02}:{:02} GMT", kDays[utc.tm_wday], utc.tm_mday,
                       kMonths[utc.tm_mon], utc.tm_year + 1900, utc.tm_hour, utc.tm_min,
                       utc.tm_sec);
}

void AppendFaultHeaders(std::string& out, const FaultSpec& spec,
                        std::chrono::system_clock::time_point now) {
    auto sink = std::back_inserter(out);
    if (spec.retry_after_s) fmt::format_to(sink, "retry-after: {}\r\n", *spec.retry_after_s);
    if (spec.retry_after_date_s) {
        // HTTP dates have whole seconds; round up so the client never waits less than asked.
        const auto delay = std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::duration<double>(*spec.retry_after_date_s));
        const auto until = std::chrono::ceil<std::chrono::seconds>(now + delay);
        fmt::format_to(sink, "retry-after: {}\r\n", FormatImfFixdate(until));
    }
    if (spec.retry_after_ms) fmt::format_to(sink, "retry-after-ms: {}\r\n", *spec.retry_after_ms);
    if (spec.x_should_retry) {
        fmt::format_to(sink, "x-should-retry: {}\r\n", *spec.x_should_retry ? "true" : "false");
    }
}

}  // namespace switchyard::mock
