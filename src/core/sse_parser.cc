#include "core/sse_parser.h"

#include <algorithm>
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
        line_ -= consumed_;
        scanned_ -= consumed_;
        name_begin_ -= consumed_;
        consumed_ = 0;
    }
    buffer_.append(bytes);
}

void SseParser::Restart(std::size_t pos) {
    consumed_ = line_ = scanned_ = name_begin_ = pos;
    name_size_ = 0;
    has_data_ = false;
    data_.clear();
}

bool SseParser::Next(SseEvent& event) {
    const std::string_view all(buffer_);
    while (line_ < all.size()) {
        const std::size_t eol = LineEnd(all, std::max(line_, scanned_));
        if (eol == std::string_view::npos) {
            scanned_ = all.size();
            return false;
        }
        std::size_t next = eol + 1;
        if (all[eol] == '\r') {
            // A lone '\r' at the end may be the first half of "\r\n": wait for the next byte.
            if (next == all.size()) {
                scanned_ = eol;
                return false;
            }
            if (all[next] == '\n') ++next;
        }
        const std::string_view line = all.substr(line_, eol - line_);
        const std::size_t line_begin = line_;
        line_ = scanned_ = next;
        if (line.empty()) {
            event.raw = all.substr(consumed_, next - consumed_);
            event.name = all.substr(name_begin_, name_size_);
            event.data.swap(data_);
            event.has_data = has_data_;
            Restart(next);
            return true;
        }
        if (line.front() == ':') continue;  // comment
        const std::size_t colon = line.find(':');
        const std::string_view field = line.substr(0, colon);
        std::size_t value_begin = line.size();
        if (colon != std::string_view::npos) {
            value_begin = colon + 1;
            if (value_begin < line.size() && line[value_begin] == ' ') ++value_begin;
        }
        const std::string_view value = line.substr(value_begin);
        if (field == "data") {
            if (has_data_) data_.push_back('\n');
            data_.append(value);
            has_data_ = true;
        } else if (field == "event") {
            name_begin_ = line_begin + value_begin;
            name_size_ = value.size();
        }
    }
    return false;
}

}  // namespace switchyard::core
