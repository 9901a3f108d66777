#include "api/usage.h"

#include <charconv>
#include <cstddef>
#include <cstring>
#include <system_error>

namespace switchyard::api {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// The integer at `text[at]` (after optional spaces), or nullopt when the value there is no
// integer (a fraction, an exponent, a string, null, an object).
std::optional<std::int64_t> IntegerAt(std::string_view text, std::size_t at) {
    while (at < text.size() && IsSpace(text[at])) ++at;
    std::int64_t value = 0;
    const char* first = text.data() + at;
    const char* last = text.data() + text.size();
    const auto [end, ec] = std::from_chars(first, last, value);
    if (ec != std::errc() || end == first) return std::nullopt;
    if (end != last && (*end == '.' || *end == 'e' || *end == 'E')) return std::nullopt;
    return value;
}

}  // namespace

bool HasUsageObject(std::string_view json) {
    static constexpr std::string_view kName = "\"usage\":";
    const char* const begin = json.data();
    const char* const end = begin + json.size();
    for (const char* p = begin; p != end;) {
        const auto* brace =
            static_cast<const char*>(std::memchr(p, '{', static_cast<std::size_t>(end - p)));
        if (brace == nullptr) return false;
        if (brace - begin >= static_cast<std::ptrdiff_t>(kName.size()) &&
            std::string_view(brace - kName.size(), kName.size()) == kName) {
            return true;
        }
        p = brace + 1;
    }
    return false;
}

std::optional<Usage> FindUsage(std::string_view json) {
    const std::size_t key = json.rfind("\"usage\"");
    if (key == std::string_view::npos) return std::nullopt;
    std::size_t pos = key + 7;
    while (pos < json.size() && (IsSpace(json[pos]) || json[pos] == ':')) ++pos;
    if (pos >= json.size() || json[pos] != '{') return std::nullopt;
    // One scan of the usage object, no document built: its own members' names at depth 1, the
    // integers after them; strings are skipped whole, so braces inside them do not count. As a
    // parsed document reads it: a member named twice is its last value, and an integer
    // input_tokens / output_tokens wins over prompt_tokens / completion_tokens.
    enum Slot { kPrompt, kInput, kCompletion, kOutput, kSlots };
    std::optional<std::int64_t> found[kSlots];
    int depth = 0;
    for (std::size_t i = pos; i < json.size(); ++i) {
        const char c = json[i];
        if (c == '{' || c == '[') {
            ++depth;
        } else if (c == '}' || c == ']') {
            if (--depth > 0) continue;
            Usage usage;
            if (found[kPrompt]) usage.input_tokens = *found[kPrompt];
            if (found[kInput]) usage.input_tokens = *found[kInput];
            if (found[kCompletion]) usage.output_tokens = *found[kCompletion];
            if (found[kOutput]) usage.output_tokens = *found[kOutput];
            return usage;
        } else if (c == '"') {
            std::size_t close = i + 1;
            while (close < json.size() && json[close] != '"') close += json[close] == '\\' ? 2 : 1;
            if (close >= json.size()) return std::nullopt;
            const std::string_view name = json.substr(i + 1, close - i - 1);
            i = close;
            if (depth != 1) continue;
            std::size_t colon = close + 1;
            while (colon < json.size() && IsSpace(json[colon])) ++colon;
            if (colon >= json.size() || json[colon] != ':') continue;  // a string value, not a name
            for (const auto& [slot, slot_name] :
                 {std::pair{kPrompt, "prompt_tokens"}, std::pair{kInput, "input_tokens"},
                  std::pair{kCompletion, "completion_tokens"},
                  std::pair{kOutput, "output_tokens"}}) {
                if (name == slot_name) found[slot] = IntegerAt(json, colon + 1);
            }
        }
    }
    return std::nullopt;  // the object never closed
}

}  // namespace switchyard::api
