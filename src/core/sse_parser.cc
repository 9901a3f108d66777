#include "core/sse_parser.h"

#include <cstring>

namespace switchyard::core {
namespace {

// The first '\r' or '\n' at or after `pos`, or npos: two memchr scans, the second bounded by
// the first (lines end in "\n" almost always, so the '\r' scan is short).
std::size_t LineEnd(std::string_view text, std::size_t pos) {
    const char* const begin = text.data() + pos;
    const std::size_t size = text.size() - pos;
    const auto* newline = static_cast<const char*>(std::memchr(begin, '\n', size));
    const std::size_t until = newline != nullptr ? static_cast<std::size_t>(newline - begin) : size;
    const auto* cr = static_cast<const char*>(std::memchr(begin, '\r', until));
    if (cr != nullptr) return pos + static_cast<std::size_t>(cr - begin);
    if (newline != nullptr) return pos + until;
    return std::string_view::npos;
}

}  // namespace

void SseParser::Feed(std::string_view bytes) {
    if (consumed_ > 0) {
        buffer_.erase(0, consumed_);
        consumed_ = 0;
    }
    buffer_.append(bytes);
}

bool SseParser::Next(SseEvent& event) {
    const std::string_view all(buffer_);
    std::size_t pos = consumed_;
    std::string_view name;
    std::string& data = data_;
    data.clear();
    bool has_data = false;
    while (pos < all.size()) {
        const std::size_t eol = LineEnd(all, pos);
        if (eol == std::string_view::npos) return false;
        std::size_t next = eol + 1;
        if (all[eol] == '\r') {
            // A lone '\r' at the end may be the first half of "\r\n": wait for the next byte.
            if (next == all.size()) return false;
            if (all[next] == '\n') ++next;
        }
        const std::string_view line = all.substr(pos, eol - pos);
        pos = next;
        if (line.empty()) {
            event.raw = all.substr(consumed_, pos - consumed_);
            event.name = name;
            event.data.swap(data);
            event.has_data = has_data;
            consumed_ = pos;
            return true;
        }
        if (line.front() == ':') continue;  // comment
        const std::size_t colon = line.find(':');
        const std::string_view field = line.substr(0, colon);
        std::string_view value;
        if (colon != std::string_view::npos) {
            value = line.substr(colon + 1);
            if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        }
        if (field == "data") {
            if (has_data) data.push_back('\n');
            data.append(value);
            has_data = true;
        } else if (field == "event") {
            name = value;
        }
    }
    return false;
}

}  // namespace switchyard::core
