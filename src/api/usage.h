#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace switchyard::api {

// Token usage reported by a provider for one response; a count the provider did not report in
// this document is -1 (Anthropic streams report input in message_start, output in message_delta).
struct Usage {
    std::int64_t input_tokens = -1;
    std::int64_t output_tokens = -1;
};

// Finds the last `"usage": {...}` object in a response body or stream event of either API
// (prompt_tokens/completion_tokens or input_tokens/output_tokens) without parsing the rest of the
// document (responses are read only for usage). nullopt when absent or null.
std::optional<Usage> FindUsage(std::string_view json);

}  // namespace switchyard::api
