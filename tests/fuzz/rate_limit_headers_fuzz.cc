// Rate-limit headers and retry-after values as providers (or anyone in between) may send them:
// never a crash, never a negative wait, and a retry-after that is parsed fits a steady-clock
// instant.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "policy/rate_limit_headers.h"
#include "policy/retry_after.h"

using namespace switchyard;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));
    // Split the input into "name: value" lines.
    std::vector<policy::HeaderField> fields;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view line = text.substr(start, end - start);
        const std::size_t colon = line.find(':');
        if (colon != std::string_view::npos) {
            fields.emplace_back(line.substr(0, colon), line.substr(colon + 1));
        }
        start = end + 1;
    }
    (void)policy::ParseRateLimitHeaders(fields, now);
    for (const auto& [name, value] : fields) {
        if (const auto d = policy::ParseGoDuration(value); d && d->count() < 0) std::abort();
        const auto wait = policy::ParseRetryAfter(value, name, now);
        if (wait && (wait->count() < 0 || *wait > std::chrono::hours(24 * 365 * 300))) {
            std::abort();
        }
    }
    return 0;
}
