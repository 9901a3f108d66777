#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "observe/trace_context.h"

namespace switchyard::observe {

// One finished span, as OTLP carries it (docs/observability.md#traces).
struct Span {
    enum class Kind { kInternal = 1, kServer = 2, kClient = 3 };
    using Value = std::variant<std::string, std::int64_t, double, bool>;

    TraceId trace_id{};
    SpanId span_id{};
    SpanId parent_id{};  // all zero: a root span
    std::string name;
    Kind kind = Kind::kInternal;
    std::int64_t start_unix_ns = 0;
    std::int64_t end_unix_ns = 0;
    // Keys are string literals (attribute names are fixed); values are owned.
    std::vector<std::pair<std::string_view, Value>> attributes;
    bool error = false;  // status ERROR; otherwise UNSET
    std::string status_message;

    void Set(std::string_view key, Value value) { attributes.emplace_back(key, std::move(value)); }
    // A string attribute only when there is something to say.
    void SetIfAny(std::string_view key, std::string_view value) {
        if (!value.empty()) attributes.emplace_back(key, std::string(value));
    }
};

// The body of an OTLP/HTTP export request in its JSON encoding: one resource (`service_name`,
// `service_version`) with one instrumentation scope holding `spans`. Ids are hex, 64-bit
// integers decimal strings, as the OTLP JSON mapping requires.
std::string EncodeOtlpTraces(std::span<const Span> spans, std::string_view service_name,
                             std::string_view service_version);

}  // namespace switchyard::observe
