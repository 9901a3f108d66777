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

// Whether `json` holds `"usage":{` as providers write it: the test a stream event passes before
// FindUsage reads it (OpenAI chunks carry `"usage":null` until the last). Only the few '{' of a
// chunk are looked at, where a substring search would restart at each of its many quotes.
bool HasUsageObject(std::string_view json);

// A request's input tokens estimated before the call, for rate limits: a quarter of its body's
// bytes (about four bytes per token for English text and JSON). Counting exactly costs ~40 proxy
// hops for a large prompt; the estimate is reconciled with the reported usage afterwards.
inline std::int64_t EstimateInputTokens(std::string_view body) {
    return static_cast<std::int64_t>((body.size() + 3) / 4);
}

}  // namespace switchyard::api
