#include "config/litellm_import.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "config/yaml_limits.h"
#include "core/names.h"

namespace switchyard::config {
namespace {

// LiteLLM's own defaults where a config is silent (router: allowed_fails 3 per minute, cooldown
// 5 s), so an imported config behaves as it did there.
constexpr int kLiteLlmAllowedFails = 3;
constexpr int kLiteLlmCooldownSeconds = 5;
// The longest a Switchyard group's cache keeps an answer (cache.ttl_s).
constexpr long long kMaxCacheTtlSeconds = 30LL * 24 * 3600;

std::optional<std::string> StringOf(const YAML::Node& node) {
    if (!node.IsDefined() || !node.IsScalar()) return std::nullopt;
    return node.Scalar();
}

// A finite number (YAML's .inf and .nan are numbers to yaml-cpp, and no setting means them).
std::optional<double> NumberOf(const YAML::Node& node) {
    if (!node.IsDefined() || !node.IsScalar()) return std::nullopt;
    try {
        const double value = node.as<double>();
        if (!std::isfinite(value)) return std::nullopt;
        return value;
    } catch (const YAML::Exception&) {
        return std::nullopt;
    }
}

// YAML's true and false in any of their spellings (yes, True, on, ...).
std::optional<bool> BoolOf(const YAML::Node& node) {
    if (!node.IsDefined() || !node.IsScalar()) return std::nullopt;
    try {
        return node.as<bool>();
    } catch (const YAML::Exception&) {
        return std::nullopt;
    }
}

std::optional<long long> IntegerOf(const YAML::Node& node) {
    const auto number = NumberOf(node);
    if (!number || *number < 0 || std::floor(*number) != *number || *number > 1e15) {
        return std::nullopt;
    }
    return static_cast<long long>(*number);
}

struct Deployment {
    std::string provider;  // openai | anthropic
    std::string model;
    std::optional<std::string> api_base, api_key;
    std::optional<long long> rpm, tpm;
    std::optional<double> weight, order, input_price, output_price;
};

// LiteLLM calls Anthropic at {api_base}/v1/messages, unless api_base already ends in /v1/messages;
// a Switchyard Anthropic deployment calls {api_base}/messages. So an origin such as
// https://api.anthropic.com gains /v1, a full endpoint loses /messages, and a base that already
// ends in /v1 is kept. (OpenAI-compatible bases need nothing: LiteLLM, like Switchyard, appends
// /chat/completions to them as written.)
std::string AnthropicApiBase(std::string base) {
    while (base.ends_with('/')) base.pop_back();
    if (base.ends_with("/v1/messages")) return base.substr(0, base.size() - 9);
    if (base.ends_with("/v1")) return base;
    return base + "/v1";
}

struct Group {
    std::string name;
    bool embeddings = false;
    std::vector<Deployment> deployments;
    std::vector<std::string> fallbacks, context_window_fallbacks, content_policy_fallbacks;
};

// LiteLLM's response cache, as far as a group's `cache` can carry it.
struct CacheSettings {
    bool chat = true;        // cache_params.supported_call_types names a chat completion type
    bool embeddings = true;  // ... an embedding type
    std::optional<long long> ttl_seconds;
};

class Importer {
  public:
    LiteLlmImport Run(std::string_view text) {
        YAML::Node root;
        try {
            root = YAML::Load(std::string(text));
        } catch (const YAML::Exception& e) {
            result_.error = "not YAML: " + std::string(e.what());
            return result_;
        }
        if (const std::optional<YamlOverflow> overflow = CheckYamlExpansion(root)) {
            result_.error = fmt::format("line {}: {}", overflow->line, overflow->ToString());
            return result_;
        }
        if (!root.IsMap()) {
            result_.error = "a LiteLLM config is a YAML mapping";
            return result_;
        }
        std::optional<YAML::Node> router_settings, litellm_settings;
        for (const auto& entry : root) {
            const std::string key = entry.first.Scalar();
            if (key == "model_list") {
                ReadModelList(entry.second);
            } else if (key == "router_settings" || key == "litellm_settings") {
                auto& section = key == "router_settings" ? router_settings : litellm_settings;
                if (section) Unmapped(key, "given twice: only the last one is read");
                section.emplace(entry.second);
            } else if (key == "general_settings") {
                ReadGeneral(entry.second);
            } else {
                Unmapped(key, "not a setting Switchyard has");
            }
        }
        // LiteLLM's Router takes each setting from its own arguments (router_settings) and from
        // litellm_settings only where those are silent: read in that order, whatever the file's.
        if (router_settings) ReadSettings(*router_settings, "router_settings");
        if (litellm_settings) ReadSettings(*litellm_settings, "litellm_settings");
        ReadCache();
        Emit();
        return result_;
    }

  private:
    void Unmapped(std::string_view key, std::string_view why) {
        result_.unmapped.push_back(fmt::format("{}: {}", key, why));
    }

    Group& GroupNamed(const std::string& name) {
        // An index, not a scan: a model_list of n groups is read in n log n.
        const auto [it, added] = group_index_.try_emplace(name, groups_.size());
        if (added) groups_.push_back({name});
        return groups_[it->second];
    }

    void ReadModelList(const YAML::Node& list) {
        if (!list.IsSequence()) {
            Unmapped("model_list", "not a list");
            return;
        }
        for (std::size_t i = 0; i < list.size(); ++i) {
            const YAML::Node entry = list[i];
            const std::string where = fmt::format("model_list[{}]", i);
            if (!entry.IsMap()) {
                Unmapped(where, "not a mapping");
                continue;
            }
            const auto name = StringOf(entry["model_name"]);
            if (!name) {
                Unmapped(where, "no model_name");
                continue;
            }
            const YAML::Node params = entry["litellm_params"];
            if (!params.IsDefined() || !params.IsMap()) {
                Unmapped(where, "no litellm_params mapping");
                continue;
            }
            const auto model = StringOf(params["model"]);
            if (!model) {
                Unmapped(where, "no litellm_params.model");
                continue;
            }
            Deployment d;
            const std::size_t slash = model->find('/');
            const std::string prefix = slash == std::string::npos ? "" : model->substr(0, slash);
            d.model = slash == std::string::npos ? *model : model->substr(slash + 1);
            if (prefix == "openai" || prefix == "openai_compatible" || prefix == "hosted_vllm" ||
                (prefix.empty() && !model->starts_with("claude"))) {
                d.provider = "openai";
            } else if (prefix == "anthropic" || (prefix.empty() && model->starts_with("claude"))) {
                d.provider = "anthropic";
            } else {
                Unmapped(
                    where + ".litellm_params.model",
                    fmt::format("provider '{}' is not one Switchyard speaks (OpenAI-compatible "
                                "or Anthropic)",
                                prefix));
                continue;
            }
            for (const auto& p : params) {
                const std::string key = p.first.Scalar();
                const YAML::Node& v = p.second;
                if (key == "model") continue;
                if (key == "api_base") {
                    d.api_base = StringOf(v);
                    if (d.api_base && d.api_base->starts_with("os.environ/")) {
                        Unmapped(where + ".litellm_params.api_base",
                                 "read from the environment by LiteLLM; Switchyard's api_base "
                                 "is a URL written in the config");
                    } else if (d.api_base && d.provider == "anthropic") {
                        d.api_base = AnthropicApiBase(*d.api_base);
                    }
                } else if (key == "api_key") {
                    d.api_key = StringOf(v);
                } else if (key == "rpm") {
                    d.rpm = IntegerOf(v);
                } else if (key == "tpm") {
                    d.tpm = IntegerOf(v);
                } else if (key == "weight") {
                    d.weight = NumberOf(v);
                } else if (key == "order") {
                    d.order = NumberOf(v);
                } else if (key == "input_cost_per_token") {
                    d.input_price = NumberOf(v);
                } else if (key == "output_cost_per_token") {
                    d.output_price = NumberOf(v);
                } else {
                    Unmapped(where + ".litellm_params." + key,
                             "a per-deployment setting Switchyard has no counterpart for");
                }
            }
            bool embeddings = false;
            if (const YAML::Node info = entry["model_info"]; info.IsDefined() && info.IsMap()) {
                for (const auto& p : info) {
                    const std::string key = p.first.Scalar();
                    if (key == "mode") {
                        const auto mode = StringOf(p.second).value_or("chat");
                        if (mode == "embedding") {
                            embeddings = true;
                        } else if (mode != "chat") {
                            Unmapped(where + ".model_info.mode",
                                     "only chat and embedding models are served");
                        }
                    } else if (key == "input_cost_per_token") {
                        d.input_price = NumberOf(p.second);
                    } else if (key == "output_cost_per_token") {
                        d.output_price = NumberOf(p.second);
                    } else {
                        Unmapped(where + ".model_info." + key, "informational; not used");
                    }
                }
            }
            Group& group = GroupNamed(*name);
            group.embeddings = group.embeddings || embeddings;
            group.deployments.push_back(std::move(d));
        }
    }

    // [{"group": ["a", "b"]}, ...]
    void ReadFallbacks(const YAML::Node& list, const std::string& key,
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

    // The setting `key` stands for when both sections may give it (`timeout` and
    // `request_timeout` are one), or nullopt. The cache is litellm_settings' alone.
    static std::optional<std::string_view> SharedSetting(std::string_view key) {
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

    // A scalar as the report shows it (" (30)"); nothing for a list or a mapping.
    static std::string Shown(const YAML::Node& value) {
        if (!value.IsScalar()) return "";
        const std::string& text = value.Scalar();
        return " (" + core::Printable(text.substr(0, 40)) + (text.size() > 40 ? "...)" : ")");
    }

    // Whether the value at `where` is the one taken for `setting`: the first read is (Run reads
    // router_settings first). A later one is reported as ignored, naming the one taken.
    bool Take(std::string_view setting, const std::string& where, const YAML::Node& value) {
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

    void ReadSettings(const YAML::Node& settings, const std::string& section) {
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

    // litellm_settings.cache and cache_params, once both sections are read: which groups get a
    // `cache` and with what TTL. Switchyard's cache answers exact repeats from each replica's
    // memory (docs/answers.md#response-cache); what LiteLLM's cache does beyond that is reported.
    void ReadCache() {
        const std::string where = "litellm_settings.cache_params";
        if (!cache_enabled_) {
            if (cache_params_)
                Unmapped(where, "litellm_settings.cache is not true: nothing cached");
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

    void ReadRetryPolicy(const YAML::Node& policy, const std::string& where) {
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
                    Unmapped(
                        where + "." + key,
                        "Switchyard never retries a request the provider refused as malformed, "
                        "unauthorised or against its content policy");
                }
            } else {
                Unmapped(where + "." + key, "no error class of that name");
            }
        }
    }

    void ReadStrategy(const std::string& name, const std::string& where) {
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

    void ReadGeneral(const YAML::Node& general) {
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

    void EmitRetry(YAML::Emitter& out) {
        // LiteLLM: each error class may be retried its own number of times (retry_policy, else
        // num_retries) on a group, then its fallbacks get the same. Switchyard: class_retries per
        // class, num_retries the most any class may take on one group.
        static const char* kClasses[] = {"rate_limited", "overloaded", "server_error",
                                         "timeout",      "connection", "retryable_client",
                                         "protocol"};
        const std::optional<long long> fallback_retries =
            default_retries_ ? default_retries_ : num_retries_;
        std::map<std::string, long long> retries = class_retries_;
        if (fallback_retries) {
            for (const char* c : kClasses) retries.emplace(c, *fallback_retries);
        }
        if (retries.empty() && !num_retries_) return;
        // Within Switchyard's bounds (num_retries 20, max_attempts 100) before multiplying, so
        // that no count in the file can overflow the product.
        long long most = std::min<long long>(num_retries_.value_or(0), 20);
        for (const auto& [c, n] : retries) most = std::max(most, std::min<long long>(n, 20));
        std::size_t longest_chain = 1;
        for (const Group& g : groups_) {
            longest_chain = std::max(longest_chain, 1 + g.fallbacks.size());
        }
        longest_chain = std::min<std::size_t>(longest_chain, 100);
        out << YAML::Key << "retry" << YAML::Value << YAML::BeginMap;
        out << YAML::Key << "num_retries" << YAML::Value << most;
        out << YAML::Key << "max_attempts" << YAML::Value
            << std::min<long long>(100, (1 + most) * static_cast<long long>(longest_chain));
        if (!retries.empty()) {
            out << YAML::Key << "class_retries" << YAML::Value << YAML::Flow << YAML::BeginMap;
            for (const auto& [c, n] : retries) {
                out << YAML::Key << c << YAML::Value << std::min<long long>(n, 20);
            }
            out << YAML::EndMap;
        }
        out << YAML::EndMap;
    }

    void Emit() {
        YAML::Emitter out;
        out << YAML::Comment("Imported from a LiteLLM proxy config by `switchyard import litellm`");
        out << YAML::BeginMap;
        if (master_key_) {
            out << YAML::Key << "server" << YAML::Value << YAML::BeginMap << YAML::Key
                << "master_key" << YAML::Value << *master_key_ << YAML::EndMap;
        }
        if (timeout_seconds_ && *timeout_seconds_ > 0) {
            // Capped where llround cannot overflow; the loader refuses anything past a day.
            const long long ms = std::llround(std::min(*timeout_seconds_, 1e9) * 1000);
            out << YAML::Key << "timeouts" << YAML::Value << YAML::Flow << YAML::BeginMap
                << YAML::Key << "total_ms" << YAML::Value << ms << YAML::EndMap;
        }
        EmitRetry(out);
        out << YAML::Key << "health" << YAML::Value << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "allowed_fails" << YAML::Value
            << allowed_fails_.value_or(kLiteLlmAllowedFails);
        out << YAML::Key << "window_ms" << YAML::Value << 60000;  // LiteLLM counts per minute
        out << YAML::Key << "cooldown_ms" << YAML::Value
            << std::max<long long>(
                   1, std::llround(std::clamp(cooldown_seconds_.value_or(kLiteLlmCooldownSeconds),
                                              0.0, 1e9) *
                                   1000));
        out << YAML::EndMap;
        out << YAML::Key << "models" << YAML::Value << YAML::BeginSeq;
        for (Group& g : groups_) {
            if (g.deployments.empty()) {
                Unmapped("model group " + g.name,
                         "named in the settings but not in model_list: it has no deployments");
            }
            const bool ordered = std::any_of(g.deployments.begin(), g.deployments.end(),
                                             [](const Deployment& d) { return d.order; });
            if (ordered) {
                std::stable_sort(g.deployments.begin(), g.deployments.end(),
                                 [](const Deployment& a, const Deployment& b) {
                                     return a.order.value_or(1e18) < b.order.value_or(1e18);
                                 });
            }
            out << YAML::BeginMap;
            out << YAML::Key << "name" << YAML::Value << g.name;
            if (g.embeddings) out << YAML::Key << "mode" << YAML::Value << "embeddings";
            if (ordered) {
                out << YAML::Key << "strategy" << YAML::Value << "priority";
            } else if (strategy_) {
                out << YAML::Key << "strategy" << YAML::Value << *strategy_;
            }
            if (cache_ && (g.embeddings ? cache_->embeddings : cache_->chat)) {
                // LiteLLM answers every exact repeat from its cache: `serve: always`.
                out << YAML::Key << "cache" << YAML::Value << YAML::Flow << YAML::BeginMap;
                out << YAML::Key << "serve" << YAML::Value << "always";
                if (cache_->ttl_seconds) {
                    out << YAML::Key << "ttl_s" << YAML::Value << *cache_->ttl_seconds;
                }
                out << YAML::EndMap;
            }
            out << YAML::Key << "deployments" << YAML::Value << YAML::BeginSeq;
            for (const Deployment& d : g.deployments) {
                out << YAML::Flow << YAML::BeginMap;
                out << YAML::Key << "provider" << YAML::Value << d.provider;
                out << YAML::Key << "model" << YAML::Value << d.model;
                if (d.api_base) out << YAML::Key << "api_base" << YAML::Value << *d.api_base;
                if (d.api_key) out << YAML::Key << "api_key" << YAML::Value << *d.api_key;
                if (d.weight) out << YAML::Key << "weight" << YAML::Value << *d.weight;
                // LiteLLM prices are per token; Switchyard's per million tokens.
                if (d.input_price)
                    out << YAML::Key << "input_price" << YAML::Value << *d.input_price * 1e6;
                if (d.output_price)
                    out << YAML::Key << "output_price" << YAML::Value << *d.output_price * 1e6;
                if (d.rpm || d.tpm) {
                    out << YAML::Key << "limits" << YAML::Value << YAML::BeginMap;
                    if (d.rpm) out << YAML::Key << "rpm" << YAML::Value << *d.rpm;
                    if (d.tpm) {
                        // OpenAI's TPM; Anthropic counts input tokens per minute against it.
                        out << YAML::Key << (d.provider == "anthropic" ? "itpm" : "tpm")
                            << YAML::Value << *d.tpm;
                    }
                    out << YAML::EndMap;
                }
                out << YAML::EndMap;
            }
            out << YAML::EndSeq;
            const std::pair<const char*, const std::vector<std::string>*> lists[] = {
                {"fallbacks", &g.fallbacks},
                {"context_window_fallbacks", &g.context_window_fallbacks},
                {"content_policy_fallbacks", &g.content_policy_fallbacks}};
            for (const auto& [key, list] : lists) {
                if (list->empty()) continue;
                out << YAML::Key << key << YAML::Value << YAML::Flow << *list;
            }
            out << YAML::EndMap;
        }
        out << YAML::EndSeq;
        out << YAML::EndMap;
        result_.yaml = std::string(out.c_str()) + "\n";
    }

    LiteLlmImport result_;
    std::vector<Group> groups_;
    std::map<std::string, std::size_t> group_index_;  // name -> position in groups_
    std::optional<long long> num_retries_, allowed_fails_, default_retries_;
    std::optional<double> cooldown_seconds_, timeout_seconds_;
    std::map<std::string, long long> class_retries_;
    std::optional<std::string> strategy_;
    std::optional<std::string> master_key_;
    // Per shared setting, the value taken: where it was, and as shown.
    std::map<std::string, std::pair<std::string, std::string>> taken_;
    bool cache_enabled_ = false;
    std::optional<YAML::Node> cache_params_;
    std::optional<CacheSettings> cache_;  // set: the groups it covers get a `cache`
};

}  // namespace

bool LooksLikeLiteLlm(std::string_view text) {
    // Larger than any config: LoadConfigText refuses it with its own problem.
    if (text.size() > kMaxConfigBytes) return false;
    try {
        const YAML::Node root = YAML::Load(std::string(text));
        if (!root.IsMap() || root["models"].IsDefined()) return false;
        return root["model_list"].IsDefined() || root["router_settings"].IsDefined() ||
               root["litellm_settings"].IsDefined();
    } catch (const std::exception&) {
        return false;
    }
}

LiteLlmImport ImportLiteLlm(std::string_view text) {
    if (text.size() > kMaxConfigBytes) {
        LiteLlmImport failed;
        failed.error = fmt::format("larger than {} MiB", kMaxConfigBytes >> 20);
        return failed;
    }
    try {
        return Importer().Run(text);
    } catch (const std::exception& e) {
        // A shape the importer did not expect (yaml-cpp throws on some node misuse), or memory:
        // an error to report, never an exception out of `check` or a reload.
        LiteLlmImport failed;
        failed.error = "cannot read the file as a LiteLLM config: " + std::string(e.what());
        return failed;
    }
}

}  // namespace switchyard::config
