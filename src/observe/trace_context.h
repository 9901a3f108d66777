#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace switchyard::observe {

using TraceId = std::array<std::uint8_t, 16>;
using SpanId = std::array<std::uint8_t, 8>;

// A W3C Trace Context `traceparent` (docs/observability.md#traces):
// "00-<32 hex trace id>-<16 hex parent span id>-<2 hex flags>", bit 0 of the flags = sampled.
struct TraceParent {
    TraceId trace_id{};
    SpanId span_id{};
    bool sampled = false;
};

// Parses a traceparent header. Version 00 must be exactly 55 characters; a later version may
// append fields after the flags. All-zero ids and version ff are invalid, as is upper-case hex.
std::optional<TraceParent> ParseTraceParent(std::string_view header);

// "00-<trace id>-<span id>-01" (or -00 when not sampled).
std::string FormatTraceParent(const TraceParent& parent);

// Lower-case hex of the bytes.
std::string Hex(const std::uint8_t* bytes, std::size_t size);
template <std::size_t N>
std::string Hex(const std::array<std::uint8_t, N>& id) {
    return Hex(id.data(), N);
}

template <std::size_t N>
bool IsZero(const std::array<std::uint8_t, N>& id) {
    for (const std::uint8_t b : id) {
        if (b != 0) return false;
    }
    return true;
}

}  // namespace switchyard::observe
