#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "config/client_key.h"
#include "config/config_sections.h"
#include "core/sha256.h"

// The `limits` and `keys` sections of a config (config_sections.h): lanes and client keys.

namespace switchyard::config {
namespace {

constexpr std::size_t kMaxLanes = 64;

}  // namespace

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

std::optional<std::size_t> LimitsConfig::FindLane(std::string_view name) const {
    for (std::size_t i = 0; i < lanes.size(); ++i) {
        if (lanes[i].name == name) return i;
    }
    return std::nullopt;
}

}  // namespace switchyard::config
