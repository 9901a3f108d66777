#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "config/config_sections.h"
#include "core/json.h"
#include "core/names.h"
#include "core/url.h"

// The `models` section of a config (config_sections.h): model groups, their deployments, caches
// and output validation, and the links between groups.

namespace switchyard::config {
namespace {

// A regular file that opens for reading. Anything else is refused before it is opened: a FIFO
// would block `switchyard check` in open(), a device such as /dev/zero never ends.
bool IsReadableFile(const std::string& path) {
    std::error_code ec;
    return std::filesystem::is_regular_file(path, ec) && std::ifstream(path).good();
}

// One deployment of `group`; `where` names it in problems ("models[0].deployments[1]").
void ReadDeployment(Reader& r, const YAML::Node& node, const std::string& group,
                    const std::string& where, Deployment& out) {
    out.line = node.Mark().line + 1;
    if (!r.CheckMap(node, "deployment of '" + group + "'",
                    {"name", "provider", "model", "api_base", "api_key", "weight", "ca_file",
                     "input_price", "output_price", "batch_input_price", "batch_output_price",
                     "anthropic_version", "limits", "responses_api", "region"})) {
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
    r.Number(node, "batch_input_price", out.batch_input_price, /*allow_zero=*/true);
    r.Number(node, "batch_output_price", out.batch_output_price, /*allow_zero=*/true);
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

// `hedge: {delay: auto | MS, max_ratio: R}`.
void ReadHedge(Reader& r, const YAML::Node& node, HedgeConfig& hedge) {
    if (!r.CheckMap(node, "hedge", {"delay", "max_ratio"})) return;
    if (const YAML::Node delay = node["delay"]; delay.IsDefined() && !delay.IsNull()) {
        if (delay.IsScalar() && delay.Scalar() == "auto") {
            hedge.delay.reset();
        } else {
            Millis ms{0};
            r.Duration(node, "delay", ms);
            if (ms.count() > 0) hedge.delay = ms;
        }
    }
    if (r.Real(node, "max_ratio", hedge.max_ratio) &&
        (hedge.max_ratio <= 0 || hedge.max_ratio > 1)) {
        r.Fail(node["max_ratio"], "hedge 'max_ratio' must be greater than 0 and at most 1");
    }
}

}  // namespace

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
                         "residency", "cache", "validation", "hedge", "batch"})) {
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
        if (const YAML::Node batch = entry["batch"];
            batch && r.CheckMap(batch, "batch of '" + group.name + "'", {"mode"})) {
            std::string batch_mode;
            if (r.String(batch, "mode", batch_mode)) {
                if (batch_mode == "gateway") {
                    group.batch_mode = BatchMode::kGateway;
                } else if (batch_mode == "provider") {
                    group.batch_mode = BatchMode::kProvider;
                } else if (batch_mode == "auto") {
                    group.batch_mode = BatchMode::kAuto;
                } else {
                    r.Fail(batch["mode"], "batch 'mode' must be gateway, provider or auto");
                }
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
        if (const YAML::Node hedge = entry["hedge"]; hedge.IsDefined() && !hedge.IsNull()) {
            ReadHedge(r, hedge, group.hedge.emplace());
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

const ModelGroup* Config::FindGroup(std::string_view name) const {
    for (const auto& group : models) {
        if (group.name == name) return &group;
    }
    return nullptr;
}

}  // namespace switchyard::config
