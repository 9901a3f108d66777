#pragma once

#include <string_view>

namespace switchyard::answers {

// RFC 3339 section 5.6 grammar with its ranges, as JSON Schema's `format` names them: `date` is a
// full-date (1..12 months, days per month, 29 February in leap years only), `time` a full-time
// (time-offset required; second 60 only where it is 23:59 UTC, a leap second), `date-time` the
// two joined by `T` (either case, as is `Z`). Pure; no regular expressions.
bool IsRfc3339Date(std::string_view text);
bool IsRfc3339Time(std::string_view text);
bool IsRfc3339DateTime(std::string_view text);

}  // namespace switchyard::answers
