#include "observe/trace_context.h"

namespace switchyard::observe {
namespace {

int HexDigit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;  // upper case is not allowed either
}

template <std::size_t N>
bool ReadHex(std::string_view text, std::array<std::uint8_t, N>& out) {
    if (text.size() != 2 * N) return false;
    for (std::size_t i = 0; i < N; ++i) {
        const int hi = HexDigit(text[2 * i]);
        const int lo = HexDigit(text[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
    }
    return true;
}

}  // namespace

std::optional<TraceParent> ParseTraceParent(std::string_view header) {
    // version(2) - trace id(32) - parent id(16) - flags(2)
    constexpr std::size_t kSize = 55;
    if (header.size() < kSize || header[2] != '-' || header[35] != '-' || header[52] != '-') {
        return std::nullopt;
    }
    std::array<std::uint8_t, 1> version{};
    std::array<std::uint8_t, 1> flags{};
    TraceParent parent;
    if (!ReadHex(header.substr(0, 2), version) || version[0] == 0xff ||
        !ReadHex(header.substr(3, 32), parent.trace_id) ||
        !ReadHex(header.substr(36, 16), parent.span_id) || !ReadHex(header.substr(53, 2), flags)) {
        return std::nullopt;
    }
    // Version 00 has nothing after the flags; later versions may add fields after a '-'.
    if (header.size() > kSize && (version[0] == 0 || header[kSize] != '-')) return std::nullopt;
    if (IsZero(parent.trace_id) || IsZero(parent.span_id)) return std::nullopt;
    parent.sampled = (flags[0] & 1) != 0;
    return parent;
}

std::string FormatTraceParent(const TraceParent& parent) {
    return "00-" + Hex(parent.trace_id) + "-" + Hex(parent.span_id) +
           (parent.sampled ? "-01" : "-00");
}

std::string Hex(const std::uint8_t* bytes, std::size_t size) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out(2 * size, '0');
    for (std::size_t i = 0; i < size; ++i) {
        out[2 * i] = kDigits[bytes[i] >> 4];
        out[2 * i + 1] = kDigits[bytes[i] & 0xf];
    }
    return out;
}

}  // namespace switchyard::observe
