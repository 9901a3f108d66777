#include "state/resp.h"

#include <algorithm>
#include <charconv>

namespace switchyard::state {
namespace {

constexpr int kMaxDepth = 16;
constexpr std::int64_t kMaxBulk = 512LL * 1024 * 1024;  // Redis's own proto-max-bulk-len
constexpr std::int64_t kMaxArray = 1LL << 20;
constexpr std::size_t kMaxLine = 1 << 20;

std::optional<std::int64_t> ParseInteger(std::string_view text) {
    std::int64_t value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
    return value;
}

void AppendBulk(std::string_view arg, std::string& out) {
    out += '$';
    out += std::to_string(arg.size());
    out += "\r\n";
    out += arg;
    out += "\r\n";
}

}  // namespace

std::optional<std::int64_t> RespValue::AsInteger() const {
    if (type == Type::kInteger) return integer;
    if (type == Type::kBulk || type == Type::kSimple) return ParseInteger(text);
    return std::nullopt;
}

void EncodeCommand(const std::vector<std::string>& args, std::string& out) {
    out += '*';
    out += std::to_string(args.size());
    out += "\r\n";
    for (const std::string& arg : args) AppendBulk(arg, out);
}

void EncodeCommand(std::initializer_list<std::string_view> args, std::string& out) {
    out += '*';
    out += std::to_string(args.size());
    out += "\r\n";
    for (const std::string_view arg : args) AppendBulk(arg, out);
}

void RespReader::Feed(std::string_view bytes) {
    if (failed_) return;
    // Drop what is parsed (its values live in `open_` or were handed out) before growing.
    if (pos_ > 0 && pos_ >= buffer_.size() / 2) {
        buffer_.erase(0, pos_);
        pos_ = 0;
    }
    buffer_.append(bytes);
}

std::optional<std::string_view> RespReader::Line(std::size_t pos) const {
    const std::size_t end = buffer_.find("\r\n", pos);
    if (end == std::string::npos) return std::nullopt;
    return std::string_view(buffer_).substr(pos, end - pos);
}

RespReader::Status RespReader::Next(RespValue& out) {
    if (failed_) return Status::kError;
    for (;;) {
        RespValue value;
        bool opened = false;
        const Status status = ParseOne(value, opened);
        if (status == Status::kError) failed_ = true;
        if (status != Status::kValue) return status;
        if (opened) continue;
        // A complete element: it completes the arrays it ends, innermost first.
        while (!open_.empty()) {
            Open& inner = open_.back();
            inner.array.items.push_back(std::move(value));
            if (--inner.remaining > 0) break;
            value = std::move(inner.array);
            open_.pop_back();
        }
        if (open_.empty()) {
            out = std::move(value);
            return Status::kValue;
        }
    }
}

RespReader::Status RespReader::ParseOne(RespValue& out, bool& opened) {
    // An element inside `open_.size()` arrays is that deep.
    if (open_.size() > static_cast<std::size_t>(kMaxDepth)) return Status::kError;
    if (pos_ >= buffer_.size()) return Status::kIncomplete;
    const char type = buffer_[pos_];
    const std::optional<std::string_view> line = Line(pos_ + 1);
    if (!line) {
        // No reply of ours has a header line near this long: the stream is not RESP.
        return buffer_.size() - pos_ > kMaxLine ? Status::kError : Status::kIncomplete;
    }
    const std::size_t after = pos_ + 1 + line->size() + 2;
    const auto advance = [&](std::size_t to) {
        ++parsed_elements_;
        pos_ = to;
        return Status::kValue;
    };
    switch (type) {
        case '+':
        case '-':
            out.type = type == '+' ? RespValue::Type::kSimple : RespValue::Type::kError;
            out.text = std::string(*line);
            return advance(after);
        case ':': {
            const std::optional<std::int64_t> n = ParseInteger(*line);
            if (!n) return Status::kError;
            out.type = RespValue::Type::kInteger;
            out.integer = *n;
            return advance(after);
        }
        case '$': {
            const std::optional<std::int64_t> n = ParseInteger(*line);
            if (!n || *n < -1 || *n > kMaxBulk) return Status::kError;
            if (*n == -1) {
                out.type = RespValue::Type::kNull;
                return advance(after);
            }
            const std::size_t size = static_cast<std::size_t>(*n);
            if (buffer_.size() < after + size + 2) return Status::kIncomplete;
            if (buffer_.compare(after + size, 2, "\r\n") != 0) return Status::kError;
            out.type = RespValue::Type::kBulk;
            out.text = buffer_.substr(after, size);
            return advance(after + size + 2);
        }
        case '*': {
            const std::optional<std::int64_t> n = ParseInteger(*line);
            if (!n || *n < -1 || *n > kMaxArray) return Status::kError;
            if (*n == -1) {
                out.type = RespValue::Type::kNull;
                return advance(after);
            }
            out.type = RespValue::Type::kArray;
            if (*n == 0) return advance(after);
            Open array;
            array.array.type = RespValue::Type::kArray;
            array.array.items.reserve(static_cast<std::size_t>(std::min<std::int64_t>(*n, 1024)));
            array.remaining = *n;
            open_.push_back(std::move(array));
            opened = true;
            return advance(after);
        }
        default:
            return Status::kError;
    }
}

}  // namespace switchyard::state
