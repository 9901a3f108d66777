#include "core/time_format.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

namespace switchyard::core {

std::string Rfc3339(std::chrono::system_clock::time_point time) {
    const auto seconds = std::chrono::floor<std::chrono::seconds>(time);
    const auto millis =
        std::chrono::duration_cast<std::chrono::milliseconds>(time - seconds).count();
    return fmt::format("{:%FT%T}.{:03}Z", seconds, millis);
}

}  // namespace switchyard::core
