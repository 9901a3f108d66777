#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <iterator>
#include <string>

#include "config/config_sections.h"
#include "policy/outcome.h"

// The sections of a config about failing upstreams (config_sections.h): retry and health.

namespace switchyard::config {

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
    if (!r.CheckMap(node, "health",
                    {"allowed_fails", "allowed_failure_rate", "consecutive_fails", "panic",
                     "window_ms", "cooldown_ms", "breaker"})) {
        return;
    }
    r.Integer(node, "allowed_fails", health.allowed_fails, 0, 1000);
    r.Number(node, "allowed_failure_rate", health.allowed_failure_rate, true);
    if (health.allowed_failure_rate > 1) {
        r.Fail(node["allowed_failure_rate"], "'allowed_failure_rate' must be at most 1");
    }
    r.Integer(node, "consecutive_fails", health.consecutive_fails, 0, 1000);
    r.Bool(node, "panic", health.panic);
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

}  // namespace switchyard::config
