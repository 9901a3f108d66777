#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace switchyard::config {

// A LiteLLM proxy config turned into a Switchyard one (docs/litellm.md has the whole mapping).
struct LiteLlmImport {
    std::string yaml;  // the Switchyard config, ready for LoadConfigText
    // Every setting that was not carried over, each as "key: why".
    std::vector<std::string> unmapped;
    // A reason the file cannot be imported at all (not YAML, not a mapping); empty otherwise.
    std::string error;
};

// Whether `text` looks like a LiteLLM proxy config rather than a Switchyard one: a YAML mapping
// with `model_list`, `router_settings` or `litellm_settings` at the top and no `models`.
bool LooksLikeLiteLlm(std::string_view text);

// Maps a LiteLLM proxy config: `model_list` entries become deployments of the group named by
// `model_name` (`litellm_params.model` "openai/…", "anthropic/…" or a bare OpenAI model;
// api_base, an Anthropic one ending in /v1; api_key, rpm, tpm, weight, order; model_info.mode and
// prices); `router_settings` and `litellm_settings` give retries (num_retries, retry_policy per
// error class), health (allowed_fails per minute, cooldown_time), fallbacks of the three kinds,
// timeout and the routing strategy, router_settings first where both do (as LiteLLM's Router);
// `litellm_settings.cache` and `cache_params` the groups' response caches;
// `general_settings.master_key` the master key. Pure: no environment is read (`os.environ/NAME`
// stays a reference). A file past the bounds of config/yaml_limits.h is an error. The result may
// still need a human (a group without deployments, say): load it to see.
LiteLlmImport ImportLiteLlm(std::string_view text);

}  // namespace switchyard::config
