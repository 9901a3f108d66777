#include "config/config_loader.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <set>

#include "config/client_key.h"
#include "config/yaml_limits.h"
#include "core/json.h"
#include "core/names.h"
#include "core/sha256.h"

namespace switchyard::config {
namespace {

constexpr std::string_view kEnvPrefix = "os.environ/";

// RFC 9110 section 5.5: a field value never holds CR, LF or NUL (a CR or LF ends the field, and
// what follows would go out as a header of its own), and its grammar has no other control
// character (HTAB aside, which no setting here needs).
bool HasControlCharacter(std::string_view text) {
    return std::any_of(text.begin(), text.end(), [](char c) {
        const auto byte = static_cast<unsigned char>(c);
        return byte < 0x20 || byte == 0x7f;
    });
}

// RFC 9110 section 5.6.2: a field name is a token.
bool IsHeaderName(std::string_view name) {
    constexpr std::string_view kPunctuation = "!#$%&'*+-.^_`|~";
    return !name.empty() && std::all_of(name.begin(), name.end(), [&](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               kPunctuation.find(c) != std::string_view::npos;
    });
}

bool IsVisibleAscii(std::string_view text) {
    return std::all_of(text.begin(), text.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

// A regular file that opens for reading. Anything else is refused before it is opened: a FIFO
// would block `switchyard check` in open(), a device such as /dev/zero never ends.
bool IsReadableFile(const std::string& path) {
    std::error_code ec;
    return std::filesystem::is_regular_file(path, ec) && std::ifstream(path).good();
}

// Whether a scalar is a whole number too large for 64 bits (out of range, not "not an integer").
bool IsHugeInteger(const YAML::Node& node) {
    try {
        const double value = node.as<double>();
        return std::isfinite(value) && std::floor(value) == value && std::fabs(value) >= 9.2e18;
    } catch (const YAML::Exception&) {
        return false;
    }
}

// Walks a YAML document and collects every problem with its line instead of stopping at the
// first one.
class Reader final {
  public:
    Reader(std::string_view file, const EnvLookup& env, std::vector<Problem>& problems)
        : file_(file), env_(env), problems_(problems) {}

    void Fail(const YAML::Node& node, std::string message) {
        const int line = node.IsDefined() && node.Mark().line >= 0 ? node.Mark().line + 1 : 0;
        FailAt(line, std::move(message));
    }
    void FailAt(int line, std::string message) {
        problems_.push_back({file_, line, std::move(message)});
    }
    std::size_t ProblemCount() const { return problems_.size(); }

    // True if `node` is a map whose keys are all in `allowed`; reports each unknown key.
    bool CheckMap(const YAML::Node& node, std::string_view where,
                  std::initializer_list<std::string_view> allowed) {
        if (!node.IsMap()) {
            Fail(node, std::string(where) + " must be a mapping");
            return false;
        }
        std::set<std::string> seen;
        for (const auto& entry : node) {
            const std::string key = entry.first.Scalar();
            if (!seen.insert(key).second) {
                // YAML would keep one of them silently; a config that says two things is wrong.
                Fail(entry.first, "duplicate key '" + key + "' in " + std::string(where));
                continue;
            }
            if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
                std::string known;
                for (std::string_view k : allowed) {
                    if (!known.empty()) known += ", ";
                    known += k;
                }
                Fail(entry.first, "unknown key '" + key + "' in " + std::string(where) +
                                      " (known: " + known + ")");
            }
        }
        return true;
    }

    // A name that reaches headers, logs and URL paths (core::IsSafeName).
    bool Name(const YAML::Node& map, const char* key, std::string& out, bool required = false) {
        if (!String(map, key, out, required)) return false;
        if (core::IsSafeName(out)) return true;
        Fail(map[key], std::string("'") + key + "' must be 1 to " +
                           std::to_string(core::kMaxNameLength) +
                           " visible ASCII characters without spaces, quotes or backslashes");
        out.clear();
        return false;
    }

    bool String(const YAML::Node& map, const char* key, std::string& out, bool required = false) {
        const YAML::Node node = map[key];
        if (!node.IsDefined() || node.IsNull()) {
            if (required) Fail(map, std::string("missing required key '") + key + "'");
            return false;
        }
        return StringAt(node, key, out);
    }

    // The value `node` of `key` as a string; false (reported) when it is not a scalar.
    bool StringAt(const YAML::Node& node, std::string_view key, std::string& out) {
        if (!node.IsScalar()) {
            Fail(node, fmt::format("'{}' must be a string", key));
            return false;
        }
        out = node.Scalar();
        return true;
    }

    template <class Int>
    void Integer(const YAML::Node& map, const char* key, Int& out, long long min, long long max) {
        IntegerAt(map[key], key, out, min, max);
    }

    // The value `node` of `key` (absent or null: `out` is left alone) as an integer in
    // [min, max]; `out` holds it only when it is one.
    template <class Int>
    void IntegerAt(const YAML::Node& node, std::string_view key, Int& out, long long min,
                   long long max) {
        if (!node.IsDefined() || node.IsNull()) return;
        long long value = 0;
        try {
            value = node.as<long long>();
        } catch (const YAML::Exception&) {
            Fail(node, node.IsScalar() && IsHugeInteger(node)
                           ? fmt::format("'{}' must be between {} and {}", key, min, max)
                           : fmt::format("'{}' must be an integer", key));
            return;
        }
        if (value < min || value > max) {
            Fail(node, fmt::format("'{}' must be between {} and {}", key, min, max));
            return;
        }
        out = static_cast<Int>(value);
    }

    void Bool(const YAML::Node& map, const char* key, bool& out) {
        const YAML::Node node = map[key];
        if (!node.IsDefined() || node.IsNull()) return;
        if (!node.IsScalar() || (node.Scalar() != "true" && node.Scalar() != "false")) {
            Fail(node, std::string("'") + key + "' must be true or false");
            return;
        }
        out = node.Scalar() == "true";
    }

    void Duration(const YAML::Node& map, const char* key, Millis& out, long long min = 1) {
        long long ms = out.count();
        Integer(map, key, ms, min, 24LL * 3600 * 1000);
        out = Millis(ms);
    }

    // Any finite number; false when absent or not one. YAML's .inf and .nan are numbers to
    // yaml-cpp, but no setting means anything by them.
    bool Real(const YAML::Node& map, const char* key, double& out) {
        const YAML::Node node = map[key];
        if (!node.IsDefined() || node.IsNull()) return false;
        double value = 0;
        try {
            value = node.as<double>();
        } catch (const YAML::Exception&) {
            Fail(node, std::string("'") + key + "' must be a number");
            return false;
        }
        if (!std::isfinite(value)) {
            Fail(node, std::string("'") + key + "' must be a finite number");
            return false;
        }
        out = value;
        return true;
    }

    // A number greater than 0 (or at least 0 with `allow_zero`).
    void Number(const YAML::Node& map, const char* key, double& out, bool allow_zero = false) {
        if (!Real(map, key, out)) return;
        const YAML::Node node = map[key];
        if (allow_zero ? !(out >= 0) : !(out > 0)) {
            Fail(node, std::string("'") + key + "' must be " +
                           (allow_zero ? "at least 0" : "greater than 0"));
        }
    }

    // `os.environ/NAME` reads the environment; anything else is an inline value.
    bool SecretValue(const YAML::Node& map, const char* key, Secret& out) {
        const YAML::Node node = map[key];
        if (!node.IsDefined() || node.IsNull()) return false;
        return SecretAt(node, key, out);
    }

    // The value `node` of `key` as a secret; false (reported) when it cannot be one.
    bool SecretAt(const YAML::Node& node, std::string_view key, Secret& out) {
        std::string text;
        if (!StringAt(node, key, text)) return false;
        if (!std::string_view(text).starts_with(kEnvPrefix)) {
            out = Secret(text, "inline");
            return true;
        }
        const std::string name = text.substr(kEnvPrefix.size());
        const std::optional<std::string> value = env_(name);
        if (!value || value->empty()) {
            Fail(node, fmt::format("'{}': environment variable {} is not set", key, name));
            return false;
        }
        out = Secret(*value, "env " + name);
        return true;
    }

    // False (reported) when `value`, bound for an outgoing request header (upstream or
    // collector), holds a control character. `field` names the setting
    // ("models[0].deployments[1].api_key"); the value is never shown, as it is usually a secret,
    // but where it came from is.
    bool HeaderValue(const YAML::Node& at, std::string_view field, std::string_view value,
                     std::string_view origin = "inline") {
        if (!HasControlCharacter(value)) return true;
        const std::string from = origin.starts_with("env ")
                                     ? fmt::format(" (environment variable {})", origin.substr(4))
                                     : std::string();
        Fail(at, fmt::format("{}{}: contains a control character (CR, LF or another); header "
                             "values cannot carry it",
                             field, from));
        return false;
    }

    // A base URL (api_base, webhook_url, otlp_endpoint) read from `key`: its host becomes a Host
    // header and its path the start of a request line, both as written, so it must be visible
    // ASCII (as RFC 3986 has it) before it is parsed. nullopt (reported) otherwise.
    std::optional<core::BaseUrl> Url(const YAML::Node& at, std::string_view field,
                                     std::string_view key, const std::string& text) {
        if (!IsVisibleAscii(text)) {
            Fail(at, fmt::format("{}: contains a space, a control character or a non-ASCII byte; "
                                 "a URL here must be visible ASCII (percent-encode the rest)",
                                 field));
            return std::nullopt;
        }
        std::string error;
        auto url = core::ParseBaseUrl(text, error);
        // Not shown: a URL may carry a secret (a webhook's token, credentials refused here).
        if (!url) Fail(at, fmt::format("invalid {}: {}", key, error));
        return url;
    }

  private:
    std::string file_;
    const EnvLookup& env_;
    std::vector<Problem>& problems_;
};

void ReadServer(Reader& r, const YAML::Node& node, ServerConfig& server) {
    if (!r.CheckMap(node, "server",
                    {"listen", "workers", "max_body_bytes", "max_body_bytes_in_flight",
                     "max_body_bytes_in_flight_per_key", "header_timeout_ms", "idle_timeout_ms",
                     "write_timeout_ms", "drain_delay_ms", "drain_timeout_ms", "master_key",
                     "stream_mode"})) {
        return;
    }
    std::string listen;
    if (r.String(node, "listen", listen) &&
        !core::ParseHostPort(listen, server.listen_host, server.listen_port)) {
        r.Fail(node["listen"], "'listen' must be HOST:PORT, e.g. 127.0.0.1:4000");
    }
    r.Integer(node, "workers", server.workers, 0, 256);
    r.Integer(node, "max_body_bytes", server.max_body_bytes, 1024, 1LL << 30);
    r.Integer(node, "max_body_bytes_in_flight", server.max_body_bytes_in_flight, 1024, 1LL << 40);
    r.Integer(node, "max_body_bytes_in_flight_per_key", server.max_body_bytes_in_flight_per_key,
              1024, 1LL << 40);
    r.Duration(node, "header_timeout_ms", server.header_timeout);
    r.Duration(node, "idle_timeout_ms", server.idle_timeout);
    r.Duration(node, "write_timeout_ms", server.write_timeout);
    r.Duration(node, "drain_delay_ms", server.drain_delay, 0);
    r.Duration(node, "drain_timeout_ms", server.drain_timeout);
    r.SecretValue(node, "master_key", server.master_key);
    std::string mode;
    if (r.String(node, "stream_mode", mode)) {
        if (const auto parsed = ParseStreamMode(mode)) {
            server.stream_mode = *parsed;
        } else {
            r.Fail(node["stream_mode"], "'stream_mode' must be " + std::string(kStreamModeChoices));
        }
    }
}

void ReadTimeouts(Reader& r, const YAML::Node& node, Timeouts& timeouts) {
    if (!r.CheckMap(node, "timeouts",
                    {"connect_ms", "first_byte_ms", "first_token_ms", "chunk_ms", "total_ms",
                     "pings_are_progress", "stream_upstream_over_max_tokens"})) {
        return;
    }
    r.Duration(node, "connect_ms", timeouts.connect);
    r.Duration(node, "first_byte_ms", timeouts.first_byte);
    r.Duration(node, "first_token_ms", timeouts.first_token);
    r.Duration(node, "chunk_ms", timeouts.chunk);
    r.Duration(node, "total_ms", timeouts.total);
    r.Bool(node, "pings_are_progress", timeouts.pings_are_progress);
    r.Integer(node, "stream_upstream_over_max_tokens", timeouts.stream_upstream_over_max_tokens, 0,
              100'000'000);
}

void ReadLog(Reader& r, const YAML::Node& node, LogConfig& log) {
    if (!r.CheckMap(node, "log", {"access"})) return;
    r.String(node, "access", log.access);
}

// One deployment of `group`; `where` names it in problems ("models[0].deployments[1]").
void ReadDeployment(Reader& r, const YAML::Node& node, const std::string& group,
                    const std::string& where, Deployment& out) {
    out.line = node.Mark().line + 1;
    if (!r.CheckMap(
            node, "deployment of '" + group + "'",
            {"name", "provider", "model", "api_base", "api_key", "weight", "ca_file", "input_price",
             "output_price", "anthropic_version", "limits", "responses_api", "region"})) {
        return;
    }
    std::string provider = "openai";
    r.String(node, "provider", provider);
    if (provider == "openai") {
        out.provider = Provider::kOpenAi;
    } else if (provider == "anthropic") {
        out.provider = Provider::kAnthropic;
    } else {
        r.Fail(node["provider"],
               "unsupported provider '" + provider + "' (supported: openai, anthropic)");
    }
    if (r.String(node, "anthropic_version", out.anthropic_version)) {
        r.HeaderValue(node["anthropic_version"], where + ".anthropic_version",
                      out.anthropic_version);
    }
    r.Name(node, "model", out.model, /*required=*/true);
    out.api_base = out.provider == Provider::kAnthropic ? "https://api.anthropic.com/v1"
                                                        : "https://api.openai.com/v1";
    r.String(node, "api_base", out.api_base);
    if (auto url = r.Url(node["api_base"].IsDefined() ? node["api_base"] : node,
                         where + ".api_base", "api_base", out.api_base)) {
        out.base_url = std::move(*url);
    }
    out.responses_api =
        out.provider == Provider::kOpenAi && out.base_url.HostHeader() == "api.openai.com";
    r.Bool(node, "responses_api", out.responses_api);
    if (out.responses_api && out.provider != Provider::kOpenAi) {
        r.Fail(node["responses_api"], "'responses_api' is for OpenAI deployments");
    }
    if (r.SecretValue(node, "api_key", out.api_key) &&
        !r.HeaderValue(node["api_key"], where + ".api_key", out.api_key.Reveal(),
                       out.api_key.Origin())) {
        out.api_key = Secret();
    }
    r.Number(node, "weight", out.weight);
    r.Number(node, "input_price", out.input_price, /*allow_zero=*/true);
    r.Number(node, "output_price", out.output_price, /*allow_zero=*/true);
    if (r.String(node, "ca_file", out.ca_file) && !IsReadableFile(out.ca_file)) {
        r.Fail(node["ca_file"], "ca_file '" + out.ca_file + "' cannot be read");
    }
    r.Name(node, "name", out.name);
    if (r.String(node, "region", out.region) && !core::IsRegionName(out.region)) {
        r.Fail(node["region"], "'region' must be 1 to 32 lowercase letters, digits or '-'");
    }
    if (const YAML::Node limits = node["limits"]; limits.IsDefined()) {
        if (r.CheckMap(limits, "deployment limits", {"rpm", "tpm", "itpm", "otpm"})) {
            constexpr long long kMax = 1'000'000'000'000LL;
            r.Integer(limits, "rpm", out.limits.rpm, 0, kMax);
            r.Integer(limits, "tpm", out.limits.tpm, 0, kMax);
            r.Integer(limits, "itpm", out.limits.itpm, 0, kMax);
            r.Integer(limits, "otpm", out.limits.otpm, 0, kMax);
        }
    }
}

void ReadRetry(Reader& r, const YAML::Node& node, RetryConfig& retry) {
    if (!r.CheckMap(node, "retry",
                    {"max_attempts", "num_retries", "base_ms", "cap_ms", "deadline_ms",
                     "class_retries", "budget"})) {
        return;
    }
    r.Integer(node, "max_attempts", retry.max_attempts, 1, 100);
    if (node["num_retries"].IsDefined()) {
        int retries = 0;
        r.Integer(node, "num_retries", retries, 0, 20);
        retry.num_retries = retries;
    }
    r.Duration(node, "base_ms", retry.base);
    r.Duration(node, "cap_ms", retry.cap);
    r.Duration(node, "deadline_ms", retry.deadline);
    if (const YAML::Node classes = node["class_retries"]; classes.IsDefined()) {
        if (classes.IsMap()) {
            for (const auto& entry : classes) {
                const std::string name = entry.first.Scalar();
                const auto error_class = policy::ErrorClassNamed(name);
                const bool settable =
                    error_class &&
                    std::find(std::begin(kRetryableClasses), std::end(kRetryableClasses),
                              *error_class) != std::end(kRetryableClasses);
                if (!settable) {
                    std::string known;
                    for (const policy::ErrorClass c : kRetryableClasses) {
                        known += (known.empty() ? "" : ", ") + std::string(policy::Name(c));
                    }
                    r.Fail(entry.first, "unknown error class '" + name +
                                            "' in class_retries (known: " + known + ")");
                    continue;
                }
                // From the entry itself: a lookup by name would scan the mapping again.
                r.IntegerAt(entry.second, name, retry.class_retries[*error_class], 0, 20);
            }
        } else {
            r.Fail(classes, "'class_retries' must be a mapping of error class to retries");
        }
    }
    if (const YAML::Node budget = node["budget"]; budget.IsDefined()) {
        if (r.CheckMap(budget, "retry.budget", {"max_tokens", "token_ratio"})) {
            r.Number(budget, "max_tokens", retry.budget_max_tokens);
            r.Number(budget, "token_ratio", retry.budget_token_ratio);
        }
    }
}

void ReadHealth(Reader& r, const YAML::Node& node, HealthConfig& health) {
    if (!r.CheckMap(
            node, "health",
            {"allowed_fails", "allowed_failure_rate", "window_ms", "cooldown_ms", "breaker"})) {
        return;
    }
    r.Integer(node, "allowed_fails", health.allowed_fails, 0, 1000);
    r.Number(node, "allowed_failure_rate", health.allowed_failure_rate, true);
    if (health.allowed_failure_rate > 1) {
        r.Fail(node["allowed_failure_rate"], "'allowed_failure_rate' must be at most 1");
    }
    r.Duration(node, "window_ms", health.window);
    r.Duration(node, "cooldown_ms", health.cooldown);
    const YAML::Node breaker = node["breaker"];
    if (!breaker.IsDefined()) return;
    if (!r.CheckMap(breaker, "health.breaker",
                    {"consecutive_failures", "failure_rate", "minimum_calls", "open_ms",
                     "half_open_probes", "success_threshold"})) {
        return;
    }
    r.Integer(breaker, "consecutive_failures", health.breaker_consecutive_failures, 1, 1000);
    r.Number(breaker, "failure_rate", health.breaker_failure_rate);
    if (health.breaker_failure_rate > 1)
        r.Fail(breaker["failure_rate"], "'failure_rate' must be at most 1");
    r.Integer(breaker, "minimum_calls", health.breaker_minimum_calls, 1, 100000);
    r.Duration(breaker, "open_ms", health.breaker_open);
    r.Integer(breaker, "half_open_probes", health.breaker_half_open_probes, 1, 1000);
    r.Integer(breaker, "success_threshold", health.breaker_success_threshold, 1, 1000);
}

void ReadAlerts(Reader& r, const YAML::Node& node, AlertConfig& alerts) {
    if (!r.CheckMap(node, "alerts", {"webhook_url"})) return;
    if (r.String(node, "webhook_url", alerts.webhook_url)) {
        r.Url(node["webhook_url"], "alerts.webhook_url", "webhook_url", alerts.webhook_url);
    }
}

void ReadState(Reader& r, const YAML::Node& node, StateConfig& state) {
    if (!r.CheckMap(node, "state",
                    {"backend", "url", "password", "tls", "ca_file", "key_prefix", "timeout_ms",
                     "connect_timeout_ms"})) {
        return;
    }
    std::string backend = "memory";
    r.String(node, "backend", backend);
    if (backend == "memory") {
        state.backend = StateConfig::Backend::kMemory;
    } else if (backend == "redis") {
        state.backend = StateConfig::Backend::kRedis;
    } else {
        r.Fail(node["backend"], "'backend' must be 'memory' or 'redis'");
    }
    if (r.String(node, "url", state.url)) {
        std::string error;
        if (const auto url = core::ParseRedisUrl(state.url, error)) {
            state.host = url->host;
            state.port = url->port;
            state.db = url->db;
            state.username = url->username;
            state.tls = url->tls;
            if (!url->password.empty()) state.password = Secret(url->password, "url");
            // What is shown of the URL (logs, /status) never carries the password.
            if (!url->password.empty()) {
                const std::size_t at = state.url.rfind('@');
                const std::size_t scheme = state.url.find("://") + 3;
                state.url = state.url.substr(0, scheme) +
                            (url->username.empty() ? "" : url->username + ":") + "***" +
                            state.url.substr(at);
            }
        } else {
            r.Fail(node["url"], "invalid url: " + error);
        }
    }
    r.SecretValue(node, "password", state.password);
    r.Bool(node, "tls", state.tls);
    r.String(node, "ca_file", state.ca_file);
    if (r.String(node, "key_prefix", state.key_prefix) &&
        (state.key_prefix.size() > 64 ||
         state.key_prefix.find_first_of("{} \t\r\n") != std::string::npos)) {
        r.Fail(node["key_prefix"],
               "'key_prefix' must be at most 64 characters without braces or white space");
    }
    r.Duration(node, "timeout_ms", state.timeout);
    r.Duration(node, "connect_timeout_ms", state.connect_timeout);
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

void ReadIdempotency(Reader& r, const YAML::Node& node, IdempotencyConfig& idempotency) {
    if (!r.CheckMap(node, "idempotency", {"ttl_s", "max_answer_bytes", "max_bytes"})) return;
    long long ttl = idempotency.ttl.count();
    r.Integer(node, "ttl_s", ttl, 1, 30LL * 24 * 3600);
    idempotency.ttl = std::chrono::seconds(ttl);
    r.Integer(node, "max_answer_bytes", idempotency.max_answer_bytes, 1024, 256LL << 20);
    r.Integer(node, "max_bytes", idempotency.max_bytes, 64 * 1024, 64LL << 30);
}

void ReadCache(Reader& r, const YAML::Node& node, CacheConfig& cache) {
    if (!r.CheckMap(node, "cache", {"serve", "ttl_s", "max_entries", "max_entry_bytes", "shared"}))
        return;
    std::string serve;
    if (r.String(node, "serve", serve)) {
        if (serve == "on_error") {
            cache.serve = CacheConfig::Serve::kOnError;
        } else if (serve == "always") {
            cache.serve = CacheConfig::Serve::kAlways;
        } else {
            r.Fail(node["serve"], "cache 'serve' must be 'on_error' or 'always'");
        }
    }
    long long ttl = cache.ttl.count();
    r.Integer(node, "ttl_s", ttl, 1, 30LL * 24 * 3600);
    cache.ttl = std::chrono::seconds(ttl);
    r.Integer(node, "max_entries", cache.max_entries, 1, 10'000'000);
    r.Integer(node, "max_entry_bytes", cache.max_entry_bytes, 1024, 64LL << 20);
    r.Bool(node, "shared", cache.shared);
}

void ReadDegradation(Reader& r, const YAML::Node& node, DegradationConfig& degradation) {
    if (!r.CheckMap(node, "degradation", {"mode", "content"})) return;
    std::string mode = "error";
    r.String(node, "mode", mode);
    if (mode == "error") {
        degradation.mode = DegradationConfig::Mode::kError;
    } else if (mode == "static") {
        degradation.mode = DegradationConfig::Mode::kStatic;
        r.String(node, "content", degradation.content, /*required=*/true);
    } else {
        r.Fail(node["mode"], "degradation 'mode' must be 'error' or 'static'");
    }
}

std::string JsonString(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char escaped[8];
                    std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
                    out += escaped;
                } else {
                    out.push_back(c);
                }
        }
    }
    return out + "\"";
}

// A YAML scalar as JSON text: numbers and booleans keep their type, anything else is a string.
std::string ScalarAsJson(const YAML::Node& node) {
    const std::string& text = node.Scalar();
    if (node.Tag() != "!") {  // unquoted in the YAML
        if (text == "true" || text == "false" || text == "null") return text;
        // YAML spellings such as ".5", "+1", "1." or "010" are not JSON: re-print the value.
        try {
            return std::to_string(node.as<long long>());
        } catch (const YAML::Exception&) {
        }
        try {
            const double value = node.as<double>();
            if (std::isfinite(value)) {
                std::string json = fmt::format("{}", value);
                // Keep it a JSON float: 1e3 is 1000.0, not the integer 1000.
                if (json.find_first_of(".e") == std::string::npos) json += ".0";
                return json;
            }
        } catch (const YAML::Exception&) {
        }
    }
    return JsonString(text);
}

// The most a schema given as a YAML mapping may become, as JSON: far more than any schema a
// model is asked to follow, far less than what a few nested aliases expand to.
constexpr std::size_t kMaxSchemaNodes = 100'000;
constexpr std::size_t kMaxSchemaBytes = 1 << 20;

// Appends `node` as JSON text (mappings, sequences and scalars, recursively) to `out`, counting
// nodes in `nodes`. False, with `out` unfinished, as soon as it passes kMaxSchemaNodes,
// kMaxSchemaBytes or core::kMaxJsonDepth: the walk follows aliases, so its size is the
// expansion's, not the text's. Each scalar adds at most six bytes per byte of its text.
bool AppendJson(const YAML::Node& node, std::size_t depth, std::size_t& nodes, std::string& out) {
    if (++nodes > kMaxSchemaNodes || depth > core::kMaxJsonDepth) return false;
    if (node.IsMap()) {
        out += '{';
        bool first = true;
        for (const auto& member : node) {
            if (!first) out += ',';
            first = false;
            out += JsonString(member.first.Scalar());
            out += ':';
            if (!AppendJson(member.second, depth + 1, nodes, out)) return false;
        }
        out += '}';
    } else if (node.IsSequence()) {
        out += '[';
        bool first = true;
        for (const auto& element : node) {
            if (!first) out += ',';
            first = false;
            if (!AppendJson(element, depth + 1, nodes, out)) return false;
        }
        out += ']';
    } else {
        out += node.IsNull() ? std::string("null") : ScalarAsJson(node);
    }
    return out.size() <= kMaxSchemaBytes;
}

// `where` names the validation in problems ("models[0].validation").
void ReadValidation(Reader& r, const YAML::Node& node, const std::string& where,
                    ValidationConfig& validation) {
    if (!r.CheckMap(node, "validation", {"schema", "on_invalid"})) return;
    std::string on_invalid;
    if (r.String(node, "on_invalid", on_invalid)) {
        if (on_invalid == "fallback") {
            validation.on_invalid = ValidationConfig::OnInvalid::kFallback;
        } else if (on_invalid == "annotate") {
            validation.on_invalid = ValidationConfig::OnInvalid::kAnnotate;
        } else {
            r.Fail(node["on_invalid"], "validation 'on_invalid' must be 'fallback' or 'annotate'");
        }
    }
    const YAML::Node schema = node["schema"];
    if (!schema.IsDefined() || schema.IsNull()) return;
    // A mapping in YAML, or JSON text.
    std::size_t nodes = 0;
    if (schema.IsScalar()) {
        validation.schema = schema.Scalar();
    } else if (!AppendJson(schema, 0, nodes, validation.schema)) {
        const std::string bound =
            nodes > kMaxSchemaNodes ? fmt::format("expands to more than {} nodes", kMaxSchemaNodes)
            : validation.schema.size() > kMaxSchemaBytes
                ? fmt::format("expands to more than {} MiB of JSON", kMaxSchemaBytes >> 20)
                : fmt::format("nests deeper than {} levels", core::kMaxJsonDepth);
        validation.schema.clear();
        r.Fail(schema, fmt::format("{}.schema: {} (YAML aliases?)", where, bound));
        return;
    }
    if (validation.schema.size() > kMaxSchemaBytes) {
        validation.schema.clear();
        r.Fail(schema,
               fmt::format("{}.schema: more than {} MiB of JSON", where, kMaxSchemaBytes >> 20));
    } else if (!core::IsJsonObject(validation.schema)) {
        r.Fail(schema,
               "validation 'schema' must be a JSON Schema object (a mapping, or JSON text)");
    }
}

// A list of names under `key` (`what` says what they are, e.g. "model group names"), each
// checked by `valid`.
void ReadNameList(Reader& r, const YAML::Node& node, const char* key, std::string_view what,
                  const std::function<bool(const std::string&)>& valid,
                  std::vector<std::string>& out) {
    const YAML::Node list = node[key];
    if (!list.IsDefined() || list.IsNull()) return;
    if (!list.IsSequence()) {
        r.Fail(list, std::string("'") + key + "' must be a list of " + std::string(what));
        return;
    }
    for (const auto& item : list) {
        if (!item.IsScalar() || !valid(item.Scalar())) {
            r.Fail(item, std::string("'") + key + "' entries must be " + std::string(what));
            continue;
        }
        out.push_back(item.Scalar());
    }
}

void ReadGroupList(Reader& r, const YAML::Node& node, const char* key,
                   std::vector<std::string>& out) {
    ReadNameList(
        r, node, key, "model group names", [](const std::string&) { return true; }, out);
}

// A list of region names (a residency constraint).
void ReadRegionList(Reader& r, const YAML::Node& node, const char* key,
                    std::vector<std::string>& out) {
    ReadNameList(
        r, node, key, "regions: 1 to 32 lowercase letters, digits or '-'",
        [](const std::string& name) { return core::IsRegionName(name); }, out);
}

void ReadModels(Reader& r, const YAML::Node& node, std::vector<ModelGroup>& models) {
    if (!node.IsSequence()) {
        r.Fail(node, "'models' must be a list of model groups");
        return;
    }
    std::size_t index = 0;
    for (const auto& entry : node) {
        const std::string where = fmt::format("models[{}]", index++);
        ModelGroup group;
        if (!r.CheckMap(entry, "model group",
                        {"name", "mode", "deployments", "strategy", "fallbacks",
                         "context_window_fallbacks", "content_policy_fallbacks", "prompt", "params",
                         "residency", "cache", "validation"})) {
            models.push_back(std::move(group));  // keeps models[i] aligned with the YAML entries
            continue;
        }
        r.Name(entry, "name", group.name, /*required=*/true);
        std::string mode;
        if (r.String(entry, "mode", mode)) {
            if (mode == "chat") {
                group.mode = GroupMode::kChat;
            } else if (mode == "embeddings") {
                group.mode = GroupMode::kEmbeddings;
            } else {
                r.Fail(entry["mode"], "'mode' must be chat or embeddings");
            }
        }
        std::string strategy;
        if (r.String(entry, "strategy", strategy)) {
            static const std::pair<std::string_view, Strategy> kStrategies[] = {
                {"weighted", Strategy::kWeighted},
                {"priority", Strategy::kPriority},
                {"least_in_flight", Strategy::kLeastInFlight},
                {"lowest_latency", Strategy::kLowestLatency},
                {"cheapest", Strategy::kCheapest},
                {"power_of_two", Strategy::kPowerOfTwo}};
            const auto it = std::find_if(std::begin(kStrategies), std::end(kStrategies),
                                         [&](const auto& s) { return s.first == strategy; });
            if (it == std::end(kStrategies)) {
                r.Fail(entry["strategy"], "unknown strategy '" + strategy +
                                              "' (known: weighted, priority, least_in_flight, "
                                              "lowest_latency, cheapest, power_of_two)");
            } else {
                group.strategy = it->second;
            }
        }
        ReadGroupList(r, entry, "fallbacks", group.fallbacks);
        ReadRegionList(r, entry, "residency", group.residency);
        if (const YAML::Node cache = entry["cache"]; cache.IsDefined() && !cache.IsNull()) {
            ReadCache(r, cache, group.cache.emplace());
        }
        if (const YAML::Node validation = entry["validation"];
            validation.IsDefined() && !validation.IsNull()) {
            ReadValidation(r, validation, where + ".validation", group.validation);
        }
        ReadGroupList(r, entry, "context_window_fallbacks", group.context_window_fallbacks);
        ReadGroupList(r, entry, "content_policy_fallbacks", group.content_policy_fallbacks);
        if (const YAML::Node prompt = entry["prompt"]; prompt.IsDefined()) {
            if (r.CheckMap(prompt, "prompt", {"system"})) {
                std::string system;
                if (r.String(prompt, "system", system)) group.system_prompt = system;
            }
        }
        if (const YAML::Node params = entry["params"]; params.IsDefined()) {
            if (!params.IsMap()) {
                r.Fail(params, "'params' must be a mapping of request parameters");
            } else {
                for (const auto& p : params) {
                    const std::string name = p.first.Scalar();
                    if (name == "model" || name == "messages" || name == "stream") {
                        r.Fail(p.first, "'params' cannot set '" + name + "'");
                    } else if (!p.second.IsScalar()) {
                        r.Fail(p.second, "'params." + name + "' must be a scalar");
                    } else {
                        group.params.emplace_back(name, ScalarAsJson(p.second));
                    }
                }
            }
        }
        const YAML::Node deployments = entry["deployments"];
        if (!deployments.IsDefined() || !deployments.IsSequence() || deployments.size() == 0) {
            r.Fail(deployments.IsDefined() ? deployments : entry,
                   "model group '" + group.name + "' needs a non-empty 'deployments' list");
        } else {
            std::size_t d_index = 0;
            for (const auto& d : deployments) {
                Deployment deployment;
                ReadDeployment(r, d, group.name,
                               fmt::format("{}.deployments[{}]", where, d_index++), deployment);
                group.deployments.push_back(std::move(deployment));
            }
        }
        models.push_back(std::move(group));
    }
}

// Checks that group and deployment names are unique and fallbacks name existing groups (each
// problem at its own line), then names every deployment that has no name. models[i] is the
// i-th entry of the YAML `models` list.
void LinkModels(Reader& r, const YAML::Node& root, Config& config) {
    const YAML::Node entries = root["models"];
    auto entry_key = [&](std::size_t i, const char* key) {
        const YAML::Node entry = entries[i];
        const YAML::Node value = entry.IsMap() ? entry[key] : YAML::Node();
        return value.IsDefined() ? value : entry;
    };
    // Every lookup below goes through these indexes, so that a config of many groups and
    // fallbacks (a few aliases make one) is linked in n log n, not n².
    std::map<std::string, GroupMode> group_names;  // the first group of each name
    std::set<std::string> deployment_names;
    for (std::size_t i = 0; i < config.models.size(); ++i) {
        const ModelGroup& group = config.models[i];
        if (!group.name.empty() && !group_names.emplace(group.name, group.mode).second) {
            r.Fail(entry_key(i, "name"), "duplicate model group name '" + group.name + "'");
        }
        for (const auto& d : group.deployments) {
            if (!d.name.empty() && !deployment_names.insert(d.name).second) {
                r.FailAt(d.line, "duplicate deployment name '" + d.name + "'");
            }
        }
    }
    for (std::size_t i = 0; i < config.models.size(); ++i) {
        const ModelGroup& group = config.models[i];
        const std::pair<const char*, const std::vector<std::string>*> lists[] = {
            {"fallbacks", &group.fallbacks},
            {"context_window_fallbacks", &group.context_window_fallbacks},
            {"content_policy_fallbacks", &group.content_policy_fallbacks}};
        for (const auto& [key, list] : lists) {
            for (const std::string& target : *list) {
                if (!group_names.contains(target)) {
                    r.Fail(entry_key(i, key), "model group '" + group.name +
                                                  "' falls back to unknown group '" + target + "'");
                } else if (target == group.name) {
                    r.Fail(entry_key(i, key),
                           "model group '" + group.name + "' cannot fall back to itself");
                } else if (group_names.at(target) != group.mode) {
                    r.Fail(entry_key(i, key), "model group '" + group.name + "' falls back to '" +
                                                  target +
                                                  "', which serves another mode (chat or "
                                                  "embeddings)");
                }
            }
        }
        if (group.mode == GroupMode::kEmbeddings) {
            for (const auto& d : group.deployments) {
                if (d.provider != Provider::kOpenAi) {
                    r.FailAt(d.line, "deployment '" + d.name + "' of embeddings group '" +
                                         group.name +
                                         "' must be OpenAI-compatible (Anthropic has no "
                                         "embeddings API)");
                }
            }
        }
    }
    // The suffix to try next for each default name: n deployments of one model and host are
    // named in n steps, not n² / 2.
    std::map<std::string, int> next_suffix;
    for (auto& group : config.models) {
        for (auto& d : group.deployments) {
            d.index = config.deployment_count++;
            if (!d.name.empty()) continue;
            const std::string base = d.model + "@" + d.base_url.HostHeader();
            std::string candidate = base;
            int& n = next_suffix.try_emplace(base, 2).first->second;
            while (deployment_names.contains(candidate)) {
                candidate = base + "#" + std::to_string(n++);
            }
            d.name = candidate;
            deployment_names.insert(candidate);
        }
    }
}

constexpr std::size_t kMaxLanes = 64;

void ReadLimits(Reader& r, const YAML::Node& node, LimitsConfig& limits) {
    if (!r.CheckMap(node, "limits", {"self_throttle", "burst_ms", "lanes"})) return;
    r.Bool(node, "self_throttle", limits.self_throttle);
    r.Duration(node, "burst_ms", limits.burst);
    if (limits.burst > std::chrono::minutes(1))
        r.Fail(node["burst_ms"], "'burst_ms' must be at most 60000");
    const YAML::Node lanes = node["lanes"];
    if (!lanes.IsDefined()) return;
    if (!lanes.IsSequence() || lanes.size() == 0) {
        r.Fail(lanes, "'lanes' must be a non-empty list of lanes");
        return;
    }
    // Lanes are a handful of workload classes; each client key is checked against all of them
    // (and a refusal lists them), so their number is bounded where keys and aliases are not.
    if (lanes.size() > kMaxLanes) {
        r.Fail(lanes, fmt::format("'lanes' may list at most {} lanes", kMaxLanes));
        return;
    }
    limits.lanes.clear();
    for (const auto& entry : lanes) {
        Lane lane;
        lane.line = entry.Mark().line + 1;
        if (r.CheckMap(entry, "lane", {"name", "share", "max_queue", "slow_start_ms"})) {
            r.Name(entry, "name", lane.name, /*required=*/true);
            r.Number(entry, "share", lane.share);
            if (lane.share > 1) r.Fail(entry["share"], "'share' must be at most 1");
            r.Integer(entry, "max_queue", lane.max_queue, 0, 1'000'000);
            long long ramp = lane.slow_start.count();
            r.Integer(entry, "slow_start_ms", ramp, 0, 24LL * 3600 * 1000);
            lane.slow_start = Millis(ramp);
        }
        if (!lane.name.empty() && limits.FindLane(lane.name)) {
            r.Fail(entry["name"], "duplicate lane name '" + lane.name + "'");
        }
        limits.lanes.push_back(std::move(lane));
    }
}

// Client keys: the plaintext only from the environment (or just its SHA-256), never inline. Each
// field is read as YAML here; its bounds are ValidateClientKey's.
void ReadKeys(Reader& r, const YAML::Node& node, Config& config) {
    if (!node.IsSequence()) {
        r.Fail(node, "'keys' must be a list of client keys");
        return;
    }
    constexpr long long kAnyInteger = std::numeric_limits<long long>::max();
    std::set<std::string> names;
    std::set<std::string> hashes;
    std::set<std::string, std::less<>> groups;
    for (const ModelGroup& group : config.models) groups.insert(group.name);
    const auto has_group = [&](std::string_view name) { return groups.contains(name); };
    for (const auto& entry : node) {
        ClientKey key;
        key.line = entry.Mark().line + 1;
        if (!r.CheckMap(entry, "client key",
                        {"name", "key", "key_sha256", "rpm", "tpm", "monthly_budget", "models",
                         "lane", "fallbacks", "stream_mode", "slow_start_ms", "residency"})) {
            continue;
        }
        // Fields already reported as unreadable; their bounds are not checked again.
        std::set<std::string> unread;
        const auto read = [&](const char* field, const auto& read_field) {
            const std::size_t before = r.ProblemCount();
            read_field();
            if (r.ProblemCount() != before) unread.insert(field);
        };
        read("name", [&] { r.String(entry, "name", key.name, /*required=*/true); });
        if (!key.name.empty() && !names.insert(key.name).second) {
            r.Fail(entry["name"], "duplicate client key name '" + key.name + "'");
        }
        std::string text;
        read("key", [&] {
            if (!r.String(entry, "key", text)) return;
            if (!std::string_view(text).starts_with(kEnvPrefix)) {
                r.Fail(entry["key"],
                       "client key '" + key.name +
                           "': 'key' must be os.environ/NAME (or give 'key_sha256'); plaintext "
                           "keys are not accepted in the config");
                return;
            }
            Secret secret;
            r.SecretValue(entry, "key", secret);
            if (secret.Empty()) return;
            if (const auto problem = ValidateKeyText(secret.Reveal())) {
                r.Fail(entry["key"], problem->message);
                return;
            }
            key.sha256 = core::Sha256Hex(secret.Reveal());
        });
        if (r.String(entry, "key_sha256", text)) {
            std::string hex = text;
            std::transform(hex.begin(), hex.end(), hex.begin(),
                           [](unsigned char c) { return std::tolower(c); });
            if (hex.size() != 64 ||
                hex.find_first_not_of("0123456789abcdef") != std::string::npos) {
                r.Fail(entry["key_sha256"], "'key_sha256' must be 64 hex digits");
            } else if (!key.sha256.empty()) {
                r.Fail(entry["key_sha256"], "give either 'key' or 'key_sha256', not both");
            } else {
                key.sha256 = hex;
            }
        }
        if (!entry["key"].IsDefined() && !entry["key_sha256"].IsDefined()) {
            r.Fail(entry, "client key '" + key.name + "' needs 'key' or 'key_sha256'");
        }
        if (!key.sha256.empty() && !hashes.insert(key.sha256).second) {
            r.Fail(entry, "client key '" + key.name + "' has the same key as another");
        }
        read("rpm", [&] { r.Integer(entry, "rpm", key.rpm, -kAnyInteger, kAnyInteger); });
        read("tpm", [&] { r.Integer(entry, "tpm", key.tpm, -kAnyInteger, kAnyInteger); });
        read("slow_start_ms", [&] {
            long long ramp = 0;
            r.Integer(entry, "slow_start_ms", ramp, -kAnyInteger, kAnyInteger);
            key.slow_start = Millis(ramp);
        });
        read("monthly_budget", [&] { r.Real(entry, "monthly_budget", key.monthly_budget); });
        read("models", [&] { ReadGroupList(r, entry, "models", key.models); });
        key.lane_name = config.limits.lanes.empty() ? "" : config.limits.lanes[0].name;
        read("lane", [&] { r.String(entry, "lane", key.lane_name); });
        r.Bool(entry, "fallbacks", key.fallbacks);
        ReadRegionList(r, entry, "residency", key.residency);
        std::string mode;
        if (r.String(entry, "stream_mode", mode)) {
            key.stream_mode = ParseStreamMode(mode);
            if (!key.stream_mode) {
                r.Fail(entry["stream_mode"],
                       "'stream_mode' must be " + std::string(kStreamModeChoices));
            }
        }
        for (const ClientKeyProblem& problem : ValidateClientKey(key, config, has_group)) {
            if (unread.contains(problem.field)) continue;
            // A key given as its hash is the `key_sha256` line.
            const YAML::Node at = problem.field == "key" && !entry["key"].IsDefined()
                                      ? entry["key_sha256"]
                                      : entry[problem.field];
            r.Fail(at.IsDefined() ? at : entry, problem.message);
        }
        key.lane = config.limits.FindLane(key.lane_name).value_or(0);
        config.keys.push_back(std::move(key));
    }
}

}  // namespace

std::optional<std::size_t> LimitsConfig::FindLane(std::string_view name) const {
    for (std::size_t i = 0; i < lanes.size(); ++i) {
        if (lanes[i].name == name) return i;
    }
    return std::nullopt;
}

std::string Problem::ToString() const { return file + ":" + std::to_string(line) + ": " + message; }

const ModelGroup* Config::FindGroup(std::string_view name) const {
    for (const auto& group : models) {
        if (group.name == name) return &group;
    }
    return nullptr;
}

EnvLookup ProcessEnvironment() {
    return [](std::string_view name) -> std::optional<std::string> {
        const char* value = std::getenv(std::string(name).c_str());
        if (value == nullptr) return std::nullopt;
        return std::string(value);
    };
}

namespace {

// LoadConfigText without its guard: may throw (yaml-cpp on a node shape no reader expected,
// std::bad_alloc), which its caller turns into a problem.
void Load(std::string_view text, std::string_view file, const EnvLookup& env, LoadResult& result) {
    if (text.size() > kMaxConfigBytes) {
        result.problems.push_back(
            {std::string(file), 0, fmt::format("larger than {} MiB", kMaxConfigBytes >> 20)});
        return;
    }
    YAML::Node root;
    try {
        root = YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
        result.problems.push_back({std::string(file), e.mark.line + 1, e.msg});
        return;
    }
    // Before any reader walks it: a few aliases must not become a billion nodes to read.
    if (const std::optional<YamlOverflow> overflow = CheckYamlExpansion(root)) {
        result.problems.push_back({std::string(file), overflow->line, overflow->ToString()});
        return;
    }
    auto config = std::make_shared<Config>();
    Reader r(file, env, result.problems);
    if (!r.CheckMap(root, "the top level",
                    {"server", "timeouts", "log", "retry", "health", "alerts", "degradation",
                     "idempotency", "limits", "state", "telemetry", "keys", "models"})) {
        return;
    }
    if (root["server"]) ReadServer(r, root["server"], config->server);
    if (root["timeouts"]) ReadTimeouts(r, root["timeouts"], config->timeouts);
    if (root["log"]) ReadLog(r, root["log"], config->log);
    if (root["retry"]) ReadRetry(r, root["retry"], config->retry);
    if (root["health"]) ReadHealth(r, root["health"], config->health);
    if (root["alerts"]) ReadAlerts(r, root["alerts"], config->alerts);
    if (root["state"]) ReadState(r, root["state"], config->state);
    if (root["telemetry"]) ReadTelemetry(r, root["telemetry"], config->telemetry);
    if (root["degradation"]) ReadDegradation(r, root["degradation"], config->degradation);
    if (root["idempotency"]) ReadIdempotency(r, root["idempotency"], config->idempotency);
    if (root["models"]) {
        ReadModels(r, root["models"], config->models);
    } else {
        r.Fail(root, "missing required key 'models'");
    }
    LinkModels(r, root, *config);
    if (root["limits"]) ReadLimits(r, root["limits"], config->limits);
    if (root["keys"]) ReadKeys(r, root["keys"], *config);
    if (result.problems.empty()) result.config = std::move(config);
}

}  // namespace

LoadResult LoadConfigText(std::string_view text, std::string_view file, const EnvLookup& env) {
    LoadResult result;
    try {
        Load(text, file, env, result);
    } catch (const std::exception& e) {
        // Whatever a reader missed is a problem with the file, never an exception: a reload
        // (SIGHUP, POST /admin/reload) is then refused and the running config keeps serving.
        result.config = nullptr;
        result.problems.push_back(
            {std::string(file), 0, std::string("the config cannot be read: ") + e.what()});
    }
    return result;
}

LoadResult LoadConfigFile(const std::string& path, const EnvLookup& env) {
    LoadResult result;
    std::string text;
    try {
        std::ifstream in(path, std::ios::binary);
        if (!in) {
            result.problems.push_back({path, 0, "cannot read file"});
            return result;
        }
        // Read no further than the limit: a path such as /dev/zero never ends.
        char buffer[64 * 1024];
        while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
            text.append(buffer, static_cast<std::size_t>(in.gcount()));
            if (text.size() > kMaxConfigBytes) {
                result.problems.push_back(
                    {path, 0, fmt::format("larger than {} MiB", kMaxConfigBytes >> 20)});
                return result;
            }
        }
    } catch (const std::exception& e) {
        result.problems.push_back({path, 0, std::string("cannot read file: ") + e.what()});
        return result;
    }
    return LoadConfigText(text, path, env);
}

}  // namespace switchyard::config
