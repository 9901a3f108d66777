#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "config/config_sections.h"
#include "core/names.h"

// The sections of a config about what the gateway tells the outside (config_sections.h): log,
// alerts and telemetry.

namespace switchyard::config {
namespace {

// RFC 9110 section 5.6.2: a field name is a token.
bool IsHeaderName(std::string_view name) {
    constexpr std::string_view kPunctuation = "!#$%&'*+-.^_`|~";
    return !name.empty() && std::all_of(name.begin(), name.end(), [&](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               kPunctuation.find(c) != std::string_view::npos;
    });
}

}  // namespace

void ReadLog(Reader& r, const YAML::Node& node, LogConfig& log) {
    if (!r.CheckMap(node, "log", {"access"})) return;
    r.String(node, "access", log.access);
}

void ReadAlerts(Reader& r, const YAML::Node& node, AlertConfig& alerts) {
    if (!r.CheckMap(node, "alerts", {"webhook_url"})) return;
    if (r.String(node, "webhook_url", alerts.webhook_url)) {
        r.Url(node["webhook_url"], "alerts.webhook_url", "webhook_url", alerts.webhook_url);
    }
}

void ReadTelemetry(Reader& r, const YAML::Node& node, TelemetryConfig& telemetry) {
    if (!r.CheckMap(node, "telemetry",
                    {"otlp_endpoint", "service_name", "sample_ratio", "headers", "max_queue",
                     "max_batch", "export_interval_ms", "export_timeout_ms"})) {
        return;
    }
    if (r.String(node, "otlp_endpoint", telemetry.otlp_endpoint)) {
        const auto url = r.Url(node["otlp_endpoint"], "telemetry.otlp_endpoint", "otlp_endpoint",
                               telemetry.otlp_endpoint);
        if (url && url->tls) {
            r.Fail(node["otlp_endpoint"],
                   "otlp_endpoint must be http://: export to a collector beside the gateway, "
                   "which forwards over TLS");
        } else if (url) {
            telemetry.collector = *url;
            // The OTLP/HTTP convention: a base URL gets /v1/traces; a full one is kept.
            telemetry.traces_path = url->path_prefix.ends_with("/v1/traces")
                                        ? url->path_prefix
                                        : url->path_prefix + "/v1/traces";
        }
    }
    r.Name(node, "service_name", telemetry.service_name);
    if (r.Real(node, "sample_ratio", telemetry.sample_ratio) &&
        !(telemetry.sample_ratio >= 0 && telemetry.sample_ratio <= 1)) {
        r.Fail(node["sample_ratio"], "'sample_ratio' must be between 0 and 1");
    }
    if (const YAML::Node headers = node["headers"]; headers.IsDefined() && !headers.IsNull()) {
        if (!headers.IsMap()) {
            r.Fail(headers, "telemetry 'headers' must be a mapping of header names to values");
        } else {
            // Each value is read from its own entry: a lookup by name would scan the mapping
            // once per header.
            for (const auto& entry : headers) {
                const std::string name = entry.first.Scalar();
                if (!IsHeaderName(name)) {
                    r.Fail(entry.first, "telemetry.headers: '" + core::Printable(name) +
                                            "' is not a header name (RFC 9110 token characters "
                                            "only)");
                    continue;
                }
                Secret value;
                if (r.SecretAt(entry.second, name, value) &&
                    r.HeaderValue(entry.second, "telemetry.headers." + name, value.Reveal(),
                                  value.Origin())) {
                    telemetry.headers.emplace_back(name, std::move(value));
                }
            }
        }
    }
    r.Integer(node, "max_queue", telemetry.max_queue, 1, 1'000'000);
    r.Integer(node, "max_batch", telemetry.max_batch, 1, 10'000);
    r.Duration(node, "export_interval_ms", telemetry.export_interval);
    r.Duration(node, "export_timeout_ms", telemetry.export_timeout);
}

}  // namespace switchyard::config
