#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/litellm_import.h"

namespace switchyard::config::litellm {

// Internal to the LiteLLM import (litellm_import.h): the importer that litellm_import.cc (the
// entry points, the top level and model_list), litellm_settings.cc (router_settings,
// litellm_settings and general_settings) and litellm_emit.cc (the Switchyard config written out)
// define between them. Not part of the config module's interface.

std::optional<std::string> StringOf(const YAML::Node& node);

// A finite number (YAML's .inf and .nan are numbers to yaml-cpp, and no setting means them).
std::optional<double> NumberOf(const YAML::Node& node);

// YAML's true and false in any of their spellings (yes, True, on, ...).
std::optional<bool> BoolOf(const YAML::Node& node);

std::optional<long long> IntegerOf(const YAML::Node& node);

struct Deployment {
    std::string provider;  // openai | anthropic
    std::string model;
    std::optional<std::string> api_base, api_key;
    std::optional<long long> rpm, tpm;
    std::optional<double> weight, order, input_price, output_price;
};

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
    LiteLlmImport Run(std::string_view text);

  private:
    // litellm_import.cc
    void Unmapped(std::string_view key, std::string_view why);

    Group& GroupNamed(const std::string& name);

    void ReadModelList(const YAML::Node& list);

    // litellm_settings.cc
    // [{"group": ["a", "b"]}, ...]
    void ReadFallbacks(const YAML::Node& list, const std::string& key,
                       std::vector<std::string> Group::*field);

    // The setting `key` stands for when both sections may give it (`timeout` and
    // `request_timeout` are one), or nullopt. The cache is litellm_settings' alone.
    static std::optional<std::string_view> SharedSetting(std::string_view key);

    // A scalar as the report shows it (" (30)"); nothing for a list or a mapping.
    static std::string Shown(const YAML::Node& value);

    // Whether the value at `where` is the one taken for `setting`: the first read is (Run reads
    // router_settings first). A later one is reported as ignored, naming the one taken.
    bool Take(std::string_view setting, const std::string& where, const YAML::Node& value);

    void ReadSettings(const YAML::Node& settings, const std::string& section);

    // litellm_settings.cache and cache_params, once both sections are read: which groups get a
    // `cache` and with what TTL. Switchyard's cache answers exact repeats from each replica's
    // memory (docs/answers.md#response-cache); what LiteLLM's cache does beyond that is reported.
    void ReadCache();

    void ReadRetryPolicy(const YAML::Node& policy, const std::string& where);

    void ReadStrategy(const std::string& name, const std::string& where);

    void ReadGeneral(const YAML::Node& general);

    // litellm_emit.cc
    void EmitRetry(YAML::Emitter& out);

    void Emit();

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

}  // namespace switchyard::config::litellm
