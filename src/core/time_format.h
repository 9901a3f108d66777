#pragma once

#include <chrono>
#include <string>

namespace switchyard::core {

// RFC 3339 in UTC with milliseconds: "2026-11-29T14:46:27.123Z".
std::string Rfc3339(std::chrono::system_clock::time_point time);

}  // namespace switchyard::core
