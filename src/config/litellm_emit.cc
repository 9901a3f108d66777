#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/litellm_importer.h"

// The LiteLLM import's output (litellm_importer.h): the Switchyard config, written as YAML.

namespace switchyard::config::litellm {
namespace {

// LiteLLM's own defaults where a config is silent (router: allowed_fails 3 per minute, cooldown
// 5 s), so an imported config behaves as it did there.
constexpr int kLiteLlmAllowedFails = 3;
constexpr int kLiteLlmCooldownSeconds = 5;

}  // namespace

void Importer::EmitRetry(YAML::Emitter& out) {
    // LiteLLM: each error class may be retried its own number of times (retry_policy, else
    // num_retries) on a group, then its fallbacks get the same. Switchyard: class_retries per
    // class, num_retries the most any class may take on one group.
    static const char* kClasses[] = {"rate_limited", "overloaded",       "server_error", "timeout",
                                     "connection",   "retryable_client", "protocol"};
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

void Importer::Emit() {
    YAML::Emitter out;
    out << YAML::Comment("Imported from a LiteLLM proxy config by `switchyard import litellm`");
    out << YAML::BeginMap;
    if (master_key_) {
        out << YAML::Key << "server" << YAML::Value << YAML::BeginMap << YAML::Key << "master_key"
            << YAML::Value << *master_key_ << YAML::EndMap;
    }
    if (timeout_seconds_ && *timeout_seconds_ > 0) {
        // Capped where llround cannot overflow; the loader refuses anything past a day.
        const long long ms = std::llround(std::min(*timeout_seconds_, 1e9) * 1000);
        out << YAML::Key << "timeouts" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
            << "total_ms" << YAML::Value << ms << YAML::EndMap;
    }
    EmitRetry(out);
    out << YAML::Key << "health" << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "allowed_fails" << YAML::Value
        << allowed_fails_.value_or(kLiteLlmAllowedFails);
    out << YAML::Key << "window_ms" << YAML::Value << 60000;  // LiteLLM counts per minute
    out << YAML::Key << "cooldown_ms" << YAML::Value
        << std::max<long long>(
               1, std::llround(
                      std::clamp(cooldown_seconds_.value_or(kLiteLlmCooldownSeconds), 0.0, 1e9) *
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
                    out << YAML::Key << (d.provider == "anthropic" ? "itpm" : "tpm") << YAML::Value
                        << *d.tpm;
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

}  // namespace switchyard::config::litellm
