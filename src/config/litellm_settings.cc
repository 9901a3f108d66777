#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "config/litellm_importer.h"
#include "core/names.h"

// The LiteLLM import's settings (litellm_importer.h): router_settings and litellm_settings
// (retries, health, fallbacks, timeout, routing strategy, the response cache) and
// general_settings.

namespace switchyard::config::litellm {
namespace {

// The longest a Switchyard group's cache keeps an answer (cache.ttl_s).
constexpr long long kMaxCacheTtlSeconds = 30LL * 24 * 3600;

}  // namespace

void Importer::ReadFallbacks(const YAML::Node& list, const std::string& key,
                             std::vector<std::string> Group::*field) {
    if (!list.IsSequence()) {
        Unmapped(key, "not a list of {group: [fallbacks]}");
        return;
    }
    for (const auto& item : list) {
        if (!item.IsMap()) {
            Unmapped(key, "an entry is not a {group: [fallbacks]} mapping");
            continue;
        }
        for (const auto& pair : item) {
            Group& group = GroupNamed(pair.first.Scalar());
            if (pair.second.IsSequence()) {
                for (const auto& target : pair.second) {
                    (group.*field).push_back(target.Scalar());
                }
            } else if (pair.second.IsScalar()) {
                (group.*field).push_back(pair.second.Scalar());
            }
        }
    }
}

std::optional<std::string_view> Importer::SharedSetting(std::string_view key) {
    static constexpr std::string_view kShared[] = {"num_retries",
                                                   "allowed_fails",
                                                   "cooldown_time",
                                                   "retry_policy",
                                                   "retry_after",
                                                   "fallbacks",
                                                   "routing_strategy",
                                                   "context_window_fallbacks",
                                                   "content_policy_fallbacks"};
    if (key == "timeout" || key == "request_timeout") return "timeout";
    const auto it = std::find(std::begin(kShared), std::end(kShared), key);
    if (it == std::end(kShared)) return std::nullopt;
    return *it;
}

std::string Importer::Shown(const YAML::Node& value) {
    if (!value.IsScalar()) return "";
    const std::string& text = value.Scalar();
    return " (" + core::Printable(text.substr(0, 40)) + (text.size() > 40 ? "...)" : ")");
}

bool Importer::Take(std::string_view setting, const std::string& where, const YAML::Node& value) {
    const auto [it, first] = taken_.try_emplace(std::string(setting), where, Shown(value));
    if (first) return true;
    const auto& [taken_where, taken_value] = it->second;
    const bool same_section =
        taken_where.substr(0, taken_where.find('.')) == where.substr(0, where.find('.'));
    Unmapped(where, fmt::format("ignored{}: {}{} is taken instead{}", Shown(value), taken_where,
                                taken_value,
                                same_section ? ""
                                             : ", as LiteLLM's Router gives router_settings "
                                               "precedence over litellm_settings"));
    return false;
}

void Importer::ReadSettings(const YAML::Node& settings, const std::string& section) {
    if (!settings.IsMap()) {
        Unmapped(section, "not a mapping");
        return;
    }
    for (const auto& entry : settings) {
        const std::string key = entry.first.Scalar();
        const std::string where = section + "." + key;
        const YAML::Node& v = entry.second;
        if (const auto setting = SharedSetting(key); setting && !Take(*setting, where, v)) {
            continue;
        }
        if (key == "num_retries") {
            num_retries_ = IntegerOf(v);
        } else if (key == "allowed_fails") {
            allowed_fails_ = IntegerOf(v);
        } else if (key == "cooldown_time") {
            cooldown_seconds_ = NumberOf(v);
        } else if (key == "retry_policy") {
            ReadRetryPolicy(v, where);
        } else if (key == "fallbacks") {
            ReadFallbacks(v, where, &Group::fallbacks);
        } else if (key == "context_window_fallbacks") {
            ReadFallbacks(v, where, &Group::context_window_fallbacks);
        } else if (key == "content_policy_fallbacks") {
            ReadFallbacks(v, where, &Group::content_policy_fallbacks);
        } else if (key == "timeout" || key == "request_timeout") {
            timeout_seconds_ = NumberOf(v);
        } else if (key == "routing_strategy") {
            ReadStrategy(StringOf(v).value_or(""), where);
        } else if (key == "enable_pre_call_checks") {
            Unmapped(where,
                     "Switchyard has no pre-call input-size check; a context-window error from "
                     "the provider moves the request to context_window_fallbacks, with no "
                     "setting needed");
        } else if (section == "litellm_settings" && key == "cache") {
            cache_enabled_ = BoolOf(v).value_or(false);
        } else if (section == "litellm_settings" && key == "cache_params") {
            cache_params_.emplace(v);
        } else {
            Unmapped(where, "no counterpart in Switchyard");
        }
    }
}

void Importer::ReadCache() {
    const std::string where = "litellm_settings.cache_params";
    if (!cache_enabled_) {
        if (cache_params_) Unmapped(where, "litellm_settings.cache is not true: nothing cached");
        return;
    }
    CacheSettings cache;
    std::string type = "redis";  // the LiteLLM proxy's store when cache_params names none
    bool on_request_only = false;
    if (cache_params_ && !cache_params_->IsMap()) {
        Unmapped(where, "not a mapping");
    } else if (cache_params_) {
        for (const auto& entry : *cache_params_) {
            const std::string key = entry.first.Scalar();
            const YAML::Node& v = entry.second;
            if (key == "type") {
                type = StringOf(v).value_or("");
            } else if (key == "ttl") {
                const auto ttl = NumberOf(v);
                if (!ttl || *ttl <= 0) {
                    Unmapped(where + ".ttl", "not a positive number of seconds");
                } else if (*ttl > kMaxCacheTtlSeconds) {
                    cache.ttl_seconds = kMaxCacheTtlSeconds;
                    Unmapped(where + ".ttl", "longer than Switchyard keeps an answer: 30 days");
                } else {
                    cache.ttl_seconds = std::max<long long>(1, std::llround(*ttl));
                }
            } else if (key == "mode") {
                on_request_only = StringOf(v).value_or("") == "default_off";
            } else if (key == "supported_call_types" && !v.IsSequence()) {
                Unmapped(where + "." + key, "not a list");
            } else if (key == "supported_call_types") {
                cache.chat = cache.embeddings = false;
                for (const auto& type_name : v) {
                    const std::string name = type_name.Scalar();
                    cache.chat = cache.chat || name == "completion" || name == "acompletion";
                    cache.embeddings =
                        cache.embeddings || name == "embedding" || name == "aembedding";
                }
            } else {
                Unmapped(where + "." + key,
                         "no counterpart: Switchyard's cache is in each replica's memory");
            }
        }
    }
    if (on_request_only) {
        Unmapped(where + ".mode",
                 "default_off (caching only for requests that ask for it) "
                 "has no counterpart: the group caches are left off");
        return;
    }
    if (!cache.chat && !cache.embeddings) {
        Unmapped(where + ".supported_call_types",
                 "names no chat completion or embedding call: nothing cached");
        return;
    }
    if (type == "redis-semantic" || type == "qdrant-semantic") {
        Unmapped(where + ".type",
                 "semantic caching has no counterpart: only exact repeats "
                 "are answered from the cache");
    } else if (type != "local") {
        Unmapped(where + ".type",
                 fmt::format("'{}': Switchyard keeps each group's answers in the memory of "
                             "each replica; there is no shared cache store",
                             core::Printable(type)));
    }
    if (!cache.ttl_seconds) {
        Unmapped(where + ".ttl",
                 "not set: the group caches keep an answer for their default ttl_s, 3600 s");
    }
    Unmapped("litellm_settings.cache",
             "Switchyard keeps a group's answers per client key; `shared: true` in a group's "
             "cache shares them between keys");
    cache_ = cache;
}

void Importer::ReadRetryPolicy(const YAML::Node& policy, const std::string& where) {
    if (!policy.IsMap()) {
        Unmapped(where, "not a mapping");
        return;
    }
    for (const auto& entry : policy) {
        const std::string key = entry.first.Scalar();
        const auto retries = IntegerOf(entry.second);
        if (!retries) {
            Unmapped(where + "." + key, "not a whole number");
            continue;
        }
        if (key == "RateLimitErrorRetries") {
            class_retries_["rate_limited"] = *retries;
        } else if (key == "TimeoutErrorRetries") {
            class_retries_["timeout"] = *retries;
        } else if (key == "InternalServerErrorRetries") {
            class_retries_["server_error"] = *retries;
            class_retries_["overloaded"] = *retries;
        } else if (key == "DefaultRetries") {
            default_retries_ = *retries;
        } else if (key == "BadRequestErrorRetries" || key == "AuthenticationErrorRetries" ||
                   key == "ContentPolicyViolationErrorRetries") {
            // Switchyard never retries these unchanged (the request itself is wrong; content
            // refusals go to content_policy_fallbacks): 0 is what it does already.
            if (*retries != 0) {
                Unmapped(where + "." + key,
                         "Switchyard never retries a request the provider refused as malformed, "
                         "unauthorised or against its content policy");
            }
        } else {
            Unmapped(where + "." + key, "no error class of that name");
        }
    }
}

void Importer::ReadStrategy(const std::string& name, const std::string& where) {
    static const std::map<std::string, std::string> kStrategies = {
        {"simple-shuffle", "weighted"},
        {"least-busy", "least_in_flight"},
        {"latency-based-routing", "lowest_latency"},
        {"cost-based-routing", "cheapest"}};
    if (const auto it = kStrategies.find(name); it != kStrategies.end()) {
        strategy_ = it->second;
    } else if (name.starts_with("usage-based-routing")) {
        strategy_ = "weighted";
        Unmapped(where,
                 "usage-based routing becomes weighted routing; Switchyard keeps each "
                 "deployment within its rpm/tpm by self-throttling on its headroom");
    } else {
        Unmapped(where, "unknown routing strategy '" + name + "'");
    }
}

void Importer::ReadGeneral(const YAML::Node& general) {
    if (!general.IsMap()) {
        Unmapped("general_settings", "not a mapping");
        return;
    }
    for (const auto& entry : general) {
        const std::string key = entry.first.Scalar();
        if (key == "master_key") {
            master_key_ = StringOf(entry.second);
        } else {
            Unmapped("general_settings." + key, "no counterpart in Switchyard");
        }
    }
}

}  // namespace switchyard::config::litellm
