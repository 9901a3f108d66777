#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace switchyard::core {

// The length of an RFC 3339 instant as written here: "2026-11-29T14:46:27.123Z".
inline constexpr std::size_t kRfc3339Size = 24;

// Writes `time` as RFC 3339 in UTC with milliseconds into `out` (kRfc3339Size characters, no
// terminator). The date and time of day are kept per thread for the last second written, so the
// access log's one timestamp per request costs a few digit stores.
void WriteRfc3339(std::chrono::system_clock::time_point time, char* out);

// RFC 3339 in UTC with milliseconds: "2026-11-29T14:46:27.123Z".
std::string Rfc3339(std::chrono::system_clock::time_point time);

}  // namespace switchyard::core
