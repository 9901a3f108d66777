#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace switchyard::api {

// Token usage reported by a provider for one response.
struct Usage {
    std::int64_t input_tokens = 0;
    std::int64_t output_tokens = 0;
};

// Finds the last `"usage": {...}` object in an OpenAI response body or stream chunk without
// parsing the rest of the document (responses are read only for usage). nullopt when absent or
// null.
std::optional<Usage> FindOpenAiUsage(std::string_view json);

}  // namespace switchyard::api
