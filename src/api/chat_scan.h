#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace switchyard::api {

// What routing needs from an OpenAI chat request, read by one validating pass over the bytes
// without building a document (most requests are forwarded unchanged, so a parse tree would be
// thrown away).
struct ChatScan {
    std::string_view model;  // points into the scanned text
    bool stream = false;
    bool include_usage = false;
    std::int64_t max_tokens = 0;  // the larger of max_tokens and max_completion_tokens
};

// Scans `body` when it is a plain case: valid JSON (UTF-8 included), an object whose `model` is a
// non-empty string without escapes, `stream` a boolean or null, no gateway fields (`models`,
// `fallbacks`) and no repeated key among those read. nullopt otherwise — not only for errors:
// the caller then parses the document fully, which gives the exact error or the unusual request.
std::optional<ChatScan> ScanChatRequest(std::string_view body);

}  // namespace switchyard::api
