#include "observe/span.h"

#include <fmt/format.h>

#include <iterator>

#include "observe/json_text.h"

namespace switchyard::observe {
namespace {

// The OTLP JSON mapping's AnyValue: 64-bit integers as decimal strings.
void AppendValue(fmt::memory_buffer& out, const Span::Value& value) {
    const auto to = std::back_inserter(out);
    if (const auto* s = std::get_if<std::string>(&value)) {
        out.append(std::string_view(R"({"stringValue":)"));
        AppendJsonString(out, *s);
        out.push_back('}');
    } else if (const auto* i = std::get_if<std::int64_t>(&value)) {
        fmt::format_to(to, R"({{"intValue":"{}"}})", *i);
    } else if (const auto* d = std::get_if<double>(&value)) {
        fmt::format_to(to, R"({{"doubleValue":{}}})", *d);
    } else {
        fmt::format_to(to, R"({{"boolValue":{}}})", std::get<bool>(value));
    }
}

void AppendAttributes(fmt::memory_buffer& out,
                      const std::vector<std::pair<std::string_view, Span::Value>>& attributes) {
    out.push_back('[');
    bool first = true;
    for (const auto& [key, value] : attributes) {
        if (!first) out.push_back(',');
        first = false;
        out.append(std::string_view(R"({"key":)"));
        AppendJsonString(out, key);
        out.append(std::string_view(R"(,"value":)"));
        AppendValue(out, value);
        out.push_back('}');
    }
    out.push_back(']');
}

}  // namespace

std::string EncodeOtlpTraces(std::span<const Span> spans, std::string_view service_name,
                             std::string_view service_version) {
    // Written directly, not through a JSON document: this runs for every traced request.
    fmt::memory_buffer out;
    const auto to = std::back_inserter(out);
    out.append(std::string_view(R"({"resourceSpans":[{"resource":{"attributes":)"));
    AppendAttributes(out, {{"service.name", std::string(service_name)},
                           {"service.version", std::string(service_version)},
                           {"telemetry.sdk.name", std::string("switchyard")},
                           {"telemetry.sdk.language", std::string("cpp")}});
    out.append(std::string_view(R"(},"scopeSpans":[{"scope":{"name":"switchyard","version":)"));
    AppendJsonString(out, service_version);
    out.append(std::string_view(R"(},"spans":[)"));
    bool first = true;
    for (const Span& span : spans) {
        if (!first) out.push_back(',');
        first = false;
        fmt::format_to(to, R"({{"traceId":"{}","spanId":"{}",)", Hex(span.trace_id),
                       Hex(span.span_id));
        if (!IsZero(span.parent_id)) {
            fmt::format_to(to, R"("parentSpanId":"{}",)", Hex(span.parent_id));
        }
        out.append(std::string_view(R"("name":)"));
        AppendJsonString(out, span.name);
        fmt::format_to(to, R"(,"kind":{},"startTimeUnixNano":"{}","endTimeUnixNano":"{}",)",
                       static_cast<int>(span.kind), span.start_unix_ns, span.end_unix_ns);
        out.append(std::string_view(R"("attributes":)"));
        AppendAttributes(out, span.attributes);
        if (span.error) {
            out.append(std::string_view(R"(,"status":{"code":2,"message":)"));
            AppendJsonString(out, span.status_message);
            out.push_back('}');
        }
        out.push_back('}');
    }
    out.append(std::string_view("]}]}]}"));
    return fmt::to_string(out);
}

}  // namespace switchyard::observe
