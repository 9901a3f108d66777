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
    // Drop what earlier replies consumed before growing the buffer.
    if (consumed_ > 0 && consumed_ >= buffer_.size() / 2) {
        buffer_.erase(0, consumed_);
        consumed_ = 0;
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
    std::size_t pos = consumed_;
    RespValue value;
    const Status status = Parse(pos, value, 0);
    if (status == Status::kError) failed_ = true;
    if (status != Status::kValue) return status;
    consumed_ = pos;
    out = std::move(value);
    return Status::kValue;
}

RespReader::Status RespReader::Parse(std::size_t& pos, RespValue& out, int depth) {
    if (depth > kMaxDepth) return Status::kError;
    if (pos >= buffer_.size()) return Status::kIncomplete;
    const char type = buffer_[pos];
    const std::optional<std::string_view> line = Line(pos + 1);
    if (!line) {
        // No reply of ours has a header line near this long: the stream is not RESP.
        return buffer_.size() - pos > kMaxLine ? Status::kError : Status::kIncomplete;
    }
    const std::size_t after = pos + 1 + line->size() + 2;
    switch (type) {
        case '+':
        case '-':
            out.type = type == '+' ? RespValue::Type::kSimple : RespValue::Type::kError;
            out.text = std::string(*line);
            pos = after;
            return Status::kValue;
        case ':': {
            const std::optional<std::int64_t> n = ParseInteger(*line);
            if (!n) return Status::kError;
            out.type = RespValue::Type::kInteger;
            out.integer = *n;
            pos = after;
            return Status::kValue;
        }
        case '$': {
            const std::optional<std::int64_t> n = ParseInteger(*line);
            if (!n || *n < -1 || *n > kMaxBulk) return Status::kError;
            if (*n == -1) {
                out.type = RespValue::Type::kNull;
                pos = after;
                return Status::kValue;
            }
            const std::size_t size = static_cast<std::size_t>(*n);
            if (buffer_.size() < after + size + 2) return Status::kIncomplete;
            if (buffer_.compare(after + size, 2, "\r\n") != 0) return Status::kError;
            out.type = RespValue::Type::kBulk;
            out.text = buffer_.substr(after, size);
            pos = after + size + 2;
            return Status::kValue;
        }
        case '*': {
            const std::optional<std::int64_t> n = ParseInteger(*line);
            if (!n || *n < -1 || *n > kMaxArray) return Status::kError;
            if (*n == -1) {
                out.type = RespValue::Type::kNull;
                pos = after;
                return Status::kValue;
            }
            out.type = RespValue::Type::kArray;
            out.items.clear();
            out.items.reserve(static_cast<std::size_t>(std::min<std::int64_t>(*n, 1024)));
            std::size_t cursor = after;
            for (std::int64_t i = 0; i < *n; ++i) {
                RespValue item;
                const Status status = Parse(cursor, item, depth + 1);
                if (status != Status::kValue) return status;
                out.items.push_back(std::move(item));
            }
            pos = cursor;
            return Status::kValue;
        }
        default:
            return Status::kError;
    }
}

}  // namespace switchyard::state
