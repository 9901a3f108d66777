#pragma once

#include <chrono>

namespace switchyard::policy {

// When a monthly provider spend cap lifts: 00:00 UTC on the first day of the next month (Anthropic
// documents this for enforced_spend_limit_reached; OpenAI's monthly limits reset the same way).
std::chrono::system_clock::time_point SpendCapResetAfter(std::chrono::system_clock::time_point now);

}  // namespace switchyard::policy
