#include "config/litellm_import.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "config/litellm_importer.h"
#include "config/yaml_limits.h"
#include "core/names.h"

// Importing a LiteLLM proxy config (litellm_import.h): the entry points, the top level of the
// file and model_list. The settings are read in litellm_settings.cc, the result written in
// litellm_emit.cc (litellm_importer.h).

namespace switchyard::config {
namespace litellm {
namespace {

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

}  // namespace

std::optional<std::string> StringOf(const YAML::Node& node) {
    if (!node.IsDefined() || !node.IsScalar()) return std::nullopt;
    return node.Scalar();
}

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

LiteLlmImport Importer::Run(std::string_view text) {
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

void Importer::Unmapped(std::string_view key, std::string_view why) {
    result_.unmapped.push_back(fmt::format("{}: {}", key, why));
}

Group& Importer::GroupNamed(const std::string& name) {
    // An index, not a scan: a model_list of n groups is read in n log n.
    const auto [it, added] = group_index_.try_emplace(name, groups_.size());
    if (added) groups_.push_back({name});
    return groups_[it->second];
}

void Importer::ReadModelList(const YAML::Node& list) {
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
            Unmapped(where + ".litellm_params.model",
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

}  // namespace litellm

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
        return litellm::Importer().Run(text);
    } catch (const std::exception& e) {
        // A shape the importer did not expect (yaml-cpp throws on some node misuse), or memory:
        // an error to report, never an exception out of `check` or a reload.
        LiteLlmImport failed;
        failed.error = "cannot read the file as a LiteLLM config: " + std::string(e.what());
        return failed;
    }
}

}  // namespace switchyard::config
