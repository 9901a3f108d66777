#include "observe/span.h"

#include <boost/json.hpp>

namespace switchyard::observe {
namespace {

boost::json::object AnyValue(const Span::Value& value) {
    if (const auto* s = std::get_if<std::string>(&value)) return {{"stringValue", *s}};
    if (const auto* i = std::get_if<std::int64_t>(&value)) {
        return {{"intValue", std::to_string(*i)}};
    }
    if (const auto* d = std::get_if<double>(&value)) return {{"doubleValue", *d}};
    return {{"boolValue", std::get<bool>(value)}};
}

boost::json::array Attributes(const std::vector<std::pair<std::string, Span::Value>>& list) {
    boost::json::array out;
    out.reserve(list.size());
    for (const auto& [key, value] : list) {
        out.push_back(boost::json::object{{"key", key}, {"value", AnyValue(value)}});
    }
    return out;
}

}  // namespace

std::string EncodeOtlpTraces(std::span<const Span> spans, std::string_view service_name,
                             std::string_view service_version) {
    boost::json::array encoded;
    encoded.reserve(spans.size());
    for (const Span& span : spans) {
        boost::json::object o{{"traceId", Hex(span.trace_id)},
                              {"spanId", Hex(span.span_id)},
                              {"name", span.name},
                              {"kind", static_cast<int>(span.kind)},
                              {"startTimeUnixNano", std::to_string(span.start_unix_ns)},
                              {"endTimeUnixNano", std::to_string(span.end_unix_ns)},
                              {"attributes", Attributes(span.attributes)}};
        if (!IsZero(span.parent_id)) o["parentSpanId"] = Hex(span.parent_id);
        if (span.error) {
            o["status"] = boost::json::object{{"code", 2}, {"message", span.status_message}};
        }
        encoded.push_back(std::move(o));
    }
    const boost::json::object resource{
        {"attributes", Attributes({{"service.name", std::string(service_name)},
                                   {"service.version", std::string(service_version)},
                                   {"telemetry.sdk.name", std::string("switchyard")},
                                   {"telemetry.sdk.language", std::string("cpp")}})}};
    const boost::json::object scope{{"name", "switchyard"}, {"version", service_version}};
    return boost::json::serialize(boost::json::object{
        {"resourceSpans",
         boost::json::array{boost::json::object{
             {"resource", resource},
             {"scopeSpans", boost::json::array{boost::json::object{
                                {"scope", scope}, {"spans", std::move(encoded)}}}}}}}});
}

}  // namespace switchyard::observe
