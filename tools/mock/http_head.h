#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "fault_spec.h"

// HTTP/1.1 response heads written straight into a reused output buffer, so that a whole
// non-streaming response leaves in one write.
namespace switchyard::mock {

// The reason phrase for `status` ("Too Many Requests"); "Unknown" for unregistered codes.
std::string_view ReasonPhrase(int status);

// Appends the status line and the framing headers. `content_length` absent means a chunked body.
// The head is left open: callers append further header lines and then "\r\n".
void AppendHeadStart(std::string& out, int status, std::string_view content_type,
                     std::optional<std::size_t> content_length, bool keep_alive);

// Appends one complete interim (1xx) response: `HTTP/1.1 100 Continue\r\n\r\n`; 103 Early Hints
// with a `Link: </hint.css>; rel=preload` header, as servers send it (RFC 8297); any other code
// with the reason phrase `Interim` and no header.
void AppendInterimResponse(std::string& out, int status);

// `time` as an RFC 7231 IMF-fixdate, e.g. "Wed, 21 Oct 2015 07:28:00 GMT".
std::string FormatImfFixdate(std::chrono::system_clock::time_point time);

// Appends the header lines a fault spec adds to any response: retry-after (seconds, or an
// IMF-fixdate `retry_after_date` seconds after `now`), retry-after-ms and x-should-retry.
void AppendFaultHeaders(std::string& out, const FaultSpec& spec,
                        std::chrono::system_clock::time_point now);

}  // namespace switchyard::mock
