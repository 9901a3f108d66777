#include "api/chat_scan.h"

#include <limits>

#include "core/hex.h"
#include "core/json.h"

namespace switchyard::api {
namespace {

// Skip(d) reads a value at nesting d + 1. Anything this refuses goes to the full parser, which
// applies core::kMaxJsonDepth; one level less here keeps every scanned document one that the full
// parser accepts too (rewriting it later must not fail).
constexpr int kMaxDepth = static_cast<int>(core::kMaxJsonDepth) - 1;

// A validating JSON reader that skips what it is not asked for.
class Scanner final {
  public:
    explicit Scanner(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

    bool AtEnd() {
        SkipSpace();
        return p_ == end_;
    }
    void SkipSpace() {
        while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
    }
    bool Consume(char c) {
        SkipSpace();
        if (p_ == end_ || *p_ != c) return false;
        ++p_;
        return true;
    }
    bool Peek(char c) {
        SkipSpace();
        return p_ != end_ && *p_ == c;
    }
    bool PeekNumber() {
        SkipSpace();
        return p_ != end_ && (*p_ == '-' || IsDigit(*p_));
    }

    // A string; `raw` is its text between the quotes, `escaped` whether it had escapes.
    bool String(std::string_view& raw, bool& escaped) {
        if (!Consume('"')) return false;
        const char* start = p_;
        escaped = false;
        while (p_ != end_) {
            const unsigned char c = static_cast<unsigned char>(*p_);
            if (c == '"') {
                raw = std::string_view(start, static_cast<std::size_t>(p_ - start));
                ++p_;
                return true;
            }
            if (c < 0x20) return false;
            if (c == '\\') {
                escaped = true;
                if (!Escape()) return false;
                continue;
            }
            if (c < 0x80) {
                ++p_;
                continue;
            }
            if (!Utf8()) return false;
        }
        return false;
    }

    // A number; `value` is set when it is an integer that fits 64 bits.
    bool Number(std::optional<std::int64_t>& value) {
        SkipSpace();
        bool negative = false;
        if (p_ != end_ && *p_ == '-') {
            negative = true;
            ++p_;
        }
        if (p_ == end_ || !IsDigit(*p_)) return false;
        bool integer = true;
        bool fits = true;
        std::uint64_t magnitude = 0;
        if (*p_ == '0') {
            ++p_;
        } else {
            const char* first = p_;
            while (p_ != end_ && IsDigit(*p_)) {
                const unsigned digit = static_cast<unsigned>(*p_ - '0');
                if (magnitude > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
                    fits = false;
                } else {
                    magnitude = magnitude * 10 + digit;
                }
                ++p_;
            }
            // More digits than the largest double has may overflow one too.
            if (p_ - first > 308) return false;
        }
        if (p_ != end_ && *p_ == '.') {
            integer = false;
            ++p_;
            if (p_ == end_ || !IsDigit(*p_)) return false;
            while (p_ != end_ && IsDigit(*p_)) ++p_;
        }
        if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
            integer = false;
            ++p_;
            if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
            const char* digits = p_;
            while (p_ != end_ && IsDigit(*p_)) ++p_;
            // No exponent digits is invalid; more than two may overflow a double, which the full
            // parser decides.
            if (p_ == digits || p_ - digits > 2) return false;
        }
        value.reset();
        constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
        if (integer && fits) {
            if (!negative && magnitude <= kMax) value = static_cast<std::int64_t>(magnitude);
            if (negative && magnitude <= kMax) value = -static_cast<std::int64_t>(magnitude);
        }
        return true;
    }

    bool Literal(std::string_view word) {
        SkipSpace();
        if (static_cast<std::size_t>(end_ - p_) < word.size() ||
            std::string_view(p_, word.size()) != word) {
            return false;
        }
        p_ += word.size();
        return true;
    }

    // Any value, validated and skipped.
    bool Skip(int depth) {
        if (depth > kMaxDepth) return false;
        SkipSpace();
        if (p_ == end_) return false;
        switch (*p_) {
            case '"': {
                std::string_view raw;
                bool escaped = false;
                return String(raw, escaped);
            }
            case '{':
                ++p_;
                if (Consume('}')) return true;
                do {
                    std::string_view key;
                    bool escaped = false;
                    if (!String(key, escaped) || !Consume(':') || !Skip(depth + 1)) return false;
                } while (Consume(','));
                return Consume('}');
            case '[':
                ++p_;
                if (Consume(']')) return true;
                do {
                    if (!Skip(depth + 1)) return false;
                } while (Consume(','));
                return Consume(']');
            case 't':
                return Literal("true");
            case 'f':
                return Literal("false");
            case 'n':
                return Literal("null");
            default: {
                std::optional<std::int64_t> ignored;
                return Number(ignored);
            }
        }
    }

  private:
    static bool IsDigit(char c) { return c >= '0' && c <= '9'; }

    bool Escape() {
        ++p_;  // the backslash
        if (p_ == end_) return false;
        switch (*p_) {
            case '"':
            case '\\':
            case '/':
            case 'b':
            case 'f':
            case 'n':
            case 'r':
            case 't':
                ++p_;
                return true;
            case 'u': {
                ++p_;
                const std::optional<unsigned> unit = CodeUnit();
                if (!unit) return false;
                // UTF-16 surrogates come in pairs: a high one (D800-DBFF) directly followed by
                // an escaped low one (DC00-DFFF); either alone is not a character.
                if (*unit < 0xD800 || *unit > 0xDFFF) return true;
                if (*unit > 0xDBFF) return false;
                if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
                p_ += 2;
                const std::optional<unsigned> low = CodeUnit();
                return low && *low >= 0xDC00 && *low <= 0xDFFF;
            }
            default:
                return false;
        }
    }

    // The four hex digits of a \u escape, as a UTF-16 code unit.
    std::optional<unsigned> CodeUnit() {
        unsigned unit = 0;
        for (int i = 0; i < 4; ++i, ++p_) {
            const int digit = p_ == end_ ? -1 : core::HexValue(*p_);
            if (digit < 0) return std::nullopt;
            unit = unit * 16 + static_cast<unsigned>(digit);
        }
        return unit;
    }

    // One multi-byte UTF-8 sequence (RFC 3629: no overlongs, no surrogates, at most U+10FFFF).
    bool Utf8() {
        const auto byte = [this](std::ptrdiff_t i) { return static_cast<unsigned char>(p_[i]); };
        const auto cont = [&](std::ptrdiff_t i) { return (byte(i) & 0xC0) == 0x80; };
        const std::ptrdiff_t left = end_ - p_;
        const unsigned char c = byte(0);
        if (c >= 0xC2 && c <= 0xDF) {
            if (left < 2 || !cont(1)) return false;
            p_ += 2;
            return true;
        }
        if (c >= 0xE0 && c <= 0xEF) {
            if (left < 3 || !cont(1) || !cont(2)) return false;
            if (c == 0xE0 && byte(1) < 0xA0) return false;  // overlong
            if (c == 0xED && byte(1) > 0x9F) return false;  // surrogate
            p_ += 3;
            return true;
        }
        if (c >= 0xF0 && c <= 0xF4) {
            if (left < 4 || !cont(1) || !cont(2) || !cont(3)) return false;
            if (c == 0xF0 && byte(1) < 0x90) return false;  // overlong
            if (c == 0xF4 && byte(1) > 0x8F) return false;  // above U+10FFFF
            p_ += 4;
            return true;
        }
        return false;
    }

    const char* p_;
    const char* end_;
};

}  // namespace

std::optional<ChatScan> ScanChatRequest(std::string_view body) {
    Scanner s(body);
    if (!s.Consume('{')) return std::nullopt;
    ChatScan scan;
    bool seen_model = false, seen_stream = false, seen_max = false, seen_completion_max = false,
         seen_options = false;
    if (!s.Consume('}')) {
        do {
            std::string_view key;
            bool escaped = false;
            if (!s.String(key, escaped) || escaped || !s.Consume(':')) return std::nullopt;
            if (key == "model") {
                if (seen_model) return std::nullopt;
                seen_model = true;
                if (!s.Peek('"') || !s.String(scan.model, escaped) || escaped) return std::nullopt;
            } else if (key == "stream") {
                if (seen_stream) return std::nullopt;
                seen_stream = true;
                if (s.Literal("true")) {
                    scan.stream = true;
                } else if (!s.Literal("false") && !s.Literal("null")) {
                    return std::nullopt;
                }
            } else if (key == "max_tokens" || key == "max_completion_tokens") {
                bool& seen = key == "max_tokens" ? seen_max : seen_completion_max;
                if (seen) return std::nullopt;
                seen = true;
                std::optional<std::int64_t> value;
                if (s.PeekNumber()) {
                    if (!s.Number(value)) return std::nullopt;
                    if (value && *value > scan.max_tokens) scan.max_tokens = *value;
                } else if (!s.Skip(1)) {
                    return std::nullopt;
                }
            } else if (key == "stream_options") {
                if (seen_options) return std::nullopt;
                seen_options = true;
                if (!s.Peek('{')) {
                    if (!s.Skip(1)) return std::nullopt;
                    continue;
                }
                s.Consume('{');
                if (s.Consume('}')) continue;
                bool seen_usage = false;
                do {
                    std::string_view inner;
                    if (!s.String(inner, escaped) || escaped || !s.Consume(':'))
                        return std::nullopt;
                    if (inner == "include_usage") {
                        if (seen_usage) return std::nullopt;
                        seen_usage = true;
                        if (s.Literal("true")) {
                            scan.include_usage = true;
                        } else if (!s.Skip(2)) {
                            return std::nullopt;
                        }
                    } else if (!s.Skip(2)) {
                        return std::nullopt;
                    }
                } while (s.Consume(','));
                if (!s.Consume('}')) return std::nullopt;
            } else if (key == "models" || key == "fallbacks") {
                return std::nullopt;  // gateway fields: the full parser reads and removes them
            } else if (!s.Skip(1)) {
                return std::nullopt;
            }
        } while (s.Consume(','));
        if (!s.Consume('}')) return std::nullopt;
    }
    if (!s.AtEnd() || scan.model.empty()) return std::nullopt;
    return scan;
}

}  // namespace switchyard::api
